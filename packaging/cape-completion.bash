# bash completion for cape, cape-cc and cape-translate. The options and subcommands are read
# from the command's own --help when completing, so they always agree with it.

# The options a --help text lists (lines that start with an option).
_cape_options() {
  "$@" --help 2>/dev/null | sed -n 's/^ \{1,\}\(-[^ ]*\).*/\1/p' | tr ',' '\n' | grep '^-'
}
_cape_subcommands() {
  "$@" --help 2>/dev/null | awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }' |
    tr '\n' ' '
}

_cape() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  local i w subs
  local -a cmd=("${COMP_WORDS[0]}")
  for ((i = 1; i < COMP_CWORD; i++)) do
    w=${COMP_WORDS[i]}
    [[ $w == -* ]] && continue
    subs=$(_cape_subcommands "${cmd[@]}")
    if [[ " $subs " == *" $w "* ]]; then
      cmd+=("$w")
    elif [[ ${COMP_WORDS[i-1]} != -* || ${COMP_WORDS[i-1]} == *=* ]] && [[ ${cmd[1]} == @(run|monitor|node) ]]; then
      # The program: what follows is its own (as with mpirun).
      COMPREPLY=($(compgen -f -- "$cur"))
      return
    fi
  done
  case $prev in
    --tracker) COMPREPLY=($(compgen -W "uffd mprotect full" -- "$cur")); return ;;
    --launcher) COMPREPLY=($(compgen -W "local ssh" -- "$cur")); return ;;
    --output-dir|--keep-checkpoints) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --hostfile|--identity|--known-hosts|--secret-file|-o|--elf) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --log) COMPREPLY=($(compgen -W "calls:info monitor:debug net:info traffic:info debug info" -- "$cur")); return ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_cape_options "${cmd[@]}")" -- "$cur"))
    return
  fi
  subs=$(_cape_subcommands "${cmd[@]}")
  if [[ -n $subs ]]; then
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}

# cape-cc and cape-translate: their own options, then files (as gcc's).
_cape_cc() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_cape_options "${COMP_WORDS[0]}")" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}

complete -F _cape cape
complete -o filenames -F _cape_cc cape-cc cape-translate
