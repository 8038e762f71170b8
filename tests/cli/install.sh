#!/usr/bin/env bash
# `make install` as a user meets it (issue 17): only what users need, man pages made from
# --help, libcape's pkg-config file, bash completion; the installed cape-cc and cape build
# and run programs on their own (no build tree).
#   install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cape-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" > /dev/null
p=$tmp/prefix
lib=$(cd "$p" && ls -d lib*/libcape.a | xargs dirname)
got=$(cd "$p" && find . -type f | sort)
want=$(printf '%s\n' ./bin/cape ./bin/cape-cc ./bin/cape-translate ./include/cape/cape.h ./include/cape/cape1_cc.h ./include/cape/cc.h \
  ./include/cape/omp/omp.h ./$lib/libcape.a ./$lib/libcape_cc.a ./$lib/pkgconfig/cape.pc \
  ./share/bash-completion/completions/cape ./share/bash-completion/completions/cape-cc \
  ./share/bash-completion/completions/cape-translate ./share/man/man1/cape-cc.1 \
  ./share/man/man1/cape-translate.1 ./share/man/man1/cape.1 | sort)
[ "$got" = "$want" ] || fail "installed files differ from the expected list:
$(diff <(echo "$want") <(echo "$got"))"

# Man pages: they render, and say what --help says (every option line of `cape run --help`).
# (Rendered by man when the machine has it; the roff source is read otherwise: the help text
# is in it verbatim.)
for page in cape cape-cc cape-translate; do
  if command -v man > /dev/null; then
    MANWIDTH=200 man -l "$p/share/man/man1/$page.1" > "$tmp/$page.txt" 2> "$tmp/man.err" || fail "man $page: $(cat "$tmp/man.err")"
  else
    cp "$p/share/man/man1/$page.1" "$tmp/$page.txt"
  fi
  [ -s "$tmp/$page.txt" ] || fail "man $page is empty"
done
while IFS= read -r line; do
  grep -qF -- "$(echo "$line" | sed 's/^ *//')" "$tmp/cape.txt" || fail "cape.1 lacks \`cape run --help\`'s line: $line"
done < <("$p/bin/cape" run --help | grep '^  -')
grep -qF -- "--ckpt=tickpt" "$tmp/cape-cc.txt" || fail "cape-cc.1 lacks --ckpt=tickpt"

# The installed cape-cc finds its headers and libraries beside itself; the installed cape runs it.
cd "$tmp"
PATH=$p/bin:$PATH cape-cc -O2 "$src/tests/cli/programs/args.c" -o args
out=$(PATH=$p/bin:$PATH cape run -n 2 --output-dir logs ./args x)
[ "$out" = $'argv[1]=x\nsum=5050' ] || fail "installed cape-cc + cape run: $out"

# pkg-config: a program that makes the runtime calls itself (the papers' Fig. 3 by hand).
flags=$(PKG_CONFIG_PATH=$p/$lib/pkgconfig pkg-config --cflags --libs cape)
gcc -O2 "$src/tests/net/programs/fig3.c" -o fig3 $flags
out=$("$p/bin/cape" run -n 2 --output-dir logs ./fig3 1)
case $out in "fig3 node=0 nodes=2 regions=1 sum="*" ok") ;; *) fail "pkg-config build of fig3.c: $out" ;; esac

# Bash completion: subcommands, options (from --help) and option values.
complete_words() {  # complete_words WORD...: what completing the last word offers
  PATH=$p/bin:$PATH bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _cape; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$p/share/bash-completion/completions/cape" "$@"
}
[ "$(complete_words cape ru)" = run ] || fail "completion of 'cape ru': $(complete_words cape ru)"
# Captured first: `grep -q` ending the pipe early would break the writer (pipefail), and
# `--tr` offers --trace too.
offered=$(complete_words cape run --tr)
grep -qx -- --tracker <<< "$offered" || fail "completion of 'cape run --tr': $offered"
offered=$(complete_words cape run --any)
grep -qx -- --any-program <<< "$offered" || fail "completion of 'cape run --any': $offered"
[ "$(complete_words cape run --tracker m)" = mprotect ] || fail "completion of 'cape run --tracker m'"
[ "$(complete_words cape ckpt d | sort | tr '\n' ' ')" = "diff dump " ] || fail "completion of 'cape ckpt d'"
echo "ok: make install: $(echo "$got" | wc -l) files, man pages, pkg-config, completion"
