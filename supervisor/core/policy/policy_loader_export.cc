// vigil.export: where `vigil export --follow` sends records (docs/fleet.md): the Loader's
// half that reads it (policy_loader_detail.h). The exporter alone uses it.
#include "supervisor/core/policy/path_expand.h"
#include "supervisor/core/policy/policy_loader_detail.h"

namespace vigil::detail {

Result<void> Loader::load_export(const json& e) {
  if (!e.is_object()) return type_error("vigil.export", e, "an object");
  check_keys(e, "vigil.export", keys_at("vigil.export"));
  ExportOptions& x = p_->vigil.export_options;
  if (auto r = read_bool(e, "vigil.export", "journald", &x.journald); !r) return r;
  if (auto m = e.find("spoolMaxBytes"); m != e.end()) {
    auto n = read_count(*m, "vigil.export.spoolMaxBytes", 64 * 1024);
    VIGIL_TRY(n);
    x.spool_max_bytes = *n;
  }
  auto s = e.find("syslog");
  if (s == e.end()) return {};
  if (!s->is_object()) return type_error("vigil.export.syslog", *s, "an object");
  check_keys(*s, "vigil.export.syslog", keys_at("vigil.export.syslog"));
  const auto host = s->find("host");
  if (host == s->end() || !host->is_string() || host->get<std::string>().empty())
    return fail("vigil.export.syslog.host", "expected the collector's host name or address");
  x.syslog_host = host->get<std::string>();
  for (const char c : x.syslog_host)
    if (c <= 0x20 || c == 0x7f || c == '/' || c == '@')
      return fail("vigil.export.syslog.host", "not a host name or address: " + x.syslog_host);
  const auto port = s->find("port");
  if (port == s->end() || !port->is_number_unsigned() || port->get<std::uint64_t>() == 0 ||
      port->get<std::uint64_t>() > 65535)
    return fail("vigil.export.syslog.port", "expected a port from 1 to 65535");
  x.syslog_port = static_cast<std::uint16_t>(port->get<std::uint64_t>());
  if (auto r = read_bool(*s, "vigil.export.syslog", "tls", &x.syslog_tls); !r) return r;
  if (auto ca = s->find("ca"); ca != s->end()) {
    if (!ca->is_string()) return type_error("vigil.export.syslog.ca", *ca, "a string");
    auto expanded = expand_settings_path(ca->get<std::string>(), ctx_.cwd, ctx_.home);
    if (!expanded) return fail("vigil.export.syslog.ca", expanded.error().message);
    x.syslog_ca = *expanded;
  }
  if (x.syslog_tls && x.syslog_ca.empty())
    return fail("vigil.export.syslog", "tls is on but there is no ca: give the CA file that signed "
                                       "the collector's certificate");
  return {};
}

}  // namespace vigil::detail
