#!/usr/bin/env bash
# Nodes on one host over the master's local Unix socket (issue 14, session 14; docs/net.md,
# "Local nodes"). A 3-node `cape run` of a program with reductions and shared writes, its
# output compared with gcc -fopenmp's: by default every local slave joins over the Unix
# socket (the master's and the slaves' `--log net:info` say so), with CAPE_LOCAL_UNIX=0 over
# TCP; --encrypt over the Unix socket; mpirun (`cape node --master 127.0.0.1:P`, the master
# binds the socket itself) the same; a bad CAPE_LOCAL_UNIX is refused with a clear message.
#   local_unix.sh CAPE_CC CAPE
set -euo pipefail
cc=$1 cape=$2
if [ ! -x "$cape" ]; then echo "SKIP: $cape not built" >&2; exit 77; fi
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-local-unix.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > prog.c <<'C'
#include <stdio.h>
long a[3000];
int main(void) {
  long total = 0;
  for (int r = 0; r < 20; r++) {
    long s = 0;
#pragma omp parallel for reduction(+: s)
    for (int i = 0; i < 3000; i++) {
      a[i] += i * (r + 1) % 97;
      s += a[i];
    }
    total += s;
  }
  printf("total %ld a[2999] %ld\n", total, a[2999]);
  return 0;
}
C
"$cc" -O2 prog.c -o prog
gcc -fopenmp -O2 prog.c -o native
OMP_NUM_THREADS=3 ./native > expected
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

# job LABEL WANT(unix|tcp) ENV... -- CAPE-RUN-OPTIONS...
job() {
  local label=$1 want=$2; shift 2
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  rm -rf logs
  if ! env "${envs[@]}" "$cape" run -n 3 --log net:info --output-dir logs "$@" -- ./prog > out 2> err; then
    fail "$label: the job failed"; cat err logs/* >&2 || true; return
  fi
  cmp -s out expected || fail "$label: output differs from gcc -fopenmp's: $(cat out) against $(cat expected)"
  local m_unix s_unix m_tcp
  m_unix=$(grep -c 'joined from local Unix socket' err || true)
  m_tcp=$(grep -c 'joined from 127.0.0.1:' err || true)
  s_unix=$(cat logs/node.*.log | grep -c 'joined the master at .* over its local Unix socket' || true)
  if [ "$want" = unix ] && { [ "$m_unix" != 2 ] || [ "$s_unix" != 2 ]; }; then
    fail "$label: $m_unix of 2 slaves joined the master over the Unix socket by its log, $s_unix by theirs"
    grep -h joined err logs/* >&2 || true
  fi
  if [ "$want" = tcp ] && { [ "$m_tcp" != 2 ] || [ "$s_unix" != 0 ]; }; then
    fail "$label: $m_tcp of 2 slaves joined over TCP by the master's log, $s_unix over the Unix socket by theirs"
    grep -h joined err logs/* >&2 || true
  fi
  echo "$label: output equal to gcc's; master's log: $m_unix over the Unix socket, $m_tcp over TCP"
}

# The Unix socket needs an 8 MiB send buffer (net/socket.cpp widen_unix_buffer): forced by
# root, else within net.core.wmem_max (doubled). A host that allows neither uses TCP.
way=unix
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/net/core/wmem_max 2>/dev/null || echo 0)" -lt 4194304 ]; then
  way=tcp
  echo "note: not root and net.core.wmem_max < 4 MiB: local nodes are expected over TCP"
fi
job default $way LOCAL_UNIX_TEST=1 --
job encrypted $way LOCAL_UNIX_TEST=1 -- --encrypt
job CAPE_LOCAL_UNIX=1 $way CAPE_LOCAL_UNIX=1 --
job CAPE_LOCAL_UNIX=0 tcp CAPE_LOCAL_UNIX=0 --
job eager $way LOCAL_UNIX_TEST=1 -- --sync eager

# mpirun: the master node binds the socket itself, before its TCP port opens.
if command -v mpirun >/dev/null; then
  for want in $way tcp; do
    rm -rf mlogs
    port=$((20000 + RANDOM % 30000))
    v=1; [ $want = tcp ] && [ $way = unix ] && v=0
    if ! OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CAPE_LOCAL_UNIX=$v CAPE_SECRET=$(head -c 32 /dev/urandom | xxd -p -c 64) \
        timeout 120 mpirun --oversubscribe -n 3 -x CAPE_SECRET -x CAPE_LOCAL_UNIX "$cape" node --master 127.0.0.1:$port \
        --log net:info --output-dir mlogs -- ./prog > mout 2> merr; then
      fail "mpirun ($want): the job failed"; cat merr >&2; continue
    fi
    grep -qxF "$(cat expected)" mout || fail "mpirun ($want): output differs from gcc -fopenmp's: $(cat mout)"
    n=$(grep -c 'joined from local Unix socket' merr || true)
    if [ $want = unix ] && [ "$n" != 2 ]; then fail "mpirun: $n of 2 slaves joined over the Unix socket"; fi
    if [ $want = tcp ] && [ "$n" != 0 ]; then fail "mpirun, CAPE_LOCAL_UNIX=0: $n slaves joined over the Unix socket"; fi
    echo "mpirun ($want): output equal to gcc's; $n slaves over the Unix socket"
  done
fi

# A bad value is refused, naming the variable.
if CAPE_LOCAL_UNIX=yes "$cape" run -n 3 -- ./prog > out 2> err; then
  fail "CAPE_LOCAL_UNIX=yes was accepted"
elif ! grep -q "CAPE_LOCAL_UNIX='yes'" err; then
  fail "CAPE_LOCAL_UNIX=yes: no clear message: $(cat err)"
fi
exit $status
