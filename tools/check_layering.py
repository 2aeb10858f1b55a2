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
    tests                      may include anything
    tools                      anything but tests/: a benchmark or a tool stands on the
                               product, never on a test's harness (what a test and a
                               benchmark share lives in tools/bench/, as proxy_load.h)

It also fails on:
- a raw close(2) outside supervisor/core/base/unique_fd.cc: every descriptor lives in a
  UniqueFd, whose destructor is the one place that closes;
- an include loop: a unit (x.h with x.cc) that reaches itself through the includes of
  the product code (tests/ and tools/ are not units of the product). A loop is a knot
  the direction table cannot see: two files that each need the other are one job split
  in two, or a shared part that wants a header of its own;
- a stale path in a comment: a comment that names a file of this repository
  (`supervisor/command/session_dir.h`, `core/cap_plan.h`, `emulate.cc`) which does not
  exist, because it moved or never did. A reader follows these names;
- a unit test outside the mirror of the source folders: tests/unit/<folder>/ must be a
  source folder (tests/unit/common/ holds what the unit tests share);
- a folder of product code that is neither a part nor a room (ROOMS) of one;
- a function of the product code (not tests/ nor tools/) whose body is over
  MAX_FUNCTION_LINES lines, from its opening brace to its closing one (lambdas count in
  the function that holds them). A long function is several jobs under one name: cut it
  into named steps. tools/long_functions_allowlist.txt lists the ones another engineer is
  rewriting at the moment (file:function per line); an entry that no longer names a long
  function is itself a violation, so the list only shrinks.

- two classes or structs of one name in one namespace of the product (outside an
  anonymous namespace), in two files: the linker takes them for one type (the one-
  definition rule) and merges their inline members, so one's destructor may run the
  other's (it did: two vigil::CommandRun);

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

# Rooms: the sub-folders of a part, each one job of it (proxy/tls, observer/gate, ...). A
# room takes its part's row of ALLOWED: the rooms of a part may use one another (the loop
# check keeps their units apart) and are used as the part is. A folder of product code
# that is neither a part nor a room is refused, so that this table and ARCHITECTURE.md's
# name every folder and say what it holds.
ROOMS = {
}

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
    # The benchmarks measure the product as a user runs it: nothing of tests/.
    "tools": set(PARTS) - {"tests"},
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
# Also read for stale paths in their comments.
OTHER_EXT = (".py", ".cmake", "CMakeLists.txt")
SKIP_DIRS = {".git", "corpus"}

MAX_FUNCTION_LINES = 100
ALLOWLIST = "tools/long_functions_allowlist.txt"
# What is not product code: its functions may be as long as a test needs.
NOT_PRODUCT = ("tests/", "tools/")


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
    if not rel.endswith(SOURCE_EXT):
        return problems
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


# Include loops: the units of the product code and the include edges between them.
UNIT_EXCLUDE = ("tests/", "tools/")


def unit_of(rel):
    return os.path.splitext(rel)[0]


def include_loops(root, rels):
    """One problem line per loop (a strongly connected set of two or more units)."""
    edges = {}   # unit -> {unit: (file, line)} (the first include that makes the edge)
    for rel in rels:
        if rel.startswith(UNIT_EXCLUDE) or not rel.endswith(SOURCE_EXT):
            continue
        u = unit_of(rel)
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m or not os.path.isfile(os.path.join(root, m.group(1))):
                    continue
                v = unit_of(m.group(1))
                if v != u:
                    edges.setdefault(u, {}).setdefault(v, (rel, lineno))
    # Tarjan's algorithm, iteratively (no recursion limit on a long chain).
    index, low, on_stack, stack, loops = {}, {}, set(), [], []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, {}))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    loops.append(sorted(comp))
    problems = []
    for comp in sorted(loops):
        members = set(comp)
        hops = []
        for u in comp:
            for v, (rel, lineno) in sorted(edges.get(u, {}).items()):
                if v in members:
                    hops.append(f"{rel}:{lineno} -> {v}")
        first = hops[0].split(" -> ")[0]
        problems.append(
            f"{first}: include loop between {', '.join(comp)} ({'; '.join(hops)}). Move what "
            f"both need into a header of its own that includes neither, or join them if they "
            f"are one job.")
    return problems


