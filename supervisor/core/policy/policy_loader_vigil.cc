// The settings loader's vigil.* levels (policy_loader_detail.h): the observer, network,
// log, capture and git options, and the resource limits.
#include "supervisor/core/policy/policy_loader_detail.h"

namespace vigil::detail {

Result<void> Loader::load_vigil(const json& v) {
  if (!v.is_object()) return type_error("vigil", v, "an object");
  check_keys(v, "vigil", keys_at("vigil"));
  if (auto it = v.find("observer"); it != v.end()) {
    if (!it->is_object()) return type_error("vigil.observer", *it, "an object");
    check_keys(*it, "vigil.observer", keys_at("vigil.observer"));
    if (auto o = it->find("overflow"); o != it->end()) {
      if (!o->is_string())
        return type_error("vigil.observer.overflow", *o, "\"block\" or \"drop\"");
      const auto& s = o->get_ref<const std::string&>();
      if (s == "block") {
        p_->vigil.observer_overflow = VigilOptions::Overflow::kBlock;
      } else if (s == "drop") {
        p_->vigil.observer_overflow = VigilOptions::Overflow::kDrop;
      } else {
        return fail("vigil.observer.overflow",
                    "expected \"block\" or \"drop\", got " + o->dump());
      }
    }
    if (auto r = read_bool(*it, "vigil.observer", "syncWakeUp", &p_->vigil.observer_sync_wake_up);
        !r)
      return r;
    if (auto r = read_bool(*it, "vigil.observer", "reads", &p_->vigil.observer_reads); !r)
      return r;
  }
  if (auto it = v.find("network"); it != v.end()) {
    if (!it->is_object()) return type_error("vigil.network", *it, "an object");
    check_keys(*it, "vigil.network", keys_at("vigil.network"));
    if (auto r = read_bool(*it, "vigil.network", "ask", &p_->vigil.network_ask); !r) return r;
    if (auto rr = it->find("requestRules"); rr != it->end()) ok(load_request_rules(*rr));
    if (auto r = read_bool(*it, "vigil.network", "capture", &p_->vigil.network_capture); !r)
      return r;
    if (auto t = it->find("askTimeoutSeconds"); t != it->end()) {
      // Fractions allowed (tests answer in well under a second); at most a day.
      if (!t->is_number() || t->get<double>() <= 0 || t->get<double>() > 86400) {
        return fail("vigil.network.askTimeoutSeconds",
                    "expected a number of seconds, > 0 and at most 86400, got " + t->dump());
      }
      p_->vigil.network_ask_timeout_ms =
          static_cast<std::uint64_t>(t->get<double>() * 1000.0 + 0.5);
    }
  }
  if (auto it = v.find("log"); it != v.end()) {
    if (!it->is_object()) return type_error("vigil.log", *it, "an object");
    check_keys(*it, "vigil.log", keys_at("vigil.log"));
    if (auto m = it->find("maxOutputBytes"); m != it->end()) {
      auto n = read_count(*m, "vigil.log.maxOutputBytes", 0);
      VIGIL_TRY(n);
      p_->vigil.log_max_output_bytes = *n;
    }
    if (auto k = it->find("keep"); k != it->end()) {
      auto n = read_count(*k, "vigil.log.keep", 1);
      VIGIL_TRY(n);
      p_->vigil.log_keep = *n;
    }
  }
  if (auto it = v.find("capture"); it != v.end()) {
    if (!it->is_object()) return type_error("vigil.capture", *it, "an object");
    check_keys(*it, "vigil.capture", keys_at("vigil.capture"));
    if (auto r = read_bool(*it, "vigil.capture", "enabled", &p_->vigil.capture_enabled); !r)
      return r;
    CaptureCaps& caps = p_->vigil.capture_caps;
    struct Cap {
      const char* key;
      const char* path;
      std::uint64_t* field;
    };
    for (const Cap& c : {Cap{"maxFileBytes", "vigil.capture.maxFileBytes", &caps.max_file_bytes},
                         Cap{"maxSessionBytes", "vigil.capture.maxSessionBytes",
                             &caps.max_session_bytes},
                         Cap{"maxTotalBytes", "vigil.capture.maxTotalBytes",
                             &caps.max_total_bytes}}) {
      if (auto m = it->find(c.key); m != it->end()) {
        auto n = read_count(*m, c.path, 0);
        VIGIL_TRY(n);
        *c.field = *n;
      }
    }
  }
  if (auto it = v.find("git"); it != v.end()) {
    if (!it->is_object()) return type_error("vigil.git", *it, "an object");
    check_keys(*it, "vigil.git", keys_at("vigil.git"));
    if (auto r = read_bool(*it, "vigil.git", "writableRepository",
                           &p_->vigil.git_writable_repository);
        !r)
      return r;
  }
  if (auto it = v.find("export"); it != v.end()) VIGIL_TRY_VOID(load_export(*it));
  if (auto it = v.find("limits"); it != v.end()) return load_limits(*it);
  return {};
}

// vigil.limits: counts (0 = no cap) and a timeout in seconds (> 0).
Result<void> Loader::load_limits(const json& l) {
  if (!l.is_object()) return type_error("vigil.limits", l, "an object");
  check_keys(l, "vigil.limits", keys_at("vigil.limits"));
  auto& out = p_->vigil.limits;
  if (auto it = l.find("processes"); it != l.end()) {
    auto n = read_count(*it, "vigil.limits.processes", 0);
    VIGIL_TRY(n);
    if (*n != 0 && *n < kMinProcesses) {
      return fail("vigil.limits.processes", "must be 0 (no cap) or at least " +
                                                std::to_string(kMinProcesses) + ", got " +
                                                std::to_string(*n));
    }
    out.processes = *n;
  }
  if (auto it = l.find("memoryBytes"); it != l.end()) {
    auto n = read_count(*it, "vigil.limits.memoryBytes", 0);
    VIGIL_TRY(n);
    out.memory_bytes = *n;
  }
  if (auto it = l.find("maxFileBytes"); it != l.end()) {
    auto n = read_count(*it, "vigil.limits.maxFileBytes", 0);
    VIGIL_TRY(n);
    out.max_file_bytes = *n;
  }
  if (auto it = l.find("timeoutSeconds"); it != l.end()) {
    if (!it->is_number() || it->get<double>() <= 0 || it->get<double>() > 1e6) {
      return fail("vigil.limits.timeoutSeconds",
                  "must be a number of seconds above 0 (at most 1000000), got " + it->dump());
    }
    out.timeout_s = it->get<double>();
  }
  return {};
}

}  // namespace vigil::detail
