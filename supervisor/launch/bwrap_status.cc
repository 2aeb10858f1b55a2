#include "supervisor/launch/bwrap_status.h"

#include <nlohmann/json.hpp>
#include <string_view>

namespace vigil {

void parse_status_lines(std::string* buf, bool at_end, BwrapStatus* out) {
  auto take = [&](std::string_view line) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) return;
    if (auto it = j.find("child-pid"); it != j.end() && it->is_number_integer()) {
      out->init_pid = it->get<pid_t>();
    }
    if (auto it = j.find("exit-code"); it != j.end() && it->is_number_integer()) {
      out->have_exit_code = true;
      out->exit_code = it->get<int>();
    }
  };
  size_t start = 0, nl;
  while ((nl = buf->find('\n', start)) != std::string::npos) {
    take(std::string_view(*buf).substr(start, nl - start));
    start = nl + 1;
  }
  buf->erase(0, start);
  if (at_end && !buf->empty()) {
    take(*buf);
    buf->clear();
  }
}

}  // namespace vigil