# Stale paths in comments. A path is checked when it starts at a folder of this repository
# (a top-level one, or one inside supervisor/ or supervisor/core/, as comments abbreviate
# them); a bare file name when it is not a system header. Placeholders (NAME, <part>, *)
# are not names.
NAMED_PATH = re.compile(
    r"(?<![\w./<*-])((?:[\w.-]+/)*[\w-]+\.(?:h|cc|py|sh|mjs|inc|sb|cmake))(?![\w/*-])")
COMMENTED_EXT = (".cc", ".h", ".py", ".cmake", "CMakeLists.txt")


def comment_of(line, hash_comments):
    """The comment on a line ("" when none): from the first // (C++) or # (Python, CMake)
    outside a string literal; a C++ preprocessor line has none."""
    marker = "#" if hash_comments else "//"
    if not hash_comments and line.lstrip().startswith("#"):
        return ""
    quote = None
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif line.startswith(marker, i) and not line[max(0, i - 1):i] == ":":
            return line[i + len(marker):]
        i += 1
    return ""


def system_header_names():
    names = set()
    for base in ("/usr/include", "/usr/include/linux", "/usr/include/sys",
                 "/usr/include/x86_64-linux-gnu/sys", "/usr/include/asm-generic"):
        if os.path.isdir(base):
            names.update(os.listdir(base))
    return names


def stale_comment_paths(root, rels, all_files):
    top = {p.split("/", 1)[0] for p in all_files if "/" in p}
    inner = {p.split("/")[1] for p in all_files if p.startswith("supervisor/") and p.count("/") > 1}
    inner |= {p.split("/")[2] for p in all_files
              if p.startswith("supervisor/core/") and p.count("/") > 2}
    basenames = {os.path.basename(p) for p in all_files}
    system = None
    problems = []
    for rel in rels:
        if not rel.endswith(COMMENTED_EXT):
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        hash_comments = not rel.endswith((".cc", ".h"))
        for lineno, line in enumerate(lines, 1):
            comment = comment_of(line, hash_comments)
            if not comment:
                continue
            for pm in NAMED_PATH.finditer(comment):
                name = pm.group(1)
                parts = name.split("/")
                if any(c.isupper() and c == c.upper() and len(c) > 1 for c in parts[:-1]) or \
                        parts[-1].startswith("_") or parts[-1].split(".")[0].isupper():
                    continue
                if len(parts) == 1:
                    if name in basenames:
                        continue
                    if system is None:
                        system = system_header_names()
                    if name in system or not name.endswith((".h", ".cc")):
                        continue
                elif parts[0] not in top and parts[0] not in inner:
                    continue  # outside this repository (include/uapi/..., a peer's tree)
                else:
                    here = os.path.dirname(rel)
                    candidates = {name, "supervisor/" + name, "supervisor/core/" + name}
                    while True:
                        candidates.add(os.path.normpath(os.path.join(here, name)))
                        if not here:
                            break
                        here = os.path.dirname(here)
                    if candidates & all_files:
                        continue
                problems.append(
                    f"{rel}:{lineno}: the comment names {name}, which does not exist (moved or "
                    f"never was): name the file where it is now, or drop the name.")
    return problems


# A brace's header: what stands between the previous ';', '{' or '}' and it.
NAMESPACE_HEAD = re.compile(r'\b(namespace|extern)\b')
TYPE_HEAD = re.compile(r'\b(class|struct|union|enum)\b')
CONTROL_HEAD = re.compile(r'^\s*(if|for|while|switch|catch|do|else|try)\b')
NAME_BEFORE_PAREN = re.compile(r'([~\w:<>=!+\-*/%&|^\[\]]+)\s*\($')


