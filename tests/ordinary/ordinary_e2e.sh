#!/usr/bin/env bash
# A kernel in the style of the public suites (tests/ordinary/programs), built with gcc -fopenmp and
# with cape-cc in one model, run on local nodes in each given configuration: its sorted output,
# exit status and the files it wrote must be gcc -fopenmp's with OMP_NUM_THREADS=n (2n for mt: 2 threads a node).
# Usage: ordinary_e2e.sh CAPE CAPE_CC PROG.c MODEL RUN...   MODEL: dickpt | tickpt | mt | cape1;
# RUN: N or N:OPTION[:OPTION] (N nodes; OPTION: eager = --sync eager, mprotect = --tracker mprotect).
set -u
for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null; done
CAPE=$1 CC=$2 SRC=$3 MODEL=$4; shift 4
case $MODEL in dickpt) flag=;; tickpt) flag=--ckpt=tickpt;; mt) flag=--model=mt;; cape1) flag=--model=cape1;;
  *) echo "unknown model $MODEL"; exit 2;; esac
dir=$(mktemp -d "${TMPDIR:-/tmp}/ordinary.XXXXXX")
trap 'rm -rf "$dir"' EXIT
gcc -fopenmp -O2 "$SRC" -o "$dir/native" -lm || { echo "FAIL: gcc -fopenmp"; exit 1; }
"$CC" $flag -O2 "$SRC" -o "$dir/cape" -lm 2> "$dir/cc.err" || { echo "FAIL: cape-cc $flag refused it:"; cat "$dir/cc.err"; exit 1; }
files_of() { (cd "$1" && find . -type f ! -path './cape-logs/*' ! -name out ! -name err ! -name rc -print0 | sort -z | xargs -0 -r md5sum); }
fail=0
for run in "$@"; do
  n=${run%%:*}; opts=(); IFS=: read -ra o <<< "${run#*:}"
  if [ "$run" != "$n" ]; then
    for x in "${o[@]}"; do case $x in eager) opts+=(--sync eager);; mprotect) opts+=(--tracker mprotect);; *) echo "unknown option $x"; exit 2;; esac; done
  fi
  # --model=mt: 2 threads per node, so gcc's team is 2n threads.
  t=$n; [ "$MODEL" = mt ] && { opts+=(--threads-per-node 2); t=$((2 * n)); }
  w="$dir/want.$t"; g="$dir/got.${run//:/.}"; mkdir -p "$w" "$g"
  (cd "$w" && OMP_NUM_THREADS=$t timeout 60 ../native < /dev/null > out 2> err; echo $? > rc)
  (cd "$g" && timeout 180 "$CAPE" run -n "$n" "${opts[@]}" ../cape < /dev/null > out 2> err; echo $? > rc)
  what="cape run -n $n ${opts[*]} ($MODEL)"
  if [ "$(sort "$w/out")" != "$(sort "$g/out")" ]; then
    echo "FAIL: $what: output differs from gcc -fopenmp's (exit status $(cat "$g/rc")):"
    diff <(sort "$w/out") <(sort "$g/out") | head -8; tail -4 "$g/err"; fail=1
  elif [ "$(cat "$w/rc")" != "$(cat "$g/rc")" ]; then
    echo "FAIL: $what: exit status $(cat "$g/rc"), gcc -fopenmp's $(cat "$w/rc")"; tail -4 "$g/err"; fail=1
  elif [ "$(files_of "$w")" != "$(files_of "$g")" ]; then
    echo "FAIL: $what: the files written differ:"; diff <(files_of "$w") <(files_of "$g"); fail=1
  else
    echo "ok: $what: $(wc -l < "$g/out") lines as gcc -fopenmp's"
  fi
done
exit $fail
