// One word for every write: `replay --writes`, the <sandbox_violations> block and the HTML
// report say the same word for the same call, for every row of the syscall table (and
// the flag variants that change a row's word) and every Seatbelt operation macOS reports.
// The word is to_string(events::write_action()), stored per row in the table.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "supervisor/core/events/syscall_table.h"
#include "supervisor/report/annotation.h"
#include "supervisor/replay/replay_command.h"
#include "supervisor/replay/replay_rows.h"

namespace vigil::replay {
namespace {

using namespace vigil::events;

struct Call {
  std::string syscall;
  std::uint64_t flags = 0;
};

// Every row (execs aside: they are proc.exec, not writes) with each flag set that can
// change its word: an open's create bits, O_TRUNC, O_APPEND; unlinkat's AT_REMOVEDIR.
std::vector<Call> every_call() {
  std::vector<Call> out;
  for (const WriteSyscall& row : write_syscalls()) {
    if (row.emulation == Emulation::kExec) continue;
    const std::string name(row.name);
    out.push_back({name, 0});
    if (row.emulation == Emulation::kOpen && row.flags >= 0) {
      for (std::uint64_t f : {O_WRONLY, O_RDWR | O_APPEND, O_WRONLY | O_CREAT,
                              O_WRONLY | O_CREAT | O_APPEND, O_WRONLY | O_CREAT | O_TRUNC,
                              O_WRONLY | O_CREAT | O_EXCL, O_WRONLY | O_TRUNC})
        out.push_back({name, f});
    }
    if (row.at_flags >= 0 && row.emulation == Emulation::kUnlink)
      out.push_back({name, AT_REMOVEDIR});
  }
  for (const char* op : {"file-write-create", "file-write-data", "file-write-flags",
                         "file-write-mode", "file-write-owner", "file-write-setugid",
                         "file-write-times", "file-write-unlink", "file-write-xattr",
                         "file-link"})
    out.push_back({op, 0});
  return out;
}

// A log of one session holding one denied write of `c` on `path`.
LoadedLog one_write(const Call& c, const std::string& path) {
  LoadedLog log;
  auto add = [&log](Source src, Body b) {
    Event e;
    e.seq = log.records.size();
    e.t = e.seq * 1000;
    e.session = "s-1";
    e.src = src;
    e.prev = std::string(kGenesisPrev);
    e.body = std::move(b);
    log.records.push_back(LogRecord{log.records.size(), serialize(e), e});
    ++log.lines;
  };
  add(Source::kSupervisor, SessionStart{{"sh"}, "/w", "bwrap", "", {}, "/s.jsonl", {}});
  const bool two_names = c.syscall.find("rename") != std::string::npos ||
                         c.syscall.find("link") != std::string::npos;
  add(Source::kObserver, FsWrite{7, c.syscall, path, path, c.flags, Verdict::kDenied,
                                 "outside the writable roots", two_names ? "/w/from" : "",
                                 two_names ? "/w/from" : "", "", "EACCES"});
  return log;
}

// The text just before `path` on the line that holds it, without its trailing spaces
// (and without a "from -> " a two-name call's target starts with).
std::string before_path(const std::string& text, const std::string& path) {
  const std::size_t at = text.find(path);
  if (at == std::string::npos) return "<path not found>";
  const std::size_t line = text.rfind('\n', at);
  std::string head = text.substr(line == std::string::npos ? 0 : line + 1,
                                 at - (line == std::string::npos ? 0 : line + 1));
  for (const std::string arrow : {"/w/from -> "})
    if (head.ends_with(arrow)) head.resize(head.size() - arrow.size());
  while (!head.empty() && head.back() == ' ') head.pop_back();
  return head;
}

TEST(WriteWordsTest, EveryCallHasOneWordInTheWritesViewTheBlockAndTheHtml) {
  int n = 0;
  for (const Call& c : every_call()) {
    const std::string path = "/w/target" + std::to_string(n++);
    SCOPED_TRACE(c.syscall + " flags " + std::to_string(c.flags));
    ASSERT_TRUE(is_known_write_syscall(c.syscall));
    const std::string word = events::to_string(events::write_action(c.syscall, c.flags));
    const LoadedLog log = one_write(c, path);

    // replay --writes: "<time> <pid> DENIED <word> <target>  [syscall flags]".
    const std::string writes = render_writes(log);
    EXPECT_TRUE(before_path(writes, path).ends_with(" " + word)) << writes;

    // The block: "deny <word> <target> (<reason>)".
    std::vector<Event> events;
    for (const auto& r : log.records) events.push_back(r.event);
    const std::string block = annotation_from_events(events, AnnotationOptions{});
    EXPECT_EQ(before_path(block, path), "deny " + word) << block;

    // The HTML report: the denied table and each row's detail "<word> <target>  [call]".
    VerifyReport v;
    v.ok = true;
    v.complete = true;
    v.records = log.records.size();
    const std::string html = render_html(log, v, "s.jsonl");
    const auto& w = std::get<FsWrite>(log.records[1].event.body);
    EXPECT_NE(html.find("<td class=\"v\">denied</td><td>" + word + "</td><td class=\"p\">" +
                        path + "</td>"),
              std::string::npos)
        << "the denied table";
    EXPECT_NE(html.find("<td class=\"p\">" + word + " " + escape_for_html(fs_target(w)) + "  ["),
              std::string::npos)
        << "the timeline's and the files' rows";
  }
}

// Past the HTML's listed rows, the files' table groups rows by "<verdict> <word> in <dir>/":
// the same word again.
TEST(WriteWordsTest, TheHtmlGroupsPastItsListedRowsByTheSameWord) {
  LoadedLog log = one_write({"openat", O_WRONLY}, "/w/filler");
  const Event filler = log.records[1].event;
  auto add = [&log](Event e) {
    e.seq = log.records.size();
    log.records.push_back(LogRecord{log.records.size(), serialize(e), e});
    ++log.lines;
  };
  for (std::size_t i = 1; i < kHtmlListedRows; ++i) add(filler);
  const std::vector<Call> calls = every_call();
  for (std::size_t i = 0; i < calls.size(); ++i) {
    Event e = filler;
    auto& w = std::get<FsWrite>(e.body);
    w.syscall = calls[i].syscall;
    w.flags = calls[i].flags;
    w.path = w.resolved = "/w/d" + std::to_string(i) + "/f";
    add(e);
  }
  VerifyReport v;
  v.ok = true;
  v.complete = true;
  const std::string html = render_html(log, v, "s.jsonl");
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const std::string word = events::to_string(events::write_action(calls[i].syscall, calls[i].flags));
    EXPECT_NE(html.find("denied " + word + " in /w/d" + std::to_string(i) + "/"), std::string::npos)
        << calls[i].syscall << " " << calls[i].flags;
  }
}

// The words the views used to disagree on (#36): `echo x >> existing` is a write, not a
// create; a file made with O_EXCL is a create; mkdir a create; chmod a change of mode.
TEST(WriteWordsTest, TheWordsThatDiffered) {
  EXPECT_STREQ(events::to_string(events::write_action("openat", O_WRONLY | O_CREAT | O_APPEND)), "write");
  EXPECT_STREQ(events::to_string(events::write_action("openat", O_WRONLY | O_CREAT | O_EXCL)), "create");
  EXPECT_STREQ(events::to_string(events::write_action("creat", 0)), "create");
  EXPECT_STREQ(events::to_string(events::write_action("mkdirat", 0)), "create");
  EXPECT_STREQ(events::to_string(events::write_action("unlinkat", AT_REMOVEDIR)), "delete");
  EXPECT_STREQ(events::to_string(events::write_action("symlinkat", 0)), "link");
  EXPECT_STREQ(events::to_string(events::write_action("fchmodat", 0)), "change mode");
  EXPECT_STREQ(events::to_string(events::write_action("truncate", 0)), "write");
}

}  // namespace
}  // namespace vigil::replay
