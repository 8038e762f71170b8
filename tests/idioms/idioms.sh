#!/usr/bin/env bash
# Everyday OpenMP idioms, run like a user: one program built with `gcc -fopenmp` and with
# cape-cc, run natively (OMP_NUM_THREADS = the team) and with `cape run -n N`; the sorted
# standard output, the exit status and the files the program writes must be gcc's.
#   idioms.sh CAPE_CC CAPE PROG.c [--models "dickpt tickpt mt cape1"] [--nodes "2 3 4"]
#             [--cfgs "lazy eager mprotect"] [--table]
# Without --table the first difference fails (exit 1, both outputs shown); with --table every
# combination runs and one line `PROG model: n2/lazy=ok ...` is printed (the battery).
# The program states what it needs in `//@ key: value` lines:
#   extra: b.c            more sources (a program in several files)
#   args: -m 3            its arguments          stdin: file.in   its standard input
#   env: K=V ...          environment of both runs (OMP_SCHEDULE, getenv)
#   files: a.txt b.txt    files it writes (compared byte for byte, cwd of the run)
#   refuse: REGEX         cape-cc must refuse it: `PROG.c:L:C: error: ...REGEX`, exit != 0
# Cells: ok, ok+warn (a node logged a conflict), WRONG (output), EXIT(cape!=gcc), FILE(name),
# STOPPED (cape failed with its own `cape: ` message where gcc ran), HANG, refused.
# mt runs 2 threads per node (native: 2N threads).
set -uo pipefail
# The tool shell leaks fds 250/251/255 into children; a node would keep them open.
# (No redirection on the loop: bash would save fd 2 in an fd >= 10 that the loop then closes.)
for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && [ -e /proc/$$/fd/$fd ] && eval "exec $fd>&-"; done
cc=$1 cape=$2 src=$3; shift 3
models="dickpt" nodes="3" cfgs="lazy" table=
while [ $# -gt 0 ]; do
  case $1 in
    --models) models=$2; shift ;;
    --nodes) nodes=$2; shift ;;
    --cfgs) cfgs=$2; shift ;;
    --table) table=1 ;;
    *) echo "idioms.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$cape" ] || { echo "SKIP: $cape not built" >&2; exit 77; }
here=$(cd "$(dirname "$src")" && pwd)
name=$(basename "$src" .c)
meta() { sed -n "s|^//@ $1: *||p" "$src" | head -1; }
extra=() ; for e in $(meta extra); do extra+=("$here/$e"); done
read -r -a args <<< "$(meta args)"
stdin_file=$(meta stdin); [ -n "$stdin_file" ] && stdin_file=$here/$stdin_file || stdin_file=/dev/null
read -r -a envs <<< "$(meta env)"
read -r -a files <<< "$(meta files)"
refuse=$(meta refuse)
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-idioms-$name.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

gcc -O2 -fopenmp "$here/$name.c" "${extra[@]}" -o native -lm 2> gcc.err || { cat gcc.err >&2; echo "FAIL: gcc" >&2; exit 1; }
fail=0 row=
say() { if [ -n "$table" ]; then row+=" $1"; else echo "$1"; fi; }
# run DIR CMD...: the program in a clean directory; out, status, files there.
run() {
  local d=$1; shift
  rm -rf "$d"; mkdir "$d"
  (cd "$d" && env "${envs[@]}" timeout -k 5 90 "$@" "${args[@]}" < "$stdin_file" > out.raw 2> err; echo $? > status)
  sort "$d/out.raw" > "$d/out"
}
for model in $models; do
  case $model in
    dickpt) mflags=() ;; tickpt) mflags=(--ckpt=tickpt) ;; *) mflags=(--model=$model) ;;
  esac
  "$cc" -O2 -fopenmp "${mflags[@]}" "$here/$name.c" "${extra[@]}" -o "prog.$model" -lm 2> "cc.$model.err"
  ccst=$?
  if [ -n "$refuse" ]; then
    # A refusal names the user's file, line and column and says why.
    if [ $ccst != 0 ] && grep -qE "^$here/$name\.c:[0-9]+:[0-9]+: error: .*($refuse)" "cc.$model.err"; then
      say "$model=refused(ok)"
    else
      say "$model=NOT-REFUSED"; fail=1; cat "cc.$model.err" >&2
    fi
    continue
  fi
  if [ $ccst != 0 ]; then say "$model=refused"; fail=1; head -3 "cc.$model.err" >&2; continue; fi
  for n in $nodes; do
    t=$n tpn=(); [ "$model" = mt ] && { t=$((2 * n)); tpn=(--threads-per-node 2); }
    run nat env OMP_NUM_THREADS=$t "$work/native"
    for cfg in $cfgs; do
      case $cfg in lazy) c=() ;; eager) c=(--sync eager) ;; mprotect) c=(--tracker mprotect) ;; *) c=($cfg) ;; esac
      run cap "$cape" run -n "$n" "${tpn[@]}" "${c[@]}" -- "$work/prog.$model"
      what=ok
      ws=$(cat nat/status) gs=$(cat cap/status)
      if [ "$gs" = 124 ] || [ "$gs" = 137 ]; then what=HANG
      # cape stopped with its own message where gcc ran: a refusal at run time, not silent.
      elif [ "$gs" != "$ws" ] && [ "$gs" != 0 ] && grep -q "^cape: " cap/err; then what=STOPPED
      elif ! cmp -s nat/out cap/out; then what="WRONG"
      elif [ "$ws" != "$gs" ]; then what="EXIT($gs!=$ws)"
      else
        for f in "${files[@]}"; do cmp -s "nat/$f" "cap/$f" || what="FILE($f)"; done
      fi
      [ "$what" = ok ] && grep -qi "conflict\|differently\|with different values" cap/err && what=ok+warn
      say "$model/n$n/$cfg=$what"
      if [ "${what%+warn}" != ok ]; then
        fail=1
        { echo "--- $name $model n=$n $cfg: $what (status cape $gs, gcc $ws)"
          diff nat/out cap/out | head -10; tail -5 cap/err
          for f in "${files[@]}"; do cmp -s "nat/$f" "cap/$f" || diff "nat/$f" "cap/$f" | head -5; done
        } >&2
        [ -z "$table" ] && exit 1
      fi
    done
  done
done
[ -n "$table" ] && echo "$name:$row"
exit $fail
