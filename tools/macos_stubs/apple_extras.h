// Syntax-check stub (tools/check_macos_syntax.sh): the Apple-only spawn extension macos_launch.cc uses.
#pragma once
#include <spawn.h>
extern "C" int posix_spawn_file_actions_addinherit_np(posix_spawn_file_actions_t*, int);
#define POSIX_SPAWN_CLOEXEC_DEFAULT 0x4000
