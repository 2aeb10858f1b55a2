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
#include "seatbelt/profile_builder.h"
#include "supervisor/commands.h"
#include "supervisor/core/path_expand.h"
#include "supervisor/init_locator.h"
#include "supervisor/sandbox_plan.h"

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
  auto prepared = prepare_sandbox(req);
  if (prepared) {
    for (const auto& w : prepared->warnings)
      std::fprintf(stderr, "vigil: warning: %s\n", w.c_str());
  }
  return prepared;
}

// Which form of a deny glob applies where: mounts for what existed at launch, nothing
// yet for names created later (that needs a check at the call).
void explain_globs(const std::vector<GlobRule>& globs, const char* made) {
  for (const auto& g : globs) {
    std::printf(
        "# glob %s %s: %zu existing match%s %s at launch by the mounts below%s; a "
        "name created later is not covered (it needs a check at the call)\n",
        g.origin.c_str(), nlohmann::json(g.pattern).dump().c_str(), g.matches,
        g.matches == 1 ? "" : "es", made, g.truncated ? " (the walk hit its limit: not all)" : "");
  }
}

}  // namespace

int cmd_explain(const ExplainArgs& args) {
  if (args.filters) {  // the filters do not depend on the policy
#if defined(__APPLE__)
    return report(make_error(Errc::kUnsupported, "--filters: seccomp filters are Linux-only"));
#else
    auto text = explain_filters();
    if (!text) return report(text.error());
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
    const Decision w = decide(prepared->plan, resolved, Access::kWrite);
    std::printf("path:  %s\n", resolved.c_str());
    std::printf("read:  %s (%s: %s)\n", to_string(r.verdict), r.rule.c_str(), r.reason.c_str());
    std::printf("write: %s (%s: %s)\n", to_string(w.verdict), w.rule.c_str(), w.reason.c_str());
    return 0;
  }

  std::printf("# policy: %s\n", prepared->policy.source.c_str());
  std::printf("# settings: %s\n", prepared->settings_origin.c_str());
  explain_globs(prepared->policy.fs.deny_read_globs, "hidden");
  explain_globs(prepared->policy.fs.deny_write_globs, "read-only");
  std::printf("# bwrap argv, one option per line, with the rule that produced it\n");
  BwrapInputs in;
  in.plan = &prepared->plan;
  in.cwd = prepared->policy.cwd;
  in.setenv = {{"TMPDIR", kExplainTmp}};
  in.json_status_fd = 3;
  in.command = {"CMD..."};
  auto init = locate_vigil_init();
  in.init = init ? *init : "vigil-init";
  for (const auto& a : build_bwrap_args(in)) {
    std::string line;
    for (const auto& t : a.tokens) line += (line.empty() ? "" : " ") + quote(t);
    std::printf("%-60s # %s\n", line.c_str(), a.rule.c_str());
  }
  for (const auto& n : prepared->plan.notes) std::printf("# note: %s\n", n.c_str());
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
  for (const auto& w : profile->warnings) std::fprintf(stderr, "vigil: warning: %s\n", w.c_str());
  std::fputs(profile->text.c_str(), stdout);
  // Values are paths: shown C-escaped, so a newline in one cannot fake a line here.
  std::printf("; sandbox-exec parameters (-D NAME=VALUE), with the rule behind each:\n");
  for (const auto& p : profile->params) {
    std::string v;
    for (const char c : p.value) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '\\') {
        v += "\\\\";
      } else if (u < 0x20 || u == 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", u);
        v += buf;
      } else {
        v += c;
      }
    }
    std::printf(";   %s=%s  (%s)\n", p.name.c_str(), v.c_str(), p.origin.c_str());
  }
  for (const auto& n : prepared->plan.notes) std::printf("; note: %s\n", n.c_str());
  return 0;
}

}  // namespace vigil
