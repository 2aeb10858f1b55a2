#include "supervisor/core/base/result.h"

#include <cerrno>
#include <cstring>

namespace vigil {

Error system_error(std::string what, int err) {
  what += ": ";
  what += std::strerror(err);
  return Error{Errc::kSystem, std::move(what)};
}

Error system_error(std::string what) { return system_error(std::move(what), errno); }

}  // namespace vigil
