#!/usr/bin/env bash
# Files the sequential part writes (libcape's files.c, docs/monitor.md "Files"): each program
# in tests/files/programs runs natively (gcc -fopenmp, OMP_NUM_THREADS=N) in one directory and
# under `cape run -n N` in another; its stdout and every file it leaves must be the same.
# Then CAPE_SLAVE_FILES=real (the old way) must show the old duplicate lines in applog's log
# (so this test can tell the two apart), and a bad value must be refused.
#   files.sh CAPE_CC CAPE PROGRAMS_DIR N [CAPE_CC_FLAGS...]
set -uo pipefail
here=$(dirname "$(realpath "$0")")
cc=$(realpath "$1") cape=$(realpath "$2") progs=$(realpath "$3") n=$4
shift 4
# --model=cape1's complete checkpoints refuse descriptors the program inherits (ctest's log)
for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2> /dev/null; done
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-files.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail=0
# The files a run left, with their content (the binary and cape's logs aside).
snapshot() { (cd "$1" && for f in $(ls | grep -v -e '^prog$' -e '^native$' -e '^cape-logs$' | sort); do echo "== $f"; cat "$f"; done); }
for src in "$progs"/*.c; do
  name=$(basename "$src" .c)
  mkdir -p "$work/$name/native" "$work/$name/cape"
  gcc -O1 -fopenmp "$src" -o "$work/$name/native/native" || { echo "FAIL: $name: gcc"; fail=1; continue; }
  "$cc" -O1 -fopenmp "$@" "$src" -o "$work/$name/cape/prog" 2> "$work/$name/cc.err" ||
    { cat "$work/$name/cc.err"; echo "FAIL: $name: cape-cc"; fail=1; continue; }
  (cd "$work/$name/native" && OMP_NUM_THREADS=$n ./native > ../native.out) || { echo "FAIL: $name: native run"; fail=1; }
  snapshot "$work/$name/native" > "$work/$name/native.files"
  # fileio failed in about half the runs before: three runs of each program
  for run in 1 2 3; do
    (cd "$work/$name/cape" && find . -mindepth 1 -maxdepth 1 ! -name prog -exec rm -rf {} + &&
      timeout -k 10 120 "$cape" run -n "$n" ./prog > ../cape.out 2> ../cape.err)
    status=$?
    snapshot "$work/$name/cape" > "$work/$name/cape.files"
    if [ $status != 0 ] || ! cmp -s "$work/$name/native.out" "$work/$name/cape.out" ||
       ! cmp -s "$work/$name/native.files" "$work/$name/cape.files"; then
      echo "FAIL: $name on $n nodes ($*), run $run: status $status"
      diff "$work/$name/native.out" "$work/$name/cape.out"
      diff "$work/$name/native.files" "$work/$name/cape.files" | head -20
      cat "$work/$name/cape.err"
      for l in "$work/$name/cape"/cape-logs/node.*.log; do [ -s "$l" ] && { echo "-- $l"; tail -5 "$l"; }; done
      fail=1
      break
    fi
  done
done
# The old way: every node appends its own "run start".
if [ -x "$work/applog/cape/prog" ]; then
  cd "$work/applog/cape" && rm -rf up_log.txt cape-logs
  for off in real 0; do
    rm -rf up_log.txt cape-logs
    CAPE_SLAVE_FILES=$off timeout -k 10 120 "$cape" run -n "$n" ./prog > /dev/null 2> real.err
    got=$(grep -c "run start" up_log.txt 2>/dev/null)
    if [ "$got" != "$n" ]; then echo "FAIL: CAPE_SLAVE_FILES=$off: \"run start\" $got times in up_log.txt, not $n (one per node)"; cat real.err; fail=1; fi
  done
  # Where the copies are: DIR/node.RANK.files/<absolute path> under --output-dir, the
  # master's marks in DIR/node.0.files; an earlier job's copies go at the next start.
  rm -rf up_log.txt
  mkdir -p other/node.1.files/stale
  timeout -k 10 120 "$cape" run -n "$n" --output-dir other ./prog > /dev/null 2> where.err
  here_abs=$(pwd -P)
  if [ "$(grep -c "run start" "other/node.1.files$here_abs/up_log.txt" 2>/dev/null)" != 1 ] ||
     [ ! -e "other/node.0.files/absent$here_abs/up_log.txt" ] || [ -e other/node.1.files/stale ] ||
     [ "$(grep -c "run start" up_log.txt)" != 1 ]; then
    echo "FAIL: --output-dir other: the copies are not where docs/monitor.md says"; find other; cat where.err; fail=1
  fi
  CAPE_SLAVE_FILES=sometimes timeout -k 10 120 "$cape" run -n "$n" ./prog > /dev/null 2> bad.err
  if [ $? = 0 ] || ! grep -q "CAPE_SLAVE_FILES='sometimes' is not 'shadow' or 1" bad.err; then
    echo "FAIL: CAPE_SLAVE_FILES=sometimes was not refused"; cat bad.err; fail=1
  fi
  rm -f real.err bad.err
fi
# A stream open for writing across regions: one warning per slave, the file as natively.
# (--model=cape1 refuses it: its complete checkpoints reopen read-only files only.)
mkdir -p "$work/stream/native" "$work/stream/cape"
case " $* " in *" --model=cape1 "*) ;; *) false ;; esac ||
if gcc -O1 -fopenmp "$here/stream_in_region.c" -o "$work/stream/native/native" &&
   "$cc" -O1 -fopenmp "$@" "$here/stream_in_region.c" -o "$work/stream/cape/prog"; then
  (cd "$work/stream/native" && OMP_NUM_THREADS=$n ./native > ../native.out)
  (cd "$work/stream/cape" && timeout -k 10 120 "$cape" run -n "$n" ./prog > ../cape.out 2> ../cape.err)
  warned=$(grep -c "warning: .*/loop_log.txt is open for writing from the sequential part as a parallel region starts" "$work/stream/cape.err")
  if [ "$warned" != $((n - 1)) ] || ! cmp -s "$work/stream/native.out" "$work/stream/cape.out" ||
     ! cmp -s "$work/stream/native/loop_log.txt" "$work/stream/cape/loop_log.txt"; then
    echo "FAIL: stream_in_region: $warned warnings (not $((n - 1))), or output or loop_log.txt differ"
    cat "$work/stream/cape.err"; fail=1
  fi
else
  echo "FAIL: stream_in_region: build"; fail=1
fi
# A region appending to a path the sequential part wrote: one warning per slave (its lines go
# to its copy: docs/monitor.md "Files"). (--model=cape1 has no `critical`; its parts, restarted
# from the master's checkpoint, write the real files.)
mkdir -p "$work/append/cape"
case " $* " in *" --model=cape1 "*) ;; *) false ;; esac ||
if "$cc" -O1 -fopenmp "$@" "$here/append_in_region.c" -o "$work/append/cape/prog"; then
  (cd "$work/append/cape" && timeout -k 10 120 "$cape" run -n "$n" ./prog > ../cape.out 2> ../cape.err)
  warned=$(grep -c "warning: .*/body_log.txt, which this node's sequential part wrote, is changed inside a parallel region" "$work/append/cape.err")
  if [ "$warned" != $((n - 1)) ] || [ "$(cat "$work/append/cape.out")" != 8 ]; then
    echo "FAIL: append_in_region: $warned warnings (not $((n - 1))), or the output is not 8"; cat "$work/append/cape.err"; fail=1
  fi
else
  echo "FAIL: append_in_region: build"; fail=1
fi
[ $fail = 0 ] && echo "PASS: files written once, as natively, on $n nodes ($*)"
exit $fail
