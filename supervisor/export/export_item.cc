#include "supervisor/export/export_item.h"

#include <ctime>
#include <nlohmann/json.hpp>
#include <string>

namespace vigil {
namespace {

// A PARAM-VALUE of RFC 5424 6.3.3: '"', '\' and ']' escaped; control bytes, which a
// receiver's file would show raw, become '?'.
std::string sd_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (const char c : v) {
    if (c == '"' || c == '\\' || c == ']') out.push_back('\\');
    out.push_back(static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c);
  }
  return out;
}

// RFC 3339 in UTC with milliseconds, or "-" (NILVALUE).
std::string timestamp(std::optional<std::uint64_t> ms) {
  if (!ms) return "-";
  const std::time_t secs = static_cast<std::time_t>(*ms / 1000);
  std::tm tm{};
  if (gmtime_r(&secs, &tm) == nullptr) return "-";
  char buf[40];
  const auto n = std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ",
                               tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                               tm.tm_min, tm.tm_sec, static_cast<unsigned>(*ms % 1000));
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "-";
}

// MSGID: 1..32 printable ASCII.
std::string msgid(const ExportItem& item) {
  if (item.mark != ExportItem::Mark::kNone) return "vigil.export";
  std::string out;
  for (const char c : item.kind) {
    if (out.size() == 32) break;
    if (c > 0x20 && c < 0x7f) out.push_back(c);
  }
  return out.empty() ? "-" : out;
}

// Facility 13 (log audit); a mark is critical (2), a record informational (6).
int priority(const ExportItem& item) { return 13 * 8 + (item.mark == ExportItem::Mark::kNone ? 6 : 2); }

void append_field(std::string* out, std::string_view key, std::string_view value) {
  if (value.find('\n') == std::string_view::npos) {
    out->append(key).push_back('=');
    out->append(value).push_back('\n');
    return;
  }
  out->append(key).push_back('\n');
  std::uint64_t n = value.size();
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out->append(value).push_back('\n');
}

}  // namespace

std::string_view to_string(ExportItem::Mark m) {
  switch (m) {
    case ExportItem::Mark::kNone: return "";
    case ExportItem::Mark::kBroken: return "broken";
    case ExportItem::Mark::kLost: return "lost";
  }
  return "";
}

std::string export_json_line(const ExportItem& item) {
  if (item.mark == ExportItem::Mark::kNone) return item.payload;
  nlohmann::json j = {{"vigil_export", to_string(item.mark)}, {"host", item.host},
                      {"session", item.session}, {"seq", item.seq}, {"why", item.why}};
  return j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

std::string syslog_host_name(std::string_view host) {
  std::string out;
  for (const char c : host) {
    if (out.size() == 255) break;
    if (c > 0x20 && c < 0x7f) out.push_back(c);
  }
  return out.empty() ? "-" : out;
}

std::string syslog_message(const ExportItem& item) {
  std::string sd = "[";
  sd.append(kSyslogSdId);
  auto param = [&](std::string_view name, std::string_view value) {
    sd.append(" ").append(name).append("=\"").append(sd_value(value)).append("\"");
  };
  param("host", item.host);
  param("session", item.session);
  param("seq", std::to_string(item.seq));
  if (item.mark == ExportItem::Mark::kNone) {
    param("chain", item.chain);
    if (!item.prev.empty()) param("prev", item.prev);
    param("fmt", item.format);
    param("verified", item.verified ? "1" : "0");
  } else {
    param("mark", to_string(item.mark));
    param("why", item.why);
  }
  std::string payload = item.mark == ExportItem::Mark::kNone ? item.payload : export_json_line(item);
  std::string head = "<" + std::to_string(priority(item)) + ">1 " + timestamp(item.time_ms) +
                     " " + syslog_host_name(item.host) + " vigil - " + msgid(item) + " ";
  if (head.size() + sd.size() + 2 + payload.size() > kMaxSyslogMessage) {
    param("cut", std::to_string(payload.size()));
    payload = R"({"vigil_export":"cut","why":"longer than a syslog message vigil sends"})";
  }
  sd.push_back(']');
  std::string msg = std::move(head);
  msg.append(sd);
  if (!payload.empty()) msg.append(" ").append(payload);
  return msg;
}

std::string octet_frame(std::string_view message) {
  std::string out = std::to_string(message.size());
  out.push_back(' ');
  out.append(message);
  return out;
}

std::string journald_datagram(const ExportItem& item) {
  std::string out;
  const std::string payload =
      item.mark == ExportItem::Mark::kNone ? item.payload : export_json_line(item);
  append_field(&out, "MESSAGE", payload.empty() ? "vigil " + item.kind : payload);
  append_field(&out, "PRIORITY", item.mark == ExportItem::Mark::kNone ? "6" : "2");
  append_field(&out, "SYSLOG_IDENTIFIER", "vigil");
  append_field(&out, "VIGIL_SESSION", item.session);
  append_field(&out, "VIGIL_SEQ", std::to_string(item.seq));
  if (item.mark == ExportItem::Mark::kNone) {
    append_field(&out, "VIGIL_CHAIN", item.chain);
    if (!item.prev.empty()) append_field(&out, "VIGIL_PREV", item.prev);
    append_field(&out, "VIGIL_KIND", item.kind);
    append_field(&out, "VIGIL_VERIFIED", item.verified ? "1" : "0");
  } else {
    append_field(&out, "VIGIL_MARK", to_string(item.mark));
    append_field(&out, "VIGIL_WHY", item.why);
  }
  return out;
}

}  // namespace vigil
