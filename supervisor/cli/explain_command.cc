// `vigil explain`: the bwrap argv one mount per line with the rule behind it, and
// `--path P`: the read/write verdict for one path with its reason, and `--filters`: the
// seccomp filters' BPF, annotated with the table rows (filters/bpf_disasm.h).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "bwrap/argv_builder.h"
#if !defined(__APPLE__)
#include "filters/bpf_disasm.h"
#endif
#include "observer/bridge.h"
#include "supervisor/launch/deny_at_call.h"
#include "seatbelt/profile_builder.h"
#include "supervisor/cli/commands.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/display_text.h"
#include "supervisor/core/policy/path_expand.h"
#include "supervisor/launch/external_proxy.h"
#include "supervisor/launch/git_safe_env.h"
#include "supervisor/launch/init_locator.h"
#include "supervisor/launch/sandbox_plan.h"
#if !defined(__APPLE__)
#include "supervisor/launch/write_at_call.h"
#endif
#include "supervisor/report/write_hint.h"

namespace vigil {

namespace {

std::string quote(const std::string& s) {
  // For display only (the real argv never passes through a shell).
  if (!s.empty() && s.find_first_of(" \t\n'\"\\$`") == std::string::npos) return s;
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// Stands for the per-session temp dir, which only a real session creates.
constexpr const char* kExplainTmp = "/tmp/vigil-session/tmp";

// The plan `vigil run` would build for these settings (warnings printed), for both the
// bwrap and the Seatbelt rendering.
Result<PreparedSandbox> prepare_for_explain(const ExplainArgs& args) {
  PlanRequest req;
  req.settings_path = args.settings;
  req.allow_writable_settings = args.allow_writable_settings;
  req.session_tmp = kExplainTmp;
  req.resolve_session_tmp = false;
  // As `vigil run` here would.
  req.placeholders = !gatekeeper_in_force();
  req.refuse_missing_at_call = gatekeeper_in_force();
  auto prepared = prepare_sandbox(req);
  if (prepared) {
    for (const auto& w : prepared->warnings) print_warning(w);
  }
  return prepared;
}

// What the proxy will let through, in the words a user edits (network.*). Pure.
std::vector<std::string> network_lines(const NetworkPolicy& net) {
  auto list = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
  };
  std::vector<std::string> out;
  out.push_back(
      "network: the sandbox has its own network namespace; every connection out goes "
      "through vigil's proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY), and its loopback is its "
      "own (NO_PROXY=localhost,127.0.0.1,::1)");
  if (net.allowed_domains.empty()) {
    out.push_back(
        "network: allowed hosts: none, every host is refused (list hosts in "
        "network.allowedDomains)");
  } else {
    out.push_back("network: allowed hosts (network.allowedDomains): " + list(net.allowed_domains));
  }
  if (!net.denied_domains.empty())
    out.push_back("network: refused hosts, even when allowed (network.deniedDomains): " +
                  list(net.denied_domains));
  if (!net.denied_resolved_addresses.empty())
    out.push_back("network: refused addresses (network.deniedResolvedAddresses): " +
                  list(net.denied_resolved_addresses));
  for (auto& l : external_proxy_lines(net)) out.push_back(std::move(l));
  if (net.allow_all_unix_sockets) {
    out.push_back(
        "network: WARNING: every unix socket is allowed (network.allowAllUnixSockets): the "
        "command can reach any host service with a socket it can see, past the proxy");
  } else if (!net.allow_unix_sockets.empty()) {
    out.push_back(
        "network: unix sockets (network.allowUnixSockets, exact paths, connected by "
        "vigil-init; stream and seqpacket only): " +
        list(net.allow_unix_sockets));
  } else {
    out.push_back(
        "network: unix sockets: none (socket(AF_UNIX) is refused; list paths in "
        "network.allowUnixSockets)");
  }
  return out;
}

// The write verdict `vigil run` gives `path` (issue 38.1), with the reason its block would
// give: what vigil-init refuses at the call by the same functions (write_at_call.h), and
// for a write the default rule refuses the fix that works for that path, by the hint the
// block uses (report/write_hint.h): never an allowWrite entry for a protected name.
Decision explain_write(const PreparedSandbox& prepared, const std::string& path) {
#if defined(__APPLE__)
  Decision w = decide(prepared.plan, path, Access::kWrite);
#else
  Decision w = write_verdict(prepared.plan, prepared.policy.fs, path, gatekeeper_in_force());
#endif
  if (w.verdict == Verdict::kDenied && w.rule == "default")
    w.reason = default_deny_hint(path, prepared.policy);
  return w;
}

}  // namespace

int cmd_explain(const ExplainArgs& args) {
  if (args.filters) {  // the filters do not depend on the policy
#if defined(__APPLE__)
    return report(make_error(Errc::kUnsupported, "--filters: seccomp filters are Linux-only"));
#else
    auto text = explain_filters();
    if (!text) return report(text.error());
    // display-safe: BPF disassembly: table names and numbers only
    std::fputs(text->c_str(), stdout);
    return 0;
#endif
  }
  auto prepared = prepare_for_explain(args);
  if (!prepared) return report(prepared.error());

  if (args.path) {
    auto cwd = current_dir();
    if (!cwd) return report(cwd.error());
    const std::string abs = (*args.path)[0] == '/' ? *args.path : *cwd + "/" + *args.path;
    const std::string resolved = resolve_symlinks(abs);
    const Decision r = decide(prepared->plan, resolved, Access::kRead);
    const Decision w = explain_write(*prepared, resolved);
    std::printf("path:  %s\n", escape_text(resolved).c_str());
    std::printf("read:  %s (%s: %s)\n", to_string(r.verdict), escape_text(r.rule).c_str(),
                escape_text(r.reason).c_str());
    std::printf("write: %s (%s: %s)\n", to_string(w.verdict), escape_text(w.rule).c_str(),
                escape_text(w.reason).c_str());
    return 0;
  }

  std::printf("# policy: %s\n", escape_text(prepared->policy.source).c_str());
  std::printf("# settings: %s\n", escape_text(prepared->settings_origin).c_str());
  // Which form of a deny glob applies where: mounts for what existed at launch, a check
  // at the call for names created later.
  for (const auto& l : glob_explain_lines(prepared->policy.fs, gatekeeper_in_force()))
    std::printf("# %s\n", escape_text(l).c_str());
  std::printf("# bwrap argv, one option per line, with the rule that produced it\n");
  BwrapInputs in;
  in.plan = &prepared->plan;
  in.cwd = prepared->policy.cwd;
  in.setenv = {{"TMPDIR", kExplainTmp}};
  in.kernel_masks = present_kernel_masks();
  in.weaker_nested = prepared->policy.weaker_nested_sandbox;
  in.empty_file = "/tmp/vigil-session/empty";  // as kExplainTmp: the session's, at run time
  in.json_status_fd = 3;
  in.command = {"CMD..."};
  auto init = locate_vigil_init();
  in.init = init ? *init : "vigil-init";
  for (const auto& a : build_bwrap_args(in)) {
    std::string line;
    // Escaped first: quote() then sees the backslashes of the escapes and quotes the word.
    for (const auto& t : a.tokens) line += (line.empty() ? "" : " ") + quote(escape_text(t));
    // display-safe: each token of line went through escape_text() above
    std::printf("%-60s # %s\n", line.c_str(), escape_text(a.rule).c_str());
  }
  for (const auto& op : prepared->plan.ops) {
    if (!op.at_call) continue;
    std::printf("# refused when created (by vigil-init, at the call; no mount): %s  # %s: %s\n",
                escape_text(op.path).c_str(), escape_text(op.origin).c_str(),
                escape_text(op.why).c_str());
  }
  if (const auto l = reads_explain_line(prepared->policy.vigil.observer_reads, prepared->plan);
      !l.empty())
    std::printf("# %s\n", escape_text(l).c_str());
  for (const auto& n : prepared->plan.notes) std::printf("# note: %s\n", escape_text(n).c_str());
  for (const auto& l : network_lines(prepared->policy.net))
    std::printf("# %s\n", escape_text(l).c_str());
  for (const auto& l : git_safe_directory_lines(prepared->policy.git_safe_directories))
    std::printf("# %s\n", escape_text(l).c_str());
  return 0;
}

// `vigil explain --platform macos`: the Seatbelt profile the same plan becomes, and the
// values sandbox-exec would get as -D NAME=VALUE, printed on any OS. The log tag and the
// proxy ports stand for the ones a session picks. Verdicts (--path) are the resolver's,
// the same on both platforms.
int cmd_explain_macos(const ExplainArgs& args) {
  if (args.path || args.filters) return cmd_explain(args);
  auto prepared = prepare_for_explain(args);
  if (!prepared) return report(prepared.error());
  const SeatbeltSession session{"vigil_explain_session",
                                {init::kHttpProxyPort, init::kSocksProxyPort}};
  auto profile =
      build_seatbelt_profile(SeatbeltInputs{&prepared->policy, &prepared->plan, session});
  if (!profile) return report(profile.error());
  for (const auto& w : profile->warnings) print_warning(w);
  // display-safe: sbpl_string() refuses control and non-ASCII bytes; paths are -D parameters
  std::fputs(profile->text.c_str(), stdout);
  // Values are paths: shown C-escaped, so a newline in one cannot fake a line here.
  std::printf("; sandbox-exec parameters (-D NAME=VALUE), with the rule behind each:\n");
  for (const auto& p : profile->params) {
    std::printf(";   %s=%s  (%s)\n", escape_text(p.name).c_str(), escape_text(p.value).c_str(),
                escape_text(p.origin).c_str());
  }
  for (const auto& n : prepared->plan.notes) std::printf("; note: %s\n", escape_text(n).c_str());
  return 0;
}

}  // namespace vigil
