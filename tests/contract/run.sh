#!/usr/bin/env bash
# One contract test (issue 10): a program built with `gcc -fopenmp` and run with
# OMP_NUM_THREADS=N (OMP_WAIT_POLICY=passive: 2 shared cores make spinning threads slow),
# and built with cape-cc and run by `cape run -n N`, must agree:
#   - the exit status is equal;
#   - stdout is equal after sorting lines (the order of lines printed by different threads
#     is not defined), and both end with a newline or neither does;
#   - the program's stderr lines (cape run's stderr without cape's own lines) are equal
#     after sorting;
#   - cape prints no diagnostics (`cape: ...`, `[cape MODULE ...] warn|error: ...`) on
#     cape run's stderr. (The slaves' logs are shown when a test fails, not checked: a job
#     that ends on exit() may leave teardown warnings there.)
# With --expect divergence the program's sequential part differs between nodes on purpose:
# cape must exit non-zero and name the region (file:line between the source's
# "contract: region begins" and "contract: region ends" lines) in one of its lines.
#
#   run.sh --name NAME --out DIR --cc CAPE_CC --cape CAPE --ckpt dickpt|tickpt --opt O0|O2
#          --nodes N [--tracker uffd|mprotect] [--sync eager|lazy] [--stdin none|empty|seq:K|ask:A,B,...]
#          [--expect divergence] [--repeat K] [--run-timeout SECONDS (180)] SOURCE.c...
#
# --repeat K runs cape K times, each run checked (for failures that come and go).
# stdin: none = /dev/null; empty = an empty pipe; seq:K = `seq 1 K |`; ask:A,B = a
# conversation: write A, wait for one line of answer, write B, ..., then end the input.
# Everything is built and run in DIR/NAME (cape run writes cape-logs/ there), which is
# removed when the test passes and kept, named in the message, when it fails.
set -uo pipefail
trap '' PIPE   # a question to a program that has ended is an error in the transcript, not our death

name= out= cc= cape= ckpt= opt= nodes= tracker= sync= stdin=none expect= repeat=1 run_timeout=180
srcs=()
while [ $# -gt 0 ]; do
  case $1 in
    --name) name=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --cc) cc=$2; shift 2 ;;
    --cape) cape=$2; shift 2 ;;
    --ckpt) ckpt=$2; shift 2 ;;
    --opt) opt=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --tracker) tracker=$2; shift 2 ;;
    --sync) sync=$2; shift 2 ;;
    --stdin) stdin=$2; shift 2 ;;
    --expect) expect=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --run-timeout) run_timeout=$2; shift 2 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) srcs+=("$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"); shift ;;
  esac