def function_name(head):
    """The name a function's header declares: the word before its parameter list."""
    depth = 0
    for i in range(len(head) - 1, -1, -1):
        c = head[i]
        if c == ")":
            depth += 1
        elif c == "(":
            depth -= 1
            if depth == 0:
                m = NAME_BEFORE_PAREN.search(head[:i + 1])
                if m and m.group(1) not in ("noexcept", "requires", "decltype", "alignas"):
                    return m.group(1).split("::")[-1] if "operator" not in m.group(1) else m.group(1)
    return "?"


def long_functions(text):
    """(name, first line, lines) of each function body over MAX_FUNCTION_LINES lines.

    A brace opens a function body when it is reached outside every function, its header
    has a parameter list, and it is no namespace, type or initialiser (`= {`)."""
    code = strip_comments_and_strings(text)
    found = []
    stack = []  # per open brace: None, or (name, line) for a function body
    head_start = 0
    line = 1
    in_function = 0
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == "{":
            head = code[head_start:i]
            flat = " ".join(head.split())
            # A preprocessor line ends before the header starts.
            flat = " ".join(l for l in head.split("\n") if not l.strip().startswith("#")).strip()
            is_function = (in_function == 0 and "(" in flat and not flat.endswith("=")
                           and not NAMESPACE_HEAD.match(flat) and not CONTROL_HEAD.match(flat)
                           and not (TYPE_HEAD.search(flat.split("(")[0])
                                    and not flat.rstrip().endswith(")")
                                    and "->" not in flat))
            if is_function:
                stack.append((function_name(flat.split("->")[0].rstrip() if False else flat), line))
                in_function += 1
            else:
                stack.append(None)
            head_start = i + 1
        elif c == "}":
            if stack:
                top = stack.pop()
                if top is not None:
                    in_function -= 1
                    name, start = top
                    if line - start + 1 > MAX_FUNCTION_LINES:
                        found.append((name, start, line - start + 1))
            head_start = i + 1
        elif c == ";":
            head_start = i + 1
    return found


def read_allowlist(root):
    """{(file, function): line of the allowlist} of the long functions being rewritten."""
    entries = {}
    path = os.path.join(root, ALLOWLIST)
    if not os.path.exists(path):
        return entries
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            entry = raw.split("#", 1)[0].strip()
            if entry:
                rel, _, name = entry.partition(":")
                entries[(rel.strip(), name.strip())] = n
    return entries


def function_lengths(root, rels):
    problems = []
    allowed = read_allowlist(root)
    used = set()
    for rel in rels:
        if not rel.endswith(SOURCE_EXT) or rel.startswith(NOT_PRODUCT):
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name, start, lines in long_functions(text):
            if (rel, name) in allowed:
                used.add((rel, name))
                continue
            problems.append(f"{rel}:{start}: {name}() is {lines} lines (at most "
                            f"{MAX_FUNCTION_LINES}): cut it into named steps")
    for key, n in sorted(allowed.items(), key=lambda kv: kv[1]):
        if key not in used:
            problems.append(f"{ALLOWLIST}:{n}: {key[0]}:{key[1]} is not a function over "
                            f"{MAX_FUNCTION_LINES} lines (any more): take it off the list")
    return problems


UNIT_TESTS = "tests/unit/"
# Helpers the unit tests share (scratch directories, kernel probes): no source folder.
UNIT_SHARED = "tests/unit/common/"


def unit_test_mirror(root, rels):
    """A unit test lives at tests/unit/<folder>/<file>_test.cc, where <folder> is the
    source folder of what it tests: a test in a folder that mirrors none is lost."""
    folders = {os.path.dirname(r) for r in rels
               if r.endswith(SOURCE_EXT) and not r.startswith(("tests/", "tools/"))}
    problems = []
    for rel in rels:
        if not rel.startswith(UNIT_TESTS) or rel.startswith(UNIT_SHARED) or \
                not rel.endswith(SOURCE_EXT):
            continue
        folder = os.path.dirname(rel)[len(UNIT_TESTS):]
        if folder not in folders and not os.path.isdir(os.path.join(root, folder or "/nowhere")):
            problems.append(
                f"{rel}:1: tests/unit/{folder}/ mirrors no source folder: a unit test lives "
                f"at tests/unit/<folder>/<file>_test.cc, <folder> the source folder of what "
                f"it tests.")
    return problems


