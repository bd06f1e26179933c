# Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#
# Bash completion for dprobe(1): subcommands, their options, files after
# -o/-f/-x and for report, process ids after -p, and the command to trace after `--`.
# Installed as share/bash-completion/completions/dprobe; or: source it.

_dprobe() {
  local cur prev words cword
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD - 1]}
  words=("${COMP_WORDS[@]}")
  cword=$COMP_CWORD

  local trace_options="-e --event -f --file -o --output --json --perfetto --graph --graph-functions --profile --buffer-size
    --max-threads --disable --no-optimize --probes --summary --filter --trigger --stacktrace
    --follow --format --syscalls --string-limit --syscall-times --timestamps -h --help"
  local subcommand="" i
  for ((i = 1; i < cword; i++)); do
    case ${words[i]} in
      run | attach | record | report | check | list)
        subcommand=${words[i]}
        break
        ;;
    esac
  done

  # After `dprobe run ... --` (or record): the command to trace and its arguments.
  if [ "$subcommand" = run ] || [ "$subcommand" = record ]; then
    local j
    for ((j = i + 1; j < cword; j++)); do
      if [ "${words[j]}" = -- ]; then
        if [ $((j + 1)) -eq "$cword" ]; then
          mapfile -t COMPREPLY < <(compgen -c -- "$cur")
        else
          mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        fi
        return 0
      fi
    done
  fi

  case $prev in
    -o | --output | -f | --file | --perfetto)
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return 0
      ;;
    -x | --exec)
      mapfile -t COMPREPLY < <(compgen -c -- "$cur"; compgen -f -- "$cur")
      return 0
      ;;
    -p | --pid)
      mapfile -t COMPREPLY < <(compgen -W "$(cd /proc && printf '%s ' [0-9]*)" -- "$cur")
      return 0
      ;;
    -e | --event | --buffer-size | --max-threads | --disable | --duration | --tid | --since | --until | --graph-functions | --syscalls | --string-limit)
      return 0  # a value of the user's own
      ;;
    --format)
      mapfile -t COMPREPLY < <(compgen -W "ftrace strace" -- "$cur")
      return 0
      ;;
    --timestamps)
      mapfile -t COMPREPLY < <(compgen -W "t tt ttt r" -- "$cur")
      return 0
      ;;
  esac

  local options
  case $subcommand in
    "") options="run attach record report check list -h --help --version" ;;
    run) options="$trace_options --" ;;
    attach) options="-p --pid --duration $trace_options" ;;
    record) options="-p --pid --duration $trace_options --" ;;
    report)
      options="--json --profile --perfetto --graph --functions --format --string-limit --syscall-times
        --timestamps --event --pid --tid --since --until -h --help"
      mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur"; compgen -f -- "$cur")
      return 0
      ;;
    check) options="-x --exec -e --event -f --file --format -h --help" ;;
    list) options="-x --exec -p --pid -L --line -V --vars -h --help" ;;
  esac
  mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")
}

complete -o default -F _dprobe dprobe
