#!/usr/bin/env bash
# The README and the programs agree (issue 17):
# 1. every option the README names (`--tracker`, `--ckpt=tickpt` ...) is one that cape's,
#    cape-cc's or cape-translate's --help lists, and every option of `cape run --help` is in
#    the README;
# 2. the README's commands run: the "Using it" block and the "Running on several nodes" block
#    as written (hosts rewritten to this machine, with --launcher local), and the mpirun line
#    of "With mpirun or srun" (a free port instead of 7777). prog.c is tests/cli/programs/args.c.
# (`make demo` runs the demo's; srun's and SSH's lines are run by tests/net's Slurm and sshd
# tests in their own shape.)
#   readme.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
readme=$src/README.md
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cape-readme.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export PATH=$build/cli:$build/translator:$PATH

# 1. Options. The option lines of every --help, subcommands included.
helps() {  # helps CMD...: the --help of CMD and of its subcommands, recursively
  "$@" --help
  local s
  for s in $("$@" --help | awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }'); do
    helps "$@" "$s"
  done
}
{ helps cape; cape-cc --help; cape-translate --help; } > "$tmp/help.txt"
others="--cflags --libs --help"  # pkg-config's, in the install paragraph; everyone's
for opt in $(grep -o -- '--[a-z][-a-z0-9]*\(=[a-z0-9]*\)\?' "$readme" | sort -u); do
  [[ " $others " == *" $opt "* ]] && continue
  grep -qE -- "(^|[ ,\[])$opt([ ,=\[]|$)" "$tmp/help.txt" || fail "the README names $opt, which no --help lists"
done

# And the other way for `cape run`, the command users meet first: every option its --help
# lists, in one of its spellings, is in the README.
while read -r spellings; do
  found=
  for o in ${spellings//,/ }; do grep -qE -- "(^|[^-a-z])$o([^-a-z]|$)" "$readme" && found=1; done
  [ -n "$found" ] || fail "\`cape run --help\` lists $spellings, which the README does not mention"
done < <(cape run --help | sed -n 's/^  \(-[^ ]*\).*/\1/p' | grep -v -e '^-h,--help$')

# The papers by title, venue and year: no --help cites the texts' file names, which mean
# nothing outside this project; the README's references section lists the five.
if grep -nE '[0-9]{3}_[0-9a-f]{16}\.txt|shared/seeds' "$tmp/help.txt"; then fail "a --help cites a paper by file name"; fi
refs=$(sed -n '/^## References$/,$p' "$readme")
for want in "HPCC 2011" "ScalCom 2016" "SoICT 2018" "ETRI Journal, 2020" "FAIR 2013"; do
  grep -qF "$want" <<< "$refs" || fail "the README's references lack $want"
done

# 2. Commands. A fenced ```sh block after a heading, as text.
block() { awk -v h="$1" '$0 == h { on = 1; next } on && /^```sh$/ { in_ = 1; next } in_ && /^```$/ { exit } in_ { print }' "$readme"; }
indented() { awk -v h="$1" '$0 == h { on = 1; next } on && /^    / { print substr($0, 5); got = 1; next } got { exit }' "$readme"; }
cd "$tmp"
cp "$src/tests/cli/programs/args.c" prog.c
using=$(block "## Using it")
[ -n "$using" ] || fail "no \`\`\`sh block under '## Using it'"
several=$(block "### Running on several nodes" | sed -e 's/node[12]/localhost/g' -e 's/cape run /cape run --launcher local /')
[ -n "$several" ] || fail "no \`\`\`sh block under '### Running on several nodes'"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mpi=$(indented "### With mpirun or srun" | grep -e '^(umask' -e '^mpirun ' |
  sed -e "s/:7777/:$port/" -e 's/^mpirun /mpirun --oversubscribe --allow-run-as-root /')
[ "$(echo "$mpi" | wc -l)" = 2 ] || fail "the mpirun lines of 'With mpirun or srun' changed: $mpi"
for part in using several mpi; do
  printf 'set -e\n%s\n' "${!part}" > "$part.sh"
  HOME=$tmp bash "$part.sh" > "$part.out" 2> "$part.err" || fail "README block '$part' failed:
$(cat "$part.sh")
--- stderr:
$(cat "$part.err")"
done
# What they printed: the program's lines for each run, a dump naming a variable.
[ "$(grep -c '^argv\[1\]=args$' using.out)" = 2 ] || fail "'Using it' runs: $(cat using.out)"
grep -q '^sum=5050$' using.out || fail "'Using it': $(cat using.out)"
[ "$(grep -c '^sum=5050$' several.out)" = 3 ] || fail "'Running on several nodes': $(cat several.out)"
[ "$(grep -c '^sum=5050$' mpi.out)" = 1 ] || fail "mpirun line: $(cat mpi.out) $(cat mpi.err)"
echo "ok: README options all in --help; its 'Using it', 'Running on several nodes' and mpirun commands ran"
