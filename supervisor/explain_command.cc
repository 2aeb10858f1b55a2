// `vigil explain`: the bwrap argv one mount per line with the rule behind it, and
// `--path P`: the read/write verdict for one path with its reason.
#include <cstdio>

#include "bwrap/argv_builder.h"
#include "supervisor/commands.h"
#include "supervisor/core/path_expand.h"
#include "supervisor/init_locator.h"
#include "supervisor/sandbox_plan.h"

namespace vigil {

int report(const Error& e);

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

}  // namespace

int cmd_explain(const ExplainArgs& args) {
  PlanRequest req{args.settings, args.allow_writable_settings, "$TMPDIR"};
  req.session_tmp = "/tmp/vigil-session/tmp";  // stands for the per-session temp dir
  auto prepared = prepare_sandbox(req);
  if (!prepared) return report(prepared.error());
  for (const auto& w : prepared->warnings) std::fprintf(stderr, "vigil: warning: %s\n", w.c_str());

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
  std::printf("# bwrap argv, one option per line, with the rule that produced it\n");
  BwrapInputs in;
  in.plan = &prepared->plan;
  in.cwd = prepared->policy.cwd;
  in.setenv = {{"TMPDIR", "/tmp/vigil-session/tmp"}};
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

}  // namespace vigil
