# bash completion for vigil
_vigil() {
  local cur prev sub
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD-1]}
  sub=${COMP_WORDS[1]}
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "run explain doctor probe replay undo learn export proxy session serve mcp logs -v --verbose --help --version" -- "$cur"))
    return
  fi
  case $prev in
    --settings|--log|--html|--events|--policy) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --format) COMPREPLY=($(compgen -W "ocsf" -- "$cur")); return ;;
    --dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --older-than) COMPREPLY=($(compgen -W "12h 1d 7d 30d" -- "$cur")); return ;;
    --output)
      if [ "$sub" = learn ]; then COMPREPLY=($(compgen -f -- "$cur")); else
        COMPREPLY=($(compgen -W "capture inherit" -- "$cur")); fi
      return ;;
    --sandbox) COMPREPLY=($(compgen -W "on off" -- "$cur")); return ;;
    --platform) COMPREPLY=($(compgen -W "linux macos" -- "$cur")); return ;;
  esac
  local opts
  case $sub in
    run) opts="--settings --allow-writable-settings --log --violations-fd --output --sandbox -c --" ;;
    explain) opts="--settings --allow-writable-settings --path --platform --seatbelt --filters" ;;
    doctor|probe) opts="--json" ;;
    replay) opts="--annotate --writes --net --verify --json --html --changes --diff --policy --command" ;;
    undo) opts="--dry-run --force" ;;
    learn) opts="--settings --output" ;;
    export) opts="--format" ;;
    proxy) opts="--settings --listen --events" ;;
    session) opts="start end --settings --allow-writable-settings --log" ;;
    serve|mcp) opts="--settings --allow-writable-settings --log" ;;
    logs)
      if [ "$COMP_CWORD" -eq 2 ]; then
        COMPREPLY=($(compgen -W "prune" -- "$cur"))
        return
      fi
      opts="--older-than --dir --dry-run" ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -F _vigil vigil
