#include "supervisor/agent/agent_channel_wire.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "supervisor/agent/wire_json.h"

namespace vigil::agent_channel {

namespace {

using json = nlohmann::json;
// What vigil sends keeps srt's key order, "type" first: a harness may read a message's
// type as the first "type" on the line (srt's reference agent does), which a nested
// resource's "type" must not come before.
using ordered = nlohmann::ordered_json;

// A path or a reason is the command's choosing (or the settings'): bytes that are not
// UTF-8 become U+FFFD rather than an exception, and the text is cut.
std::string cut(std::string_view text) {
  if (text.size() <= kMaxDescriptionBytes) return std::string(text);
  return std::string(text.substr(0, kMaxDescriptionBytes)) + " [cut: " +
         std::to_string(text.size() - kMaxDescriptionBytes) + " more bytes]";
}

std::string line_of(const ordered& j) {
  return j.dump(-1, ' ', false, ordered::error_handler_t::replace) + "\n";
}

bool blank(std::string_view s) {
  return s.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

bool LineSplitter::feed(std::string_view bytes, std::vector<std::string>& lines) {
  for (;;) {
    const auto nl = bytes.find('\n');
    const std::string_view head = bytes.substr(0, nl);
    if (partial_.size() + head.size() > kMaxLineBytes) return false;
    partial_.append(head);
    if (nl == std::string_view::npos) return true;
    if (!partial_.empty() && partial_.back() == '\r') partial_.pop_back();
    if (!blank(partial_)) lines.push_back(std::move(partial_));
    partial_.clear();
    bytes.remove_prefix(nl + 1);
  }
}

PeerMessage parse_peer_line(std::string_view line) {
  PeerMessage m;
  auto parsed = parse_json_object(line);
  if (!parsed) {
    m.why = "not a JSON object (" + parsed.error().message + ")";
    return m;
  }
  const json& j = *parsed;
  const auto type = j.find("type");
  if (type == j.end() || !type->is_string()) {
    m.why = "no \"type\" string";
    return m;
  }
  const std::string& t = type->get_ref<const std::string&>();
  if (t == "hello") {
    m.kind = PeerKind::kHello;
    const auto v = j.find("protocol_version");
    if (v != j.end() && v->is_number_integer()) m.version = v->get<std::int64_t>();
    return m;
  }
  if (t == "permission_response") {
    const auto id = j.find("id");
    if (id == j.end() || !id->is_string()) {
      m.why = "a permission_response without an \"id\" string";
      return m;
    }
    m.kind = PeerKind::kPermissionResponse;
    m.id = id->get<std::string>();
    const auto behavior = j.find("behavior");
    m.allow = behavior != j.end() && behavior->is_string() && *behavior == "allow";
    return m;
  }
  m.kind = PeerKind::kIgnored;
  m.why = "a message of type \"" + cut(t.substr(0, 64)) + "\"";
  return m;
}

std::string hello_line() {
  return line_of(ordered{{"type", "hello"}, {"protocol_version", kProtocolVersion}});
}

std::string permission_request_line(const std::string& id, const std::string& host,
                                    std::uint16_t port, const std::string& entry,
                                    const std::string& proto) {
  ordered resource = {{"type", "network"}, {"host", host}, {"port", port}, {"protocol", proto}};
  return line_of(ordered{{"type", "permission_request"},
                      {"id", id},
                      {"resource", std::move(resource)},
                      {"operation", "connect"},
                      {"description", "Connecting to " + cut(entry) +
                                          ", which is not on the sandbox's allow list"}});
}

std::string blocked_line(const Violation& v, bool quarantined) {
  ordered resource;
  std::string operation;
  std::string description;
  switch (v.kind) {
    case Violation::Kind::kNet:
      resource = {{"type", "network"}, {"host", v.host}, {"port", v.port}};
      operation = "connect";
      description = "Connecting to " + cut(v.target) + " was blocked by the sandbox";
      break;
    case Violation::Kind::kUnix:
      resource = {{"type", "unix_socket"}, {"path", cut(v.target)}};
      operation = "connect";
      description = "Connecting to the unix socket " + cut(v.target) +
                    " was blocked by the sandbox";
      break;
    case Violation::Kind::kFs:
      resource = {{"type", "file"}, {"path", cut(v.target)}};
      operation = "write";
      description = quarantined ? "Writing " + cut(v.target) +
                                      " was undone: vigil moved it out of the workspace"
                                : "Writing to " + cut(v.target) + " was blocked by the sandbox";
      break;
  }
  if (!v.reason.empty()) description += " (" + cut(v.reason) + ")";
  return line_of(ordered{{"type", "blocked"},
                      {"resource", std::move(resource)},
                      {"operation", operation},
                      {"description", std::move(description)}});
}

std::optional<std::uint64_t> request_number(std::string_view id) {
  if (id.size() < 4 || id.substr(0, 3) != "pr_") return std::nullopt;
  std::uint64_t n = 0;
  const char* end = id.data() + id.size();
  const auto [p, ec] = std::from_chars(id.data() + 3, end, n);
  if (ec != std::errc() || p != end) return std::nullopt;
  return n;
}

}  // namespace vigil::agent_channel
