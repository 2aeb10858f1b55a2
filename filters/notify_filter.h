// The observer's filter: every write-intent syscall (and exec) goes to vigil-init as a
// SECCOMP_RET_USER_NOTIF. The rules derive from the syscall table
// (supervisor/core/syscall_table.h). open/openat are trapped only when their flags can
// write (decided in BPF, so read-only opens never leave the kernel).
#pragma once

#include "filters/filter_specs.h"

namespace vigil {

const FilterSpec& notify_filter();

}  // namespace vigil
