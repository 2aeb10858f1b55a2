#!/usr/bin/env python3
"""tools/check_layering.py's own test (run by tools/test.sh): the real tree passes, and a
scratch tree holding one planted file fails, naming that file, for each kind of violation
the check exists for. Nothing in the checkout is modified."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CHECK = os.path.join(HERE, "check_layering.py")

# (file to plant into, line appended, expected to fail). The clean rows prove the check
# does not refuse what the architecture allows (a check failing everything passes nothing).
PLANTS = [
    ("filters/planted.cc", '#include "supervisor/log/session_log.h"', True),
    ("bwrap/planted.h", '#include "supervisor/report/annotation.h"', True),
    ("seatbelt/planted.cc", '#include "proxy/egress.h"', True),
    ("proxy/planted.cc", '#include "observer/worker.h"', True),
    ("observer/planted.cc", '#include "supervisor/orchestrator/session_runner.h"', True),
    ("supervisor/core/planted.cc", '#include "filters/sandbox_program.h"', True),
    ("supervisor/core/planted.h", '#include "supervisor/report/annotation.h"', True),
    # Inside the foundation: base <- policy <- fs <- events, never the other way.
    ("supervisor/core/base/planted.cc", '#include "supervisor/core/policy/policy.h"', True),
    ("supervisor/core/policy/planted.h", '#include "supervisor/core/events/event_schema.h"', True),
    ("supervisor/core/policy/planted.cc", '#include "supervisor/core/fs/path_verdict.h"', True),
    ("supervisor/core/fs/planted.cc", '#include "supervisor/core/events/syscall_table.h"', True),
    ("supervisor/core/events/planted.cc", '#include "supervisor/backstop/backstop.h"', True),
    # wire/ (vigil-init's command line) holds plain values: base only.
    ("supervisor/core/wire/planted.cc", '#include "supervisor/core/policy/policy.h"', True),
    ("supervisor/core/wire/planted.h", '#include "observer/notify_loop.h"', True),
    # supervisor/'s floors: cli -> agent -> orchestrator -> command -> backstop and
    # cli -> replay, both over {launch, log, report}.
    ("supervisor/agent/planted.cc", '#include "supervisor/cli/commands.h"', True),
    ("supervisor/agent/planted.h", '#include "supervisor/replay/replay_feed.h"', True),
    ("supervisor/orchestrator/planted.cc", '#include "supervisor/agent/agent_session.h"', True),
    ("supervisor/command/planted.cc", '#include "supervisor/orchestrator/session_record.h"', True),
    ("supervisor/command/planted.h", '#include "supervisor/agent/rpc_out.h"', True),
    ("supervisor/backstop/planted.cc", '#include "supervisor/command/session_dir.h"', True),
    ("supervisor/backstop/planted.cc", '#include "supervisor/replay/change_set.h"', True),
    ("supervisor/replay/planted.cc", '#include "supervisor/command/session_dir.h"', True),
    ("supervisor/replay/planted.cc", '#include "supervisor/cli/commands.h"', True),
    ("supervisor/launch/planted.cc", '#include "supervisor/command/session_dir.h"', True),
    ("supervisor/launch/planted.cc", '#include "supervisor/log/session_log.h"', True),
    ("supervisor/log/planted.cc", '#include "supervisor/report/annotation.h"', True),
    ("supervisor/report/planted.h", '#include "supervisor/launch/sandbox_plan.h"', True),
    ("supervisor/report/planted.cc", '#include "supervisor/replay/replay_feed.h"', True),
    ("supervisor/run_planted.cc", "void f(int fd) { ::close(fd); }", True),
    ("proxy/planted.cc", "void f(int fd) {\n  close(fd);\n}", True),
    ("observer/planted.cc", "long f(int fd) { return syscall(SYS_close, fd); }", True),
    ("tests/unit/planted_test.cc", "void f(int fd) { close (fd); }", True),
    # Every folder of product code is a part or a room of one.
    ("proxy/unlisted/planted.cc", "int x;", True),
    # Unit tests mirror the source folders.
    ("tests/unit/supervisor/session/planted_test.cc", "int x;", True),
    ("tests/unit/nowhere/planted_test.cc", "int x;", True),
    # A benchmark stands on the product, never on a test's harness.
    ("tools/bench/planted.cc", '#include "tests/support/bounded_wait.h"', True),
    # Allowed: downward includes, members named close, other closing functions, comments.
    ("filters/planted.cc", '#include "supervisor/core/base/result.h"', False),
    ("observer/planted.cc", '#include "filters/sandbox_program.h"', False),
    ("supervisor/core/events/planted.cc", '#include "supervisor/core/fs/path_verdict.h"', False),
    ("supervisor/core/fs/planted.cc", '#include "supervisor/core/policy/policy.h"', False),
    ("supervisor/core/wire/planted.cc", '#include "supervisor/core/base/result.h"', False),
    ("observer/planted.cc", '#include "supervisor/core/wire/init_args.h"', False),
    ("supervisor/planted.cc", '#include "supervisor/core/wire/init_args.h"', False),
    ("tools/bench/planted.cc", '#include "tools/bench/proxy_load.h"', False),
    ("tests/unit/common/planted.h", "int x;", False),
    ("tests/integration/planted_test.cc", '#include "tools/bench/proxy_load.h"', False),
    ("supervisor/cli/planted.cc", '#include "supervisor/orchestrator/session_runner.h"', False),
    ("supervisor/cli/planted.cc", '#include "supervisor/replay/replay_feed.h"', False),
    ("supervisor/agent/planted.cc", '#include "supervisor/launch/sandbox_plan.h"', False),
    ("supervisor/agent/planted.cc", '#include "supervisor/orchestrator/session_runner.h"', False),
    ("supervisor/orchestrator/planted.cc", '#include "supervisor/command/sandboxed_command.h"', False),
    ("supervisor/command/planted.cc", '#include "supervisor/backstop/backstop.h"', False),
    ("supervisor/backstop/planted.cc", '#include "supervisor/report/policy_judge.h"', False),
    ("supervisor/replay/planted.cc", '#include "supervisor/log/session_log.h"', False),
    ("supervisor/launch/planted.cc", '#include "bwrap/argv_builder.h"', False),
    ("supervisor/planted.cc", '#include "proxy/egress.h"', False),
    ("supervisor/planted.cc", "void f(Log& l, Log* p) { l.close(); p->close(); Log::close(); }", False),
    ("supervisor/planted.cc", "void f(FILE* f) { fclose(f); pclose(f); } // ::close(fd) here", False),
    ("supervisor/planted.cc", 'const char* s = "close(fd)";', False),
]

# Trees of several files, for the checks that look across files: include loops and stale
# paths in comments. (files, expected to fail, the file the failure must name).
TREES = [
    # Two units that include each other (the source of one includes the header of the other).
    ({"observer/a.h": "", "observer/a.cc": '#include "observer/b.h"',
      "observer/b.h": '#include "observer/a.h"'}, True, "observer/a.cc"),
    # Three in a ring, through .cc files only.
    ({"proxy/a.h": "", "proxy/a.cc": '#include "proxy/b.h"', "proxy/b.h": "",
      "proxy/b.cc": '#include "proxy/c.h"', "proxy/c.h": "",
      "proxy/c.cc": '#include "proxy/a.h"'}, True, "proxy/a.cc"),
    # A chain is not a loop; nor is a .cc that includes its own header.
    ({"proxy/a.h": "", "proxy/a.cc": '#include "proxy/a.h"\n#include "proxy/b.h"',
      "proxy/b.h": '#include "proxy/c.h"', "proxy/c.h": ""}, False, None),
    # Tests may include each other's helpers: not product units.
    ({"tests/x.h": '#include "tests/y.h"', "tests/y.h": '#include "tests/x.h"'}, False, None),
    # A comment naming a file that is not there, by a full path, a folder-relative path
    # (as comments abbreviate supervisor/...) and a bare name.
    ({"observer/a.cc": "// see observer/gone.h for why"}, True, "observer/a.cc"),
    ({"supervisor/cli/a.cc": "// the table (core/gone_table.h)", "supervisor/core/base/x.h": ""},
     True, "supervisor/cli/a.cc"),
    ({"proxy/a.cc": "// as in gone_helper.cc"}, True, "proxy/a.cc"),
    ({"tools/a.py": "# reads proxy/gone.h", "proxy/x.h": ""}, True, "tools/a.py"),
    # Not comments: a string, an include line, a URL.
    ({"proxy/a.cc": 'const char* s = "proxy/gone.h"; // https://example.test/x.h',
      "proxy/b.cc": '#include "proxy/gone.h"', "tools/a.py": 'p = "proxy/gone.h"'}, False, None),
    # Names that exist, system headers, placeholders and paths outside the repository.
    ({"observer/a.cc": "// see observer/b.h and b.h; <fcntl.h> (fcntl.h)",
      "observer/b.h": "",
      "supervisor/core/policy/c.h": "// core/policy/c.h, policy/c.h, tests/fuzz/NAME.cc, "
                                    "include/uapi/linux/seccomp.h"}, False, None),
]


# Function bodies of N lines, for the length check (brace to brace, both counted).
def body(name, lines, head="int {}(int a)"):
    return head.format(name) + " {\n" + "  a += 1;\n" * (lines - 2) + "}\n"


LONG = body("too_long", 101)
TREES += [
    # One line too many, in a .cc and as a member defined in a class in a header.
    ({"proxy/a.cc": LONG}, True, "proxy/a.cc"),
    ({"observer/a.h": "struct A {\n" + body("member", 101, "  int {}(int a) const") + "};"},
     True, "observer/a.h"),
    # A lambda's lines are its function's.
    ({"bwrap/a.cc": "void f() {\n  auto g = [](int a) {\n" + "    a += 1;\n" * 99 + "  };\n}"},
     True, "bwrap/a.cc"),
    # An allowlist entry that names no long function (any more): the list only shrinks.
    ({"proxy/a.cc": body("short", 10), "tools/long_functions_allowlist.txt": "proxy/a.cc:short"},
     True, "tools/long_functions_allowlist.txt"),
    # Allowed: exactly 100 lines; a long function listed; long tests and tools; a long
    # table (an initialiser, not a function); a namespace and a class are no function.
    ({"proxy/a.cc": "namespace x {\nstruct S {\n" + body("exactly", 100) + "};\n}"}, False, None),
    ({"proxy/a.cc": LONG, "tools/long_functions_allowlist.txt": "# owned by x\nproxy/a.cc:too_long"},
     False, None),
    ({"tests/unit/proxy/a_test.cc": LONG, "proxy/a.cc": "", "tools/a.cc": LONG}, False, None),
    # A unit test mirrors a source folder that exists.
    ({"tests/unit/proxy/a_test.cc": "int x;", "proxy/a.cc": ""}, False, None),
    ({"tests/unit/a_test.cc": "int x;"}, True, "tests/unit/a_test.cc"),
    ({"filters/a.cc": "constexpr int kTable[] = {\n" + "  f(1),\n" * 120 + "};"}, False, None),
    # One type name in one namespace, twice: in two headers, and a header and a .cc.
    ({"supervisor/agent/a.h": "namespace vigil {\nstruct Run {\n  int a;\n};\n}  // namespace vigil",
      "supervisor/command/b.h": "namespace vigil {\nclass Run {\n  int b;\n};\n}  // namespace vigil"},
     True, "supervisor/command/b.h"),
    ({"proxy/a.h": "namespace vigil::proxy {\nstruct Hop {\n};\n}  // namespace vigil::proxy",
      "proxy/b.cc": "namespace vigil::proxy {\nstruct Hop {\n};\n}  // namespace vigil::proxy"},
     True, "proxy/b.cc"),
    # Allowed: other namespaces, anonymous namespaces, declarations, nested names.
    ({"proxy/a.h": "namespace vigil::proxy {\nstruct Hop {\n};\n}  // namespace vigil::proxy",
      "observer/b.h": "namespace vigil::init {\nstruct Hop {\n};\n}  // namespace vigil::init",
      "observer/c.cc": "namespace vigil::init {\nnamespace {\nstruct Hop {\n};\n}  // namespace\n}  // namespace vigil::init",
      "observer/d.h": "namespace vigil::init {\nstruct Hop;\nclass Hop::Impl {\n};\n}  // namespace vigil::init"},
     False, None),
]


def run_trees(tmp_root):
    failures = 0
    for i, (files, should_fail, named_file) in enumerate(TREES):
        tree = os.path.join(tmp_root, f"tree{i}")
        for rel, text in files.items():
            path = os.path.join(tree, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text + "\n")
        r = subprocess.run([sys.executable, CHECK, tree], capture_output=True, text=True)
        if should_fail and (r.returncode == 0 or named_file + ":" not in r.stdout):
            print(f"planted tree {i} not caught ({sorted(files)}):\n{r.stdout}")
            failures += 1
        elif not should_fail and r.returncode != 0:
            print(f"allowed tree {i} refused ({sorted(files)}):\n{r.stdout}")
            failures += 1
    return failures


def main():
    failures = 0
    clean = subprocess.run([sys.executable, CHECK, ROOT], capture_output=True, text=True)
    if clean.returncode != 0:
        print("the checkout itself fails the check:\n" + clean.stdout)
        failures += 1
    with tempfile.TemporaryDirectory(prefix="vigil-layering.") as tmp:
        for rel, line, should_fail in PLANTS:
            path = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n" + line + "\n")
            r = subprocess.run([sys.executable, CHECK, tmp], capture_output=True, text=True)
            os.remove(path)
            named = rel + ":" in r.stdout
            if should_fail and (r.returncode == 0 or not named):
                print(f"planted violation not caught: {rel}: {line!r}\n{r.stdout}")
                failures += 1
            elif not should_fail and r.returncode != 0:
                print(f"allowed line refused: {rel}: {line!r}\n{r.stdout}")
                failures += 1
        failures += run_trees(tmp)
    print(f"layering test: {len(PLANTS)} plants and {len(TREES)} trees, {failures} wrong")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
