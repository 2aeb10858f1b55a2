// `vigil verify --stream FILE`: what a collector wrote from `vigil export --follow`, checked
// for gaps, reorderings, duplicates and chain breaks across every session and machine in
// it (supervisor/export/stream_verify.h). Exit 0 when intact, 1 when not (each problem
// named on stdout), 2 when the file cannot be read.
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>

#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/base/regular_file.h"
#include "supervisor/export/stream_verify.h"
#include "supervisor/log/log_stream.h"

namespace vigil {
namespace {

struct VerifyArgs {
  std::string stream;
  bool exactly_once = false;
};

int run_verify(const VerifyArgs& a) {
  auto fd = open_regular_file(a.stream, "collected stream");
  if (!fd) return report(fd.error());
  // A syslog message vigil sends is at most 64 KiB; a longer line is malformed.
  LineReader in(fd->get(), 1024 * 1024);
  StreamVerifier v;
  std::string line;
  while (true) {
    const auto got = in.next(&line);
    if (got == LineReader::Got::kError) return report(system_error("cannot read " + a.stream));
    if (got == LineReader::Got::kEnd) break;
    if (got == LineReader::Got::kTooLong) {
      v.add_line("[vigil@32473 malformed]");
      continue;
    }
    v.add_line(line);
    if (got == LineReader::Got::kTail) break;
  }
  const StreamReport r = v.finish();
  // display-safe: every field from the stream went through escape_text
  std::fputs(render_stream_report(r, a.stream, a.exactly_once).c_str(), stdout);
  return r.ok(a.exactly_once) ? 0 : 1;
}

}  // namespace

std::function<int()> add_verify_command(CLI::App& app) {
  auto args = std::make_shared<VerifyArgs>();
  auto* cmd = app.add_subcommand("verify", "check a collected stream of exported records");
  cmd->add_option("--stream", args->stream,
                  "the file a collector (rsyslog) wrote from vigil export --follow")
      ->required();
  cmd->add_flag("--exactly-once", args->exactly_once,
                "a redelivered record (same chain hash) counts as a problem too");
  return [args] { return run_verify(*args); };
}

}  // namespace vigil
