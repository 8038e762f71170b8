#!/usr/bin/env bash
# Local 3-node cape jobs on a machine made busy on purpose (issue 16, item 13: "a loaded
# machine must only make a job slower"). Not part of `make check`: it runs for minutes.
#
#   scripts/stress-load.sh [--build DIR] [--hogs N] [--window S] [--rest S] [--windows K]
#                          [--nodes N] [--timeout S] [--programs "a b ..."] [--log FILE]
#                          [--opt -O2]
#
# In each of K windows of S seconds, N busy loops run at normal priority (a nice-19 hog
# delays nobody) while the tests/omp programs run, one `cape run -n NODES` job at a time,
# in turn (built with cape-cc --opt, -O2 by default). Every job's output is compared with
# the program's native `gcc -fopenmp` run (tolerances as in tests/translator/e2e.sh); a job that fails, disagrees or outlives
# --timeout is counted, by its message (pids, ports and addresses replaced by #). Between
# windows the hogs stop for --rest seconds (the machine is shared). The hogs are this
# script's own children and are stopped by pid on exit, also on ^C.
# At the end: runs, failures by message, and the 1-minute load average seen at each job's
# start (min / median / max). Each failure's stderr and node logs go to --log (default
# $TMPDIR/cape-stress-failures.log). Exit status 1 when any job failed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build hogs=14 window=180 rest=30 windows=3 nodes=3 job_timeout=120 programs= log=${TMPDIR:-/tmp}/cape-stress-failures.log opt=-O2
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --hogs) hogs=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --rest) rest=$2; shift 2 ;;
    --windows) windows=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --timeout) job_timeout=$2; shift 2 ;;
    --programs) programs=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    --opt) opt=$2; shift 2 ;;
    -h | --help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "stress-load.sh: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done
cape=$build/cli/cape cc=$build/translator/cape-cc
for b in "$cape" "$cc"; do
  [ -x "$b" ] || { echo "stress-load.sh: $b is not built (cmake --build $build)" >&2; exit 2; }
done
[ -n "$programs" ] || programs=$(cd "$here/tests/omp" && ls *.c | sed 's/\.c$//' | tr '\n' ' ')

work=$(mktemp -d "${TMPDIR:-/tmp}/cape-stress.XXXXXX")
hog_pids=()
stop_hogs() {
  local p
  for p in "${hog_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${hog_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  hog_pids=()
}
trap 'stop_hogs; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# Build every program twice: natively (the expected output) and with cape-cc.
threads=$nodes
for p in $programs; do
  src=$here/tests/omp/$p.c
  gcc -O1 -fopenmp "$src" -o "$work/$p.native"
  OMP_NUM_THREADS=$threads "$work/$p.native" > "$work/$p.expected"
  "$cc" "$opt" -fopenmp "$src" -o "$work/$p.cape" 2> /dev/null
done

# Same output, within the tolerance a program states (e2e-tolerance: X), as e2e.sh.
same() {  # expected actual tolerance
  if [ -z "$3" ]; then cmp -s "$1" "$2"; return; fi
  [ "$(wc -l < "$1")" = "$(wc -l < "$2")" ] || return 1
  paste -d '\n' "$1" "$2" | awk -v tol="$3" '
    function abs(x) { return x < 0 ? -x : x }
    function num(s) { return s ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }
    NR % 2 == 1 { line = $0; next }
    { n = split(line, a, /[ \t]+/); m = split($0, b, /[ \t]+/); if (n != m) exit 1
      for (k = 1; k <= n; k++) { if (a[k] == b[k]) continue; if (!num(a[k]) || !num(b[k])) exit 1
        d = abs(a[k] - b[k]); s = abs(a[k]) > abs(b[k]) ? abs(a[k]) : abs(b[k]); if (s < 1) s = 1
        if (d > tol * s) exit 1 } }'
}

runs=0 failed=0
: > "$work/failures" ; : > "$work/loads"
cd "$work"
for ((w = 1; w <= windows; w++)); do
  for ((h = 0; h < hogs; h++)); do
    bash -c 'while :; do :; done' &
    hog_pids+=($!)
  done
  end=$((SECONDS + window))
  echo "window $w of $windows: $hogs hogs for ${window}s (load now $(cut -d' ' -f1 /proc/loadavg))"
  while [ $SECONDS -lt $end ]; do
    for p in $programs; do
      [ $SECONDS -lt $end ] || break
      cut -d' ' -f1 /proc/loadavg >> loads
      tol=$(sed -n 's/.*e2e-tolerance: *\([0-9.eE+-]*\).*/\1/p' "$here/tests/omp/$p.c" | head -1)
      status=0
      rm -rf cape-logs
      timeout "$job_timeout" "$cape" run -n "$nodes" -- "./$p.cape" > actual 2> run.err || status=$?
      runs=$((runs + 1))
      why=
      if [ "$status" = 124 ]; then why="still running after ${job_timeout}s"
      elif [ "$status" != 0 ]; then
        why=$(grep -m1 '^cape' run.err || tail -1 run.err || true)
        why="status $status: ${why:-no message}"
      elif ! same "$p.expected" actual "$tol"; then why="output differs from gcc -fopenmp"
      fi
      if [ -n "$why" ]; then
        failed=$((failed + 1))
        # One line per kind: numbers that change from run to run (pids, ports) become #.
        echo "$why" | sed -E 's/[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+(:[0-9]+)?/#/g; s/pid [0-9]+/pid #/g' >> failures
        { echo "== $p, run $runs, window $w, load $(cut -d' ' -f1 /proc/loadavg)"; cat run.err
          for f in cape-logs/*; do [ -f "$f" ] && { echo "-- $f"; tail -20 "$f"; }; done; } \
          >> "$log"
        echo "  FAIL $p: $why"
      fi
    done
  done
  stop_hogs
  echo "  after window $w: $runs runs, $failed failed"
  if [ "$w" -lt "$windows" ]; then sleep "$rest"; fi
done

echo "runs: $runs, failed: $failed (programs: $programs; $nodes nodes, $hogs hogs, $windows windows of ${window}s)"
sort -n loads | awk '{ v[NR] = $1 } END { if (NR) printf "load average (1 min) at job starts: min %s, median %s, max %s\n", v[1], v[int((NR + 1) / 2)], v[NR] }'
if [ -s failures ]; then
  echo "failures by message:"
  sort failures | uniq -c | sort -rn
  echo "(each failure's stderr and node logs: $log)"
  exit 1
fi
