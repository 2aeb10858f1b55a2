#include "supervisor/launch/launch_trace.h"

#include "supervisor/core/base/diagnostics.h"

namespace vigil {
namespace {

std::string joined(const std::vector<std::string>& tokens) {
  std::string out;
  for (const auto& t : tokens) {
    if (!out.empty()) out += ' ';
    // An empty token or one with a space would read as something else: quoted.
    out += t.empty() || t.find(' ') != std::string::npos ? "'" + t + "'" : t;
  }
  return out;
}

}  // namespace

std::vector<std::string> plan_trace_lines(const Plan& plan) {
  std::vector<std::string> out;
  out.push_back("plan: " + std::to_string(plan.ops.size()) + " mounts");
  for (const auto& op : plan.ops) {
    std::string line = std::string("mount: ") + to_string(op.kind) + " " + op.path;
    if (!op.origin.empty()) line += " (" + op.origin + ")";
    if (op.at_call) {
      line += " [at call, no mount]";
    } else if (!op.exists) {
      line += " [placeholder]";
    }
    out.push_back(std::move(line));
  }
  for (const auto& note : plan.notes) out.push_back("plan note: " + note);
  return out;
}

std::vector<std::string> bwrap_trace_lines(const std::string& bwrap_path,
                                           const std::vector<BwrapArg>& args) {
  std::vector<std::string> out;
  const std::size_t options = args.empty() ? 0 : args.size() - 1;
  out.push_back("bwrap: " + bwrap_path + " --args FD (" + std::to_string(options) +
                " option groups)");
  for (std::size_t i = 0; i < options; ++i) {
    std::string line = "bwrap: " + joined(args[i].tokens);
    if (!args[i].rule.empty()) line += " # " + args[i].rule;
    out.push_back(std::move(line));
  }
  if (!args.empty()) out.push_back("bwrap: " + joined(args.back().tokens));
  return out;
}

void trace_plan(const Plan& plan) {
  if (!debug_enabled()) return;
  for (const auto& line : plan_trace_lines(plan)) print_debug(line);
}

void trace_bwrap_args(const std::string& bwrap_path, const std::vector<BwrapArg>& args) {
  if (!debug_enabled()) return;
  for (const auto& line : bwrap_trace_lines(bwrap_path, args)) print_debug(line);
}

}  // namespace vigil
