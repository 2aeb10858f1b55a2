// The one kernel-interface file for seccomp constants that Debian 12's headers (6.1) lack.
// Values are the kernel's ABI (include/uapi/linux/seccomp.h); each is probed before use.
#pragma once

#include <linux/seccomp.h>
#include <sys/ioctl.h>

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)  // Linux 5.19
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)  // Linux 6.6
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)  // Linux 6.6
#endif
