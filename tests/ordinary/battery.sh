#!/usr/bin/env bash
# usage: battery.sh BUILD OUTDIR prog.c...   (extends /work/notes/s14up/run.sh)
# Each program: gcc -fopenmp, and cape-cc in 4 builds (dickpt, tickpt, mt, cape1), each run on 2, 3, 4
# nodes with lazy (default), --sync eager, --tracker mprotect, in a fresh directory; compares sorted stdout,
# the exit status and the files the program wrote with OMP_NUM_THREADS=n ./native's.
# One line per run in OUTDIR/table.txt: prog model n cfg result. MODELS / NODES / CFGS override the sets.
B=$(cd "$1" && pwd); O=$2; shift 2
mkdir -p "$O"; O=$(cd "$O" && pwd)
for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done 2>/dev/null
MODELS=${MODELS:-"dickpt tickpt mt cape1"}; NODES=${NODES:-"2 3 4"}
IFS=';' read -ra CFGS <<< "${CFGS:-lazy;--sync eager;--tracker mprotect}"
flag() { case $1 in dickpt) echo "";; tickpt) echo "--ckpt=tickpt";; mt) echo "--model=mt";; cape1) echo "--model=cape1";; esac; }
files_of() { (cd "$1" && find . -type f ! -path './cape-logs/*' ! -name 'out' ! -name 'err' -print0 | sort -z | xargs -0 -r md5sum); }
srcs=(); for s in "$@"; do srcs+=("$(cd "$(dirname "$s")" && pwd)/$(basename "$s")"); done
for src in "${srcs[@]}"; do
  p=$(basename "${src%.c}")
  args=$(sed -n 's/.*BATTERY-ARGS: \(.*\) \*\/.*/\1/p' "$src" | head -1)
  mkdir -p "$O/$p"; cd "$O/$p"
  gcc -fopenmp -O2 "$src" -o native -lm 2>/dev/null || { echo "$p - - - gcc-failed" >> "$O/table.txt"; continue; }
  for m in $MODELS; do
    if ! "$B/translator/cape-cc" $(flag $m) -O2 "$src" -o "cape_$m" -lm 2> "cc_$m.err"; then
      for n in $NODES; do for c in "${CFGS[@]}"; do echo "$p $m $n ${c// /} refused" >> "$O/table.txt"; done; done
      continue
    fi
    for n in $NODES; do
      t=$n; tpn=; [ $m = mt ] && { t=$((2 * n)); tpn="--threads-per-node 2"; }  # mt: 2 threads a node
      rm -rf want; mkdir want; (cd want && OMP_NUM_THREADS=$t timeout 60 ../native $args </dev/null > out 2> err; echo $? > rc)
      for c in "${CFGS[@]}"; do
        cfg=$c; [ "$c" = lazy ] && cfg=""
        d="got.$m.$n.${c// /}"; rm -rf "$d"; mkdir "$d"
        (cd "$d" && timeout 120 "$B/cli/cape" run -n $n $tpn $cfg "../cape_$m" $args </dev/null > out 2> err; echo $? > rc)
        r=ok
        if [ "$(cat $d/rc)" = 124 ]; then r=TIMEOUT
        elif [ "$(sort want/out)" != "$(sort $d/out)" ]; then r=WRONG-out
        elif [ "$(cat want/rc)" != "$(cat $d/rc)" ]; then r="WRONG-rc$(cat $d/rc)"
        elif [ "$(files_of want)" != "$(files_of $d)" ]; then r=WRONG-files; fi
        [ "$r" != ok ] && [ "$(cat $d/rc)" != 0 ] && [ "$r" = WRONG-out ] && r="FAIL-rc$(cat $d/rc)"
        echo "$p $m $n ${c// /} $r" >> "$O/table.txt"
        [ "$r" = ok ] && rm -rf "$d"
      done
    done
  done
done
