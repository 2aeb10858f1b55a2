// The observer's filter: every write-intent syscall (and exec) goes to vigil-init as a
// SECCOMP_RET_USER_NOTIF. The rules derive from the syscall table
// (supervisor/core/events/syscall_table.h). open/openat are trapped only when their flags can
// write (decided in BPF, so read-only opens never leave the kernel).
//
// With `reads` (vigil.observer.reads) every open/openat goes to vigil-init, so that a read
// of a denyRead path can be told. The filter cannot be scoped to the hidden paths: BPF
// sees only the registers, and the path is a pointer into the caller's memory, which a
// seccomp filter cannot follow. So every open pays the round trip, and vigil-init keeps
// its own part small: it answers CONTINUE (the kernel opens as it would have) after one
// prefix compare for most paths (observer/hidden_reads.h). The stat family is not
// trapped: see hidden_reads.h.
#pragma once

#include "filters/filter_specs.h"

namespace vigil {

const FilterSpec& notify_filter(bool reads = false);

}  // namespace vigil
