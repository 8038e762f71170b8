#!/usr/bin/env bash
# End-to-end check of one OpenMP program (tests/omp/): built with `gcc -fopenmp` and with
# cape-cc, run natively with OMP_NUM_THREADS=N and on N CAPE nodes; outputs must be equal.
#   e2e.sh CAPE_CC CAPE PROGRAM.c [N [CAPE_CC_FLAGS...]]
# --threads-per-node=K (with --model=mt): native runs N*K threads, `cape run` K per node.
# --tracker=T: `cape run --tracker T`. --sync=S: `cape run --sync S` (docs/monitor.md).
# --args="A B": the program's arguments (natively and under cape).
# --omp-threads=T: OMP_NUM_THREADS=T in both runs' environments (native and every node).
# --strict (among the flags): also fail when a node logs a conflict or a variable written
# with different values by two nodes (issue 12: NPB CG's `wait_for("after"): 1 ranges written
# differently` on a stack word; since issue 17 `cape: warning: ... written with different values`).
# The CAPE run uses `cape run -n N` when that subcommand exists, else N `cape node`
# processes on loopback (the same thing `cape run` starts). Exit 77 (skip) only when the
# `cape` binary itself is missing.
set -euo pipefail
# A step that fails under `set -e` says which (a silent exit left a failure unexplained).
trap 'echo "FAIL: e2e.sh line $LINENO: \`$BASH_COMMAND\` exited with status $?" >&2' ERR
cc=$1 cape=$2 src=$3 n=${4:-3}
shift 4 2>/dev/null || shift $#
# -D/-I go to both compilers, -l to both links; --tolerance=X as `e2e-tolerance: X` in the source.
flags=() native_flags=() libs=() tol_arg= strict= per_node=1 run_flags=() prog_args=() omp_threads=
for f in "$@"; do
  case $f in
    --strict) strict=1 ;;
    --threads-per-node=*) per_node=${f#--threads-per-node=}; run_flags+=(--threads-per-node "$per_node") ;;
    --tracker=*) run_flags+=(--tracker "${f#--tracker=}") ;;
    --sync=*) run_flags+=(--sync "${f#--sync=}") ;;
    --args=*) read -r -a prog_args <<< "${f#--args=}" ;;
    --omp-threads=*) omp_threads=${f#--omp-threads=} ;;
    -l*) libs+=("$f") ;;
    --tolerance=*) tol_arg=${f#--tolerance=} ;;
    -D* | -I*) flags+=("$f"); native_flags+=("$f") ;;
    *) flags+=("$f") ;;
  esac
done
name=$(basename "$src" .c)
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-e2e-$name.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

gcc -O1 -fopenmp "${native_flags[@]}" "$src" -o native "${libs[@]}"
# --master-idle: the master takes no share of a parallel for, whose team is the n-1 slaves.
threads=$n
for f in "${flags[@]}"; do [ "$f" = --master-idle ] && threads=$((n - 1)); done
threads=$((threads * per_node))
if [ -n "$omp_threads" ]; then threads=$omp_threads; export OMP_NUM_THREADS=$omp_threads; fi
OMP_NUM_THREADS=$threads ./native "${prog_args[@]}" > expected
"$cc" -O1 -Wall -fopenmp "${flags[@]}" "$src" -o prog "${libs[@]}" 2> cc.err || { cat cc.err >&2; echo "FAIL: cape-cc" >&2; exit 1; }
# The one line that says a schedule runs as static is expected; anything else is a warning.
if grep -v ': note: schedule(.*) is run as schedule(static' cc.err > cc.warn; then
  cat cc.err >&2; echo "FAIL: cape-cc printed warnings" >&2; exit 1
fi

if [ ! -x "$cape" ]; then echo "SKIP: $cape not built" >&2; exit 77; fi
status=0
if "$cape" --help 2>/dev/null | grep -qE '^ +run '; then
  timeout -k 10 120 "$cape" run -n "$n" "${run_flags[@]}" -- ./prog "${prog_args[@]}" > actual 2> run.err || status=$?
else
  umask 077
  head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > secret
  port=$((20000 + RANDOM % 30000))
  pids=()
  for ((r = 1; r < n; r++)); do
    timeout -k 10 120 "$cape" node --master "127.0.0.1:$port" --rank "$r" --size "$n" \
      --secret-file secret --output-dir logs -- ./prog > "node$r.out" 2>&1 &
    pids+=($!)
  done
  timeout -k 10 120 "$cape" node --master "127.0.0.1:$port" --rank 0 --size "$n" \
    --secret-file secret --output-dir logs -- ./prog > actual 2> run.err || status=$?
  for p in "${pids[@]}"; do wait "$p" || status=$((status ? status : $?)); done
fi
# A program may state a tolerance for its floating-point output (`e2e-tolerance: X` in its
# source): numbers then agree when |a - b| <= X * max(1, |a|, |b|), everything else exactly.
tol=${tol_arg:-$(sed -n 's/.*e2e-tolerance: *\([0-9.eE+-]*\).*/\1/p' "$src" | head -1)}
same() {
  if [ -z "$tol" ]; then cmp -s expected actual; return; fi
  [ "$(wc -l < expected)" = "$(wc -l < actual)" ] || return 1
  paste -d '\n' expected actual | awk -v tol="$tol" '
    function abs(x) { return x < 0 ? -x : x }
    function num(s) { return s ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }
    NR % 2 == 1 { line = $0; next }
    {
      n = split(line, a, /[ \t]+/); m = split($0, b, /[ \t]+/)
      if (n != m) exit 1
      for (k = 1; k <= n; k++) {
        if (a[k] == b[k]) continue
        if (!num(a[k]) || !num(b[k])) exit 1
        d = abs(a[k] - b[k]); s = abs(a[k]) > abs(b[k]) ? abs(a[k]) : abs(b[k]); if (s < 1) s = 1
        if (d > tol * s) exit 1
      }
    }'
}
if [ "$status" != 0 ] || ! same; then
  echo "FAIL: $name on $n nodes (status $status)" >&2
  echo "--- native:" >&2; cat expected >&2
  echo "--- cape:" >&2; cat actual >&2
  cat run.err >&2 || true
  # (`cape run` writes the slaves' logs to cape-logs/, the hand-started nodes to logs/.)
  for f in node*.out logs/* cape-logs/*; do [ -f "$f" ] && { echo "--- $f" >&2; cat "$f" >&2; }; done
  exit 1
fi
# (Only files that exist: grep's status is 2 after a missing one, even with a match.)
logs=(run.err)
for f in logs/* cape-logs/*; do [ -f "$f" ] && logs+=("$f"); done
if grep -i "conflict\|differently\|with different values" "${logs[@]}" >&2 && [ -n "$strict" ]; then
  echo "FAIL: $name on $n nodes: a node logged writes that differ between nodes (--strict)" >&2
  exit 1
fi
echo "ok: $name, native and $n CAPE nodes agree${tol:+ (numbers within $tol)}${flags[*]:+ (${flags[*]})}"
