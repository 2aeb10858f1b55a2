#include "supervisor/core/wire/env_block.h"

namespace vigil::wire {

std::string encode_env_block(const std::vector<std::string>& env) {
  std::string out;
  for (const auto& e : env) {
    const auto eq = e.find('=');
    if (eq == std::string::npos || eq == 0 || e.find('\0') != std::string::npos) continue;
    out += e;
    out += '\0';
  }
  return out;
}

Result<std::vector<std::string>> decode_env_block(std::string_view block) {
  if (block.size() > kMaxEnvBlock)
    return make_error(Errc::kInvalidPolicy, "the command's environment is too large");
  std::vector<std::string> env;
  std::size_t at = 0;
  while (at < block.size()) {
    const auto nul = block.find('\0', at);
    if (nul == std::string_view::npos)
      return make_error(Errc::kInvalidPolicy, "the command's environment block is cut short");
    const std::string_view entry = block.substr(at, nul - at);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0)
      return make_error(Errc::kInvalidPolicy, "an environment entry has no NAME=");
    env.emplace_back(entry);
    at = nul + 1;
  }
  return env;
}

std::vector<std::string> host_helper_environment() {
  // bwrap needs no variable at all; a PATH that names only system directories keeps any
  // lookup it might make away from the caller's.
  return {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
}

}  // namespace vigil::wire