done
if [ -z "$name" ] || [ -z "$out" ] || [ -z "$cc" ] || [ -z "$cape" ] || [ -z "$ckpt" ] ||
   [ -z "$opt" ] || [ -z "$nodes" ] || [ ${#srcs[@]} = 0 ]; then
  echo "run.sh: missing arguments (see the comment at the top of $0)" >&2
  exit 2
fi
if [ ! -x "$cape" ]; then echo "SKIP: $cape not built" >&2; exit 77; fi

dir=$out/$name
rm -rf "$dir"
mkdir -p "$dir"
cd "$dir" || exit 2
progs=$(for s in "${srcs[@]}"; do basename "$s"; done | paste -sd+)
what="$progs, cape-cc --ckpt=$ckpt -$opt, cape run -n $nodes${tracker:+ --tracker $tracker}${sync:+ --sync $sync}, stdin $stdin"

fail() {
  {
    echo "FAIL $name: $what"
    for r in "$@"; do echo "  - $r"; done
    [ -s report ] && cat report
    echo "  outputs kept in $dir (native.out/.err, cape.out/.err, cape-logs/, build.err)"
  } >&2
  exit 1
}

# The same flags for both compilers; the sources' directory is on the include path.
incl=()
for s in "${srcs[@]}"; do incl+=("-I$(dirname "$s")"); done
gcc "-$opt" -fopenmp "${incl[@]}" "${srcs[@]}" -o native 2> native.build.err ||
  fail "gcc -fopenmp failed: $(head -c 2000 native.build.err)"
"$cc" "-$opt" -fopenmp --ckpt="$ckpt" "${incl[@]}" "${srcs[@]}" -o prog 2> build.err ||
  fail "cape-cc failed (exit $?): $(head -c 2000 build.err)"
if [ -s build.err ] && ! cmp -s build.err native.build.err; then
  fail "cape-cc printed what gcc -fopenmp did not: $(head -c 2000 build.err)"
fi

# run WHAT STATUS_FILE CMD...: CMD with this test's stdin; stdout to WHAT.out, stderr to WHAT.err.
run() {
  local w=$1 sf=$2
  shift 2
  local st=0
  case $stdin in
    none) "$@" < /dev/null > "$w.out" 2> "$w.err" || st=$? ;;
    # The program's status, not the writer's (which a reader that stops early kills).
    empty) : | "$@" > "$w.out" 2> "$w.err"; st=${PIPESTATUS[1]} ;;
    seq:*) seq 1 "${stdin#seq:}" | "$@" > "$w.out" 2> "$w.err"; st=${PIPESTATUS[1]} ;;
    ask:*) converse "$w" "$@" || st=$? ;;
    *) echo "run.sh: unknown --stdin $stdin" >&2; exit 2 ;;
  esac
  echo "$st" > "$sf"
}

