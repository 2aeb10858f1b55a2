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
files=(supervisor/launch/macos_launch.cc supervisor/session/seatbelt_backend.cc
       supervisor/cli/macos_commands.cc supervisor/cli/run_command.cc supervisor/cli/main.cc
       supervisor/session/session_orchestrator.cc supervisor/session/macos_session.cc
       supervisor/session/session_record.cc supervisor/session/block_delivery.cc
       supervisor/session/command_spec.cc supervisor/session/net_events.cc
       supervisor/core/base/write_all.cc supervisor/core/base/diagnostics.cc)
status=0
for f in "${files[@]}"; do
  # -Wshadow is left out for the stub's kevent (a struct and a function of one name, as
  # on macOS); everything else is the project's warning set (cmake/VigilBuild.cmake).
  if ! out=$("$cxx" -std=c++20 -fsyntax-only -D__APPLE__ -DNDEBUG -Wall -Wextra -Wpedantic \
      -Wconversion -Wno-sign-conversion -Wnon-virtual-dtor -Wimplicit-fallthrough -Werror \
      -I"$root" -I"$root/build/seatbelt/generated" -I"$stubs" -include "$stubs/apple_extras.h" \
      "$root/$f" 2>&1); then
    echo "$f:"; echo "$out"; status=1
  fi
done
[ "$status" = 0 ] && echo "macOS files parse: ${#files[@]} files"
exit "$status"
