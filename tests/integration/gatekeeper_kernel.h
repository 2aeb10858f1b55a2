// Whether this kernel lets vigil-init perform write-intent calls itself (Linux 5.14+,
// SECCOMP_ADDFD_FLAG_SEND), read from uname here rather than asked of vigil: then vigil
// binds no placeholders at missing protected names (it refuses them at the call).
// Defined in harness.cc.
#pragma once

namespace vigil::test {

bool kernel_has_gatekeeper();

}  // namespace vigil::test
