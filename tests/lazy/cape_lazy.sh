#!/usr/bin/env bash
# `cape` with --sync lazy added to `cape run` (tests/lazy: the contract tests' run.sh under
# lazy). The real cape is $CAPE_REAL.
if [ "${1:-}" = run ]; then shift; exec "$CAPE_REAL" run --sync lazy "$@"; fi
exec "$CAPE_REAL" "$@"
