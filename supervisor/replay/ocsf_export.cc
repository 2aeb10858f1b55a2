#include "supervisor/replay/ocsf_export.h"

#include <ctime>
#include <nlohmann/json.hpp>

#include "supervisor/report/policy_judge.h"

namespace vigil {
namespace {

using json = nlohmann::ordered_json;

// OCSF 1.2.0 ids (tests/data/ocsf-1.2.0): categories.json, the classes' activity_id
// enums, the security_control profile's action_id/disposition_id, file.type_id.
constexpr int kSystemCategory = 1, kNetworkCategory = 4;
constexpr int kFileActivity = 1001, kProcessActivity = 1007, kNetworkActivity = 4001;
constexpr int kHttpActivity = 4002;
constexpr int kActionAllowed = 1, kActionDenied = 2;
constexpr int kDispositionAllowed = 1, kDispositionBlocked = 2;
constexpr int kSeverityInformational = 1, kSeverityLow = 2;

int file_activity(const events::FsWrite& w) {
  switch (events::write_action(w.syscall, w.flags)) {
    case events::WriteAction::kCreate:
    case events::WriteAction::kLink:
      return 1;  // Create
    case events::WriteAction::kWrite:
      return 3;  // Update
    case events::WriteAction::kDelete:
      return 4;  // Delete
    case events::WriteAction::kRename:
      return 5;  // Rename
    case events::WriteAction::kChangeTimes:
    case events::WriteAction::kChangeAttributes:
      return 6;  // Set Attributes
    case events::WriteAction::kChangeMode:
    case events::WriteAction::kChangeOwner:
      return 7;  // Set Security
    case events::WriteAction::kRead:
      return 2;  // Read
  }
  return 99;
}

std::string base_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return name.empty() ? path : name;
}

json envelope(const events::Event& e, const OcsfContext& ctx, int category, int cls,
              int activity, bool allowed) {
  json j;
  j["class_uid"] = cls;
  j["category_uid"] = category;
  j["activity_id"] = activity;
  j["type_uid"] = cls * 100 + activity;
  j["time"] = ctx.start_ms + e.t / 1'000'000;
  j["severity_id"] = allowed ? kSeverityInformational : kSeverityLow;
  j["metadata"] = {{"version", std::string(kOcsfVersion)},
                   {"product", {{"name", "vigil"}, {"vendor_name", "vigil"},
                                {"version", ctx.product_version}}},
                   {"uid", ctx.session + "/" + std::to_string(e.seq)},
                   {"correlation_uid", ctx.session},
                   {"profiles", json::array({"security_control"})}};
  j["action_id"] = allowed ? kActionAllowed : kActionDenied;
  j["disposition_id"] = allowed ? kDispositionAllowed : kDispositionBlocked;
  return j;
}

// The sandbox as the device: one per session (its processes live in their own PID
// namespace, so a pid means something only with it).
json device(const OcsfContext& ctx) {
  return {{"type_id", 0}, {"name", "vigil sandbox"}, {"uid", ctx.session}};
}

json unmapped(const events::Event& e, json extra) {
  extra["session_seq"] = e.seq;
  if (e.cmd) extra["command"] = *e.cmd;
  return extra;
}

std::string joined_argv(const std::vector<std::string>& argv) {
  std::string cmd_line;
  for (const auto& a : argv) cmd_line += (cmd_line.empty() ? "" : " ") + a;
  return cmd_line;
}

json exe_file(const std::string& exe) {
  return {{"name", base_name(exe)}, {"path", exe}, {"type_id", 1}};
}

// OCSF's Process object for `pid` of the event's command: what its exec said (command
// line, name, executable) and its parent, one level up, the same way. A pid no exec
// told of is the pid alone.
json process_of(const events::Event& e, const OcsfContext& ctx, std::int64_t pid, int depth = 0) {
  json p = {{"pid", pid}};
  const OcsfProcess* known = ctx.processes ? ctx.processes->find(e.cmd, pid) : nullptr;
  if (known == nullptr) return p;
  p["cmd_line"] = known->cmd_line;
  if (!known->name.empty()) p["name"] = known->name;
  if (!known->exe.empty()) p["file"] = exe_file(known->exe);
  p["parent_process"] = depth == 0 ? process_of(e, ctx, known->ppid, 1) : json{{"pid", known->ppid}};
  return p;
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

void OcsfProcesses::note(const events::Event& e) {
  const auto* p = std::get_if<events::ProcExec>(&e.body);
  if (p == nullptr) return;
  const std::pair<std::uint64_t, std::int64_t> key{e.cmd.value_or(0), p->pid};
  auto it = procs_.find(key);
  if (it == procs_.end() && procs_.size() >= kMaxProcesses) return;
  OcsfProcess& known = procs_[key];
  known.cmd_line = joined_argv(p->argv);
  known.exe = p->exe;
  known.name = p->argv.empty() ? std::string() : base_name(p->argv[0]);
  known.ppid = p->ppid;
}

const OcsfProcess* OcsfProcesses::find(std::optional<std::uint64_t> cmd, std::int64_t pid) const {
  const auto it = procs_.find({cmd.value_or(0), pid});
  return it == procs_.end() ? nullptr : &it->second;
}

std::optional<std::uint64_t> session_start_ms(std::string_view id) {
  if (id.size() < 16 || id[8] != 'T' || id[15] != 'Z') return std::nullopt;
  for (const std::size_t i : {0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14}) {
    if (id[i] < '0' || id[i] > '9') return std::nullopt;
  }
  auto num = [&](std::size_t at, std::size_t n) {
    int v = 0;
    for (std::size_t i = 0; i < n; ++i) v = v * 10 + (id[at + i] - '0');
    return v;
  };
  std::tm tm{};
  tm.tm_year = num(0, 4) - 1900;
  tm.tm_mon = num(4, 2) - 1;
  tm.tm_mday = num(6, 2);
  tm.tm_hour = num(9, 2);
  tm.tm_min = num(11, 2);
  tm.tm_sec = num(13, 2);
  const std::time_t t = ::timegm(&tm);
  if (t < 0) return std::nullopt;
  return static_cast<std::uint64_t>(t) * 1000;
}

namespace {

// HTTP Activity's activity_id for a method (OCSF 1.2.0: 1 Connect ... 8 Trace, 99 Other).
int http_activity(const std::string& method) {
  static constexpr std::pair<std::string_view, int> kIds[] = {
      {"CONNECT", 1}, {"DELETE", 2}, {"GET", 3}, {"HEAD", 4},
      {"OPTIONS", 5}, {"POST", 6},   {"PUT", 7}, {"TRACE", 8}};
  for (const auto& [m, id] : kIds) {
    if (m == method) return id;
  }
  return 99;
}

// A terminated tunnel's request (net.request): HTTP Activity, never a secret (the record
// holds none: the path's query values are redacted, an injection is a flag).
std::string http_line(const events::Event& e, const OcsfContext& ctx, const events::NetRequest& r) {
  const bool allowed = r.verdict == events::NetVerdict::kAllowed;
  json j = envelope(e, ctx, kNetworkCategory, kHttpActivity, http_activity(r.method), allowed);
  j["http_request"] = {{"http_method", r.method},
                       {"url", {{"hostname", r.host}, {"port", r.port}, {"path", r.path},
                                {"scheme", "https"}}}};
  j["http_response"] = {{"code", r.status}};
  j["dst_endpoint"] = {{"hostname", r.host}, {"port", r.port}};
  j["src_endpoint"] = {{"name", "vigil sandbox"}, {"uid", ctx.session}};
  j["traffic"] = {{"bytes_out", r.bytes_up}, {"bytes_in", r.bytes_down}};
  if (!r.reason.empty()) j["message"] = r.reason;
  json extra = {{"verdict", events::to_string(r.verdict)},
                {"secret_injected", r.secret_injected}};
  if (!r.rule.empty()) extra["rule"] = r.rule;
  j["unmapped"] = unmapped(e, std::move(extra));
  return dump(j);
}

}  // namespace

std::optional<std::string> ocsf_line(const events::Event& e, const OcsfContext& ctx) {
  if (const auto* p = std::get_if<events::ProcExec>(&e.body)) {
    json j = envelope(e, ctx, kSystemCategory, kProcessActivity, 1, true);  // Launch
    json proc = {{"pid", p->pid}, {"cmd_line", joined_argv(p->argv)}};
    if (!p->argv.empty()) proc["name"] = base_name(p->argv[0]);
    if (!p->exe.empty()) proc["file"] = exe_file(p->exe);
    // The actor of a launch is the parent that exec'd or forked it.
    json parent = process_of(e, ctx, p->ppid);
    proc["parent_process"] = parent;
    j["process"] = std::move(proc);
    j["actor"] = {{"process", std::move(parent)}};
    j["device"] = device(ctx);
    j["unmapped"] = unmapped(e, {{"cwd", p->cwd}});
    return dump(j);
  }
  if (const auto* w = std::get_if<events::FsWrite>(&e.body)) {
    const bool allowed = w->verdict != Verdict::kDenied;
    json j = envelope(e, ctx, kSystemCategory, kFileActivity, file_activity(*w), allowed);
    const std::string& path = w->resolved.empty() ? w->path : w->resolved;
    const bool dir = w->syscall == "mkdir" || w->syscall == "mkdirat" || w->syscall == "rmdir";
    j["file"] = {{"name", base_name(path)}, {"path", path}, {"type_id", dir ? 2 : 0}};
    j["actor"] = {{"process", process_of(e, ctx, w->pid)}};
    j["device"] = device(ctx);
    if (!w->reason.empty()) j["message"] = w->reason;
    json extra = {{"syscall", w->syscall}, {"verdict", to_string(w->verdict)},
                  {"rule_id", shown_rule_id(*w)}};
    if (!w->from.empty()) extra["from"] = w->from_resolved.empty() ? w->from : w->from_resolved;
    if (!w->result.empty()) extra["result"] = w->result;
    if (!w->unguarded.empty()) extra["unguarded"] = w->unguarded;
    j["unmapped"] = unmapped(e, std::move(extra));
    return dump(j);
  }
  if (const auto* d = std::get_if<events::NetDecision>(&e.body)) {
    const bool allowed = d->verdict == events::NetVerdict::kAllowed;
    json j = envelope(e, ctx, kNetworkCategory, kNetworkActivity, allowed ? 1 : 5, allowed);
    json dst = {{"port", d->port}};
    const bool literal = !d->host.empty() && (d->host.find(':') != std::string::npos ||
                                              d->host.find_first_not_of("0123456789.") ==
                                                  std::string::npos);
    dst[literal ? "ip" : "hostname"] = d->host;
    j["dst_endpoint"] = std::move(dst);
    j["src_endpoint"] = {{"name", "vigil sandbox"}, {"uid", ctx.session}};
    if (!d->reason.empty()) j["message"] = d->reason;
    j["unmapped"] = unmapped(e, {{"proto", events::to_string(d->proto)},
                                 {"verdict", events::to_string(d->verdict)},
                                 {"rule_id", shown_rule_id(*d)}});
    return dump(j);
  }
  if (const auto* r = std::get_if<events::NetRequest>(&e.body)) return http_line(e, ctx, *r);
  return std::nullopt;
}

}  // namespace vigil
