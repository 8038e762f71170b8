#!/usr/bin/env bash
# man-page.sh PROGRAM OUT NAME SUMMARY: writes the section-1 man page OUT made from PROGRAM's
# --help and, when it has subcommands (`cape`), from each subcommand's --help, so that the page
# and --help say the same thing (the build makes the pages; `make install` installs them).
set -euo pipefail
prog=$1 out=$2 name=$3 summary=$4
# roff: a backslash is \e; a line starting with . or ' would be a request.
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/" -e 's/^-/\\-/' ; }
subcommands() { "$@" --help | awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }'; }
section() {  # the help of "$@", under a heading naming the command (DESCRIPTION: the program's own)
  if [ $# -eq 1 ]; then echo ".SH DESCRIPTION"; else echo ".SH \"$name ${*:2}\""; fi
  echo ".nf"
  "$@" --help | esc
  echo ".fi"
  local s
  for s in $(subcommands "$@"); do section "$@" "$s"; done
}
version=$("$prog" --version 2>/dev/null | grep -o "cape [0-9][0-9.]*" | head -1 || true)
{
  echo ".TH \"$(echo "$name" | tr a-z A-Z)\" 1 \"\" \"${version:-$name}\" \"cape manual\""
  echo ".SH NAME"
  echo "$name \\- $summary"
  section "$prog"
  echo ".SH SEE ALSO"
  for p in cape cape-cc cape-translate; do [ "$p" = "$name" ] || echo ".BR $p (1),"; done
  echo "and the README and docs/ of cape's sources, which cite the CAPE papers."
} > "$out.tmp"
mv "$out.tmp" "$out"
