#!/usr/bin/env python3
"""The include-direction check (in the style of Chromium's DEPS files), run by tools/test.sh.

    tools/check_layering.py [ROOT]

Every include is spelled from the repository root, so the first path components of an
include name the part it depends on. ALLOWED says, for each part of the tree, which parts
it may include; an include of any other part of this repository is a violation. The table
is the architecture (see ARCHITECTURE.md):

    supervisor/core            the foundation: includes nothing outside itself, and inside it
                               base <- policy <- fs <- events (each only what is left of it);
                               wire (vigil-init's command line) includes base only
    filters bwrap seatbelt proxy   the pure parts: the foundation only
    observer                   vigil-init: the foundation and filters
    supervisor                 the top: everything above, and inside it, by lifetime
                                   cli -> agent -> orchestrator -> command -> backstop
                                       -> {launch, log, report}
                                   cli -> replay -> {launch, log, report}
                                   cli -> export -> replay
                               (each sub-folder only what is right of it; replay and the
                               running side never include each other, nor launch, log and
                               report one another)
    tests tools                may include anything

It also fails on a raw close(2) outside supervisor/core/base/unique_fd.cc: every descriptor
lives in a UniqueFd, whose destructor is the one place that closes.

Exit 0 when clean; 1 with one line per violation ("file:line: what, and the fix").
"""
import os
import re
import sys

# The parts, most specific first: a file belongs to the first part its path starts with.
PARTS = ["supervisor/core/base", "supervisor/core/policy", "supervisor/core/fs",
         "supervisor/core/events", "supervisor/core/wire", "supervisor/core", "filters", "bwrap", "seatbelt", "proxy",
         "observer", "supervisor/cli", "supervisor/agent", "supervisor/orchestrator",
         "supervisor/command", "supervisor/backstop", "supervisor/export", "supervisor/replay",
         "supervisor/launch", "supervisor/log", "supervisor/report", "supervisor", "tests",
         "tools"]

CORE = {"supervisor/core/base", "supervisor/core/policy", "supervisor/core/fs",
        "supervisor/core/events", "supervisor/core/wire", "supervisor/core"}

# What every part of supervisor/ may use from outside it.
BELOW_SUPERVISOR = {"filters", "bwrap", "seatbelt", "proxy", "observer"} | CORE
SUPERVISOR_FLOOR = {"supervisor/launch", "supervisor/log", "supervisor/report"}
SUPERVISOR_ALL = {"supervisor/cli", "supervisor/agent", "supervisor/orchestrator",
                  "supervisor/command", "supervisor/backstop", "supervisor/replay",
                  "supervisor/export", "supervisor"} | SUPERVISOR_FLOOR