def unlisted_folders(rels):
    """A folder of product code must be a part or a room of one."""
    problems, seen = [], set()
    for rel in rels:
        if rel.startswith(("tests/", "tools/")) or not rel.endswith(SOURCE_EXT):
            continue
        folder = os.path.dirname(rel)
        if not folder or folder in seen or folder in PARTS or folder in ROOMS:
            continue
        seen.add(folder)
        problems.append(
            f"{rel}:1: {folder}/ is neither a part nor a room of one: add it to ROOMS in "
            f"tools/check_layering.py (and ARCHITECTURE.md's layout) with what it holds, or "
            f"move its files into the folder whose job they do.")
    return problems


# One name, one type: two classes of one name in one namespace are one type to the linker
# (the one-definition rule), whichever header each reader included; their inline members
# (constructors, destructors) are merged into one, and a run of either calls the other's.
# Types declared at namespace scope (outside an anonymous one) in the product, by namespace.
TYPE_DECL = re.compile(r"^(?:struct|class)\s+(?:\[\[[^\]]*\]\]\s+)?([A-Za-z_]\w*)\b(?!::)(?!\s*;)[^;]*$")
NAMESPACE_OPEN = re.compile(r"^namespace\s+([\w:]*)\s*\{")


def duplicate_type_names(root, rels):
    """Classes and structs of one name in one namespace, in two files of the product."""
    seen = {}  # (namespace, name) -> "file:line"
    problems = []
    for rel in sorted(rels):
        if not rel.endswith((".h", ".cc")) or part_of(rel) in ("tests", "tools"):
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        stack = []  # the namespaces open at this line (anonymous: "")
        for n, line in enumerate(lines, 1):
            m = NAMESPACE_OPEN.match(line)
            if m:
                stack.append(m.group(1))
                continue
            if line.startswith("}  // namespace") and stack:
                stack.pop()
                continue
            if "" in stack:
                continue  # a header's anonymous namespace is each reader's own
            t = TYPE_DECL.match(line)
            if not t or line.rstrip().endswith(";"):
                continue
            key = ("::".join(stack), t.group(1))
            where = f"{rel}:{n}"
            if key in seen and not seen[key].startswith(rel + ":"):
                problems.append(f"{where}: {key[0]}::{key[1]} is also declared at {seen[key]}: "
                                "two types of one name in one namespace are one to the linker "
                                "(their inline members are merged); rename one")
            seen.setdefault(key, where)
    return problems


def all_files(root):
    """Every file of the tree (not only sources): what a comment may name."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith("build")]
        for name in filenames:
            out.add(os.path.normpath(os.path.relpath(os.path.join(dirpath, name), root)))
    return out


def sources(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if d not in SKIP_DIRS and not d.startswith("build"))
        for name in sorted(filenames):
            if name.endswith(SOURCE_EXT + OTHER_EXT):
                yield os.path.relpath(os.path.join(dirpath, name), root)


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    problems = []
    rels = list(sources(root))
    count = len(rels)
    for rel in rels:
        problems.extend(check_file(root, rel))
    problems.extend(include_loops(root, rels))
    problems.extend(stale_comment_paths(root, rels, all_files(root)))
    problems.extend(function_lengths(root, rels))
    problems.extend(unit_test_mirror(root, rels))
    problems.extend(unlisted_folders(rels))
    problems.extend(duplicate_type_names(root, rels))
    for p in problems:
        print(p)
    if problems:
        print(f"layering: {len(problems)} violation(s) in {count} files")
        return 1
    print(f"layering: {count} files, no violation")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