# A conversation: one question, wait up to 30 s for one line of answer, the next question;
# then the end of the input and whatever else the program prints. The transcript is WHAT.out.
converse() {
  local w=$1
  shift
  coproc CONV { "$@" 2> "$w.err"; }
  # Our own copies of the pipes: bash closes CONV's when the program ends.
  local pid=$CONV_PID a=${CONV[1]} b=${CONV[0]} in from q reply
  exec {in}>&"$a" {from}<&"$b"
  exec {a}>&- {b}<&-
  local qs=${stdin#ask:}
  {
    for q in ${qs//,/ }; do
      echo "$q" >&"$in"
      if IFS= read -r -t 30 reply <&"$from"; then
        echo "$reply"
      else
        echo "(no answer to $q within 30 s: input held back, or the answer not passed on)"
        break
      fi
    done
    exec {in}>&-
    cat <&"$from"
  } > "$w.out"
  exec {from}<&-
  wait "$pid"
}

show() {   # show TITLE FILE: at most 40 lines of 300 characters
  [ -s "$2" ] || return 0
  echo "  $1:"
  cut -c1-300 "$2" | head -n 40 | sed 's/^/    /'
  local n
  n=$(wc -l < "$2")
  [ "$n" -gt 40 ] && echo "    ... ($n lines in all)"
  return 0
}
ends() {
  if [ ! -s "$1" ]; then echo empty
  elif [ "$(tail -c1 "$1" | od -An -tx1 | tr -d ' ')" = 0a ]; then echo newline
  else echo "no newline"; fi
}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

t0=$(now)
run native native.status env OMP_NUM_THREADS="$nodes" OMP_DYNAMIC=false OMP_WAIT_POLICY=passive timeout -k 5 120 ./native
t1=$(now)
ns=$(cat native.status)
LC_ALL=C sort native.out > native.sorted.out
LC_ALL=C sort native.err > native.sorted.err
cape_args=(run -n "$nodes")
[ -n "$tracker" ] && cape_args+=(--tracker "$tracker")
[ -n "$sync" ] && cape_args+=(--sync "$sync")

# cape's own lines: on cape run's stderr, and (to show) the warnings and errors in the
# slaves' logs.
diag='^cape: |\[cape [a-z_]+( rank [0-9]+)? pid [0-9]+\] '
# When the program itself ends with a non-zero status (as natively), cape's note saying so
# (like mpirun's) is not a complaint about the program: `cape: node R (...): program exited
# with status S ...` with S the native status.
note="^(cape-logs/[^:]*:)?cape: node [0-9]+ \\([^)]*\\): program exited with status $ns "

for ((k = 1; k <= repeat; k++)); do
  rm -rf cape-logs
  t2=$(now)
  run cape cape.status timeout -k 5 "$run_timeout" "$cape" "${cape_args[@]}" -- ./prog
  t3=$(now)
  cs=$(cat cape.status)
  times="native $(secs "$t0" "$t1") s, cape $(secs "$t2" "$t3") s"
  [ "$repeat" -gt 1 ] && times+="; cape run $k of $repeat"
  grep -aE "$diag" cape.err > cape.diag
  grep -avE "$diag" cape.err > cape.prog.err
  grep -aHE '^cape: |\[cape [a-z_]+( rank [0-9]+)? pid [0-9]+\] (warn|error):' cape-logs/* > logs.diag 2> /dev/null
  if [ "$ns" != 0 ]; then
    grep -avE "$note" cape.diag > cape.diag.rest; mv cape.diag.rest cape.diag
    grep -avE "$note" logs.diag > logs.diag.rest; mv logs.diag.rest logs.diag
  fi
  reasons=()

  if [ "$expect" = divergence ]; then
    main=${srcs[0]}
    lo=$(grep -n 'contract: region begins' "$main" | head -1 | cut -d: -f1)
    hi=$(grep -n 'contract: region ends' "$main" | head -1 | cut -d: -f1)
    base=$(basename "$main")
    named=$(grep -aoE "${base//./\\.}:[0-9]+" cape.diag | cut -d: -f2 |
            awk -v lo="$lo" -v hi="$hi" '$1 >= lo && $1 <= hi { print; exit }')
    [ "$cs" = 0 ] && reasons+=("cape run exited with status 0 (a silent wrong result is what this test forbids)")
    [ -z "$named" ] && reasons+=("no cape line names the region as $base:L with $lo <= L <= $hi")
    if [ ${#reasons[@]} -gt 0 ]; then
      {
        echo "  native status $ns, cape status $cs ($times)"
        show "cape stdout" cape.out
        show "cape's lines on stderr" cape.diag
        show "program's stderr under cape" cape.prog.err
        show "slaves' logs, cape's lines" logs.diag
      } > report
      fail "${reasons[@]}"
    fi
    continue
  fi

  LC_ALL=C sort cape.out > cape.sorted.out
  LC_ALL=C sort cape.prog.err > cape.sorted.err
  [ "$ns" = "$cs" ] || reasons+=("exit status: native $ns, cape $cs")
  cmp -s native.sorted.out cape.sorted.out ||
    reasons+=("stdout differs after sorting ($(wc -l < native.out) lines native, $(wc -l < cape.out) under cape)")
  [ "$(ends native.out)" = "$(ends cape.out)" ] ||
    reasons+=("stdout ends with: native $(ends native.out), cape $(ends cape.out)")
  cmp -s native.sorted.err cape.sorted.err ||
    reasons+=("the program's stderr differs after sorting ($(wc -l < native.err) lines native, $(wc -l < cape.prog.err) under cape)")
  [ -s cape.diag ] && reasons+=("cape printed $(wc -l < cape.diag) line(s) of its own on stderr")
  if [ ${#reasons[@]} -gt 0 ]; then
    {
      echo "  native status $ns, cape status $cs ($times)"
      show "cape's lines on stderr" cape.diag
      show "slaves' logs, cape's lines" logs.diag
      diff native.sorted.out cape.sorted.out > out.diff
      show "stdout, sorted: diff native cape" out.diff
      diff native.sorted.err cape.sorted.err > err.diff
      show "program's stderr, sorted: diff native cape" err.diff
    } > report
    fail "${reasons[@]}"
  fi
done

if [ "$expect" = divergence ]; then
  echo "ok $name: cape reported the divergence at $base:$named and exited $cs ($what; $times)"
else
  echo "ok $name: $what; $(wc -l < native.out) lines agree ($times)"
fi
rm -rf "$dir"
exit 0