ALLOWED = {
    # The foundation's own direction: utilities, then the policy model, then the
    # filesystem decision engine, then the event model that records its verdicts.
    "supervisor/core/base": {"supervisor/core/base"},
    "supervisor/core/policy": {"supervisor/core/base", "supervisor/core/policy"},
    "supervisor/core/fs": {"supervisor/core/base", "supervisor/core/policy", "supervisor/core/fs"},
    "supervisor/core/events": {"supervisor/core/base", "supervisor/core/policy",
                               "supervisor/core/fs", "supervisor/core/events"},
    # vigil-init's command line: a format of plain values, so utilities only.
    "supervisor/core/wire": {"supervisor/core/base", "supervisor/core/wire"},
    "supervisor/core": CORE,
    "filters": {"filters"} | CORE,
    "bwrap": {"bwrap"} | CORE,
    "seatbelt": {"seatbelt"} | CORE,
    "proxy": {"proxy"} | CORE,
    "observer": {"observer", "filters"} | CORE,
    # The supervisor's floors. The bottom: the plan and the launch mechanics (launch/), the
    # hash-chained log (log/), what a record means to a reader (report/: the block, its
    # hints, the verdict of a record under a policy); none needs another.
    "supervisor/launch": {"supervisor/launch"} | BELOW_SUPERVISOR,
    "supervisor/log": {"supervisor/log"} | BELOW_SUPERVISOR,
    "supervisor/report": {"supervisor/report"} | BELOW_SUPERVISOR,
    # Over them, side by side: running sandboxes and reading their logs (replay/). The
    # running side records; replay reads what it recorded: neither runs the other. The
    # running side by lifetime, each over the ones it outlives: the post-run backstop and
    # undo mechanics (backstop/), one command's sandbox (command/), one `vigil run` or
    # embedder call (orchestrator/), an agent session and its protocols (agent/).
    "supervisor/backstop": {"supervisor/backstop"} | SUPERVISOR_FLOOR | BELOW_SUPERVISOR,
    "supervisor/command": {"supervisor/command", "supervisor/backstop"} | SUPERVISOR_FLOOR
                          | BELOW_SUPERVISOR,
    "supervisor/orchestrator": {"supervisor/orchestrator", "supervisor/command",
                                "supervisor/backstop"} | SUPERVISOR_FLOOR | BELOW_SUPERVISOR,
    "supervisor/agent": {"supervisor/agent", "supervisor/orchestrator", "supervisor/command",
                         "supervisor/backstop"} | SUPERVISOR_FLOOR | BELOW_SUPERVISOR,
    "supervisor/replay": {"supervisor/replay"} | SUPERVISOR_FLOOR | BELOW_SUPERVISOR,
    # Beside replay, over it: `vigil export --follow` reads logs as they grow and ships
    # them (its OCSF lines are replay's), never runs a sandbox.
    "supervisor/export": {"supervisor/export", "supervisor/replay"} | SUPERVISOR_FLOOR
                         | BELOW_SUPERVISOR,
    # The top: one file per subcommand, over everything.
    "supervisor/cli": SUPERVISOR_ALL | BELOW_SUPERVISOR,
    # A file directly in supervisor/ (none today) would be the top too.
    "supervisor": SUPERVISOR_ALL | BELOW_SUPERVISOR,
    "tests": set(PARTS),
    "tools": set(PARTS),
}

# The only file allowed to call close(2).
CLOSE_HOME = "supervisor/core/base/unique_fd.cc"

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
# close(fd) as a call of the C function, with or without the global :: qualifier; not a
# member (obj.close(), p->close(), Class::close(), or a zero-argument close() of the class
# itself), not part of a longer name (fclose, pclose, close_range); also the raw
# syscall(SYS_close, ...).
RAW_CLOSE = re.compile(r'(?<![\w.>:])(?:::)?close\s*\(\s*[^\s)]|\bSYS_close\b')
SOURCE_EXT = (".cc", ".h", ".cpp", ".hpp", ".c")
SKIP_DIRS = {".git", "corpus"}


def part_of(rel):
    for p in PARTS:
        if rel == p or rel.startswith(p + "/"):
            return p
    return None


def strip_comments_and_strings(text):
    """The code with comments and string/char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def check_file(root, rel):
    problems = []
    part = part_of(rel)
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        text = f.read()
    if part is not None:
        for lineno, line in enumerate(text.splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = part_of(m.group(1))
            if target is None or target in ALLOWED[part]:
                continue
            problems.append(
                f"{rel}:{lineno}: {part}/ may not include {m.group(1)} ({target}/ is not "
                f"below it; allowed: {', '.join(sorted(ALLOWED[part]))}). Move the shared "
                f"piece down (into supervisor/core/, or a lower floor of supervisor/) or the "
                f"call up into the part that owns it.")
    if rel != CLOSE_HOME:
        code = strip_comments_and_strings(text)
        for lineno, line in enumerate(code.splitlines(), 1):
            if RAW_CLOSE.search(line):
                problems.append(
                    f"{rel}:{lineno}: raw close(): hold the descriptor in a vigil::UniqueFd "
                    f"(supervisor/core/base/unique_fd.h) and let it close, or call reset().")
    return problems


def sources(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if d not in SKIP_DIRS and not d.startswith("build"))
        for name in sorted(filenames):
            if name.endswith(SOURCE_EXT):
                yield os.path.relpath(os.path.join(dirpath, name), root)


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    problems = []
    count = 0
    for rel in sources(root):
        count += 1
        problems.extend(check_file(root, rel))
    for p in problems:
        print(p)
    if problems:
        print(f"layering: {len(problems)} violation(s) in {count} files")
        return 1
    print(f"layering: {count} files, no violation")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
