#!/usr/bin/env bash
# The macOS-only files are never compiled by the Linux CI (there is no Mac in it). This
# parses them on Linux as the macOS build would see them: -D__APPLE__, the project's
# warnings as errors, and stub declarations of the few Apple APIs glibc lacks
# (tools/macos_stubs/: kqueue, posix_spawn_file_actions_addinherit_np). Types and calls are
# checked; nothing is linked or run, so the stubs' values do not matter.
# Usage: tools/check_macos_syntax.sh [CXX]     (default: g++)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cxx=${1:-g++}
stubs=$root/tools/macos_stubs
files=(supervisor/launch/macos_launch.cc supervisor/orchestrator/seatbelt_backend.cc
       supervisor/cli/macos_commands.cc supervisor/cli/run_command.cc supervisor/cli/main.cc
       supervisor/orchestrator/session_orchestrator.cc supervisor/orchestrator/macos_session.cc
       supervisor/orchestrator/session_record.cc supervisor/command/block_delivery.cc
       supervisor/command/command_spec.cc supervisor/command/net_events.cc
       supervisor/core/base/write_all.cc supervisor/core/base/diagnostics.cc)
# One compiler per CPU (each file is a whole-program parse of about 3 s), outputs printed
# in the files' order.
jobs=$(nproc 2>/dev/null || echo 2)
out_dir=$(mktemp -d)
trap 'rm -rf "$out_dir"' EXIT
check() {  # check INDEX FILE: its diagnostics in $out_dir/INDEX, and INDEX.failed on failure
  # -Wshadow is left out for the stub's kevent (a struct and a function of one name, as
  # on macOS); everything else is the project's warning set (cmake/VigilBuild.cmake).
  "$cxx" -std=c++20 -fsyntax-only -D__APPLE__ -DNDEBUG -Wall -Wextra -Wpedantic \
    -Wconversion -Wno-sign-conversion -Wnon-virtual-dtor -Wimplicit-fallthrough -Werror \
    -I"$root" -I"$root/build/seatbelt/generated" -I"$stubs" -include "$stubs/apple_extras.h" \
    "$root/$2" >"$out_dir/$1" 2>&1 || : >"$out_dir/$1.failed"
}
for i in "${!files[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  check "$i" "${files[$i]}" &
done
wait
status=0
for i in "${!files[@]}"; do
  if [ -e "$out_dir/$i.failed" ]; then
    echo "${files[$i]}:"; cat "$out_dir/$i"; status=1
  fi
done
[ "$status" = 0 ] && echo "macOS files parse: ${#files[@]} files"
exit "$status"
