# Sourced by the *_paths.sh tests (tests/lazy): builds SRC with gcc -fopenmp and with cape-cc,
# runs it on NODES nodes under --sync=lazy with --tracker TRACKER and the log levels LOGS
# (logs in logs/, the master's on err), and compares the output with gcc's. Leaves the shell
# in the job's directory with `fail` set (1: the output differs); exits if a step fails.
#   . paths_job.sh NAME NODES LOGS   (after cc, cape, src, tracker are set; prog_args: the
#   program's arguments under cape, which must not change its output)
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-lazy-$1.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
gcc -O2 -fopenmp "$src" -o native && OMP_NUM_THREADS=$2 ./native > expected 2>/dev/null || exit 1
"$cc" -O2 "$src" -o prog || exit 1
timeout 200 "$cape" run -n "$2" --sync lazy --tracker "$tracker" --output-dir logs --log "$3" ./prog ${prog_args:-} \
  > actual 2> err || { echo "FAIL: the job failed"; tail -20 err; exit 1; }
fail=0
cmp -s expected actual || { echo "FAIL: the output differs from gcc -fopenmp's"; diff expected actual; fail=1; }
