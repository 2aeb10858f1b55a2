#!/usr/bin/env python3
"""Lint: nothing vigil prints to a terminal or to the model shows a path, a host or any
other chosen text without the one escaping function (supervisor/core/base/display_text.h).

Checked, in the product's sources (not tests or tools):
  - printf/fprintf/dprintf: every %s argument is escaped (escape_text(...),
    escape_for_*(...)) or is a string literal, a ternary of literals, to_string(...) of an
    enum or a number;
  - fputs/puts/fwrite to a stream: the text is a literal or escaped;
  - std::cout/std::cerr/std::clog: not used;
  - print_error()/print_warning()/print_notice()/print_debug() (supervisor/core/base/
    diagnostics.h) and write_diagnostic_line() (diagnostic_line.h, vigil-init's) escape
    what they get;
  - spdlog: used only by diagnostics.cc, whose one logger escapes; a second logger (or
    spdlog::info(...) on the default one) would print around escape_text.
A statement that prints text made safe some other way says why on the line before:
    // display-safe: <why>
Only supervisor/core/base/diagnostics.cc and diagnostic_line.cc (the module that escapes)
are exempt.

Usage: lint_display_text.py [ROOT]      exits 1 and lists the offending statements
       lint_display_text.py --self-test  checks that planted violations are caught
"""
import os
import re
import sys
import tempfile

DIRS = ["supervisor", "bwrap", "observer", "proxy", "filters", "seatbelt"]
EXEMPT = {"supervisor/core/base/diagnostics.cc", "supervisor/core/base/diagnostic_line.cc"}
CALL = re.compile(r"(?<![\w:.>])(?:std::)?(printf|fprintf|dprintf|fputs|puts|fwrite)\s*\(")
STREAM = re.compile(r"std::(cout|cerr|clog)\b")
SPDLOG = re.compile(r"\bspdlog::|#\s*include\s*[<\"]spdlog/")
SAFE_ARG = re.compile(
    r"""^(?:
        "(?:[^"\\]|\\.)*"(?:\s*"(?:[^"\\]|\\.)*")*          # literal(s)
      | [^?]*\?\s*"(?:[^"\\]|\\.)*"\s*:\s*"(?:[^"\\]|\\.)*"  # cond ? "a" : "b"
      | (?:vigil::)?to_string\(.*\)(?:\.c_str\(\))?      # enum/number names
      | std::to_string\(.*\)\.c_str\(\)
    )$""",
    re.X | re.S,
)
ESCAPED = re.compile(r"\b(?:escape_text|escape_for_\w+)\s*\(")
MARKER = "// display-safe:"


def strip_comments(src):
    """Blanks // and /* */ comments outside literals, keeping offsets and newlines."""
    out = list(src)
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c in "\"'":
            q = c
            i += 1
            while i < n and src[i] != q:
                i += 2 if src[i] == "\\" else 1
            i += 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        else:
            i += 1
    return "".join(out)


def call_args(src, open_paren):
    """The top-level arguments of the call whose '(' is at open_paren, and its end."""
    args, depth, start, i = [], 0, open_paren + 1, open_paren
    while i < len(src):
        c = src[i]
        if c in "\"'":
            q = c
            i += 1
            while i < len(src) and src[i] != q:
                i += 2 if src[i] == "\\" else 1
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(src[start:i].strip())
                return args, i
        elif c == "," and depth == 1:
            args.append(src[start:i].strip())
            start = i + 1
        i += 1
    return args, len(src)


def literal_text(arg):
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', arg)
    return "".join(parts) if parts and re.fullmatch(r'(\s*"(?:[^"\\]|\\.)*"\s*)+', arg) else None


def conversions(fmt):
    return re.findall(r"%[-+ #0]*(?:\*|\d+)?(?:\.(?:\*|\d+))?(?:hh|h|ll|l|j|z|t|L)?([a-zA-Z%])", fmt)


def marked(original, offset):
    line_start = original.rfind("\n", 0, offset) + 1
    prev_start = original.rfind("\n", 0, max(line_start - 1, 0)) + 1
    return MARKER in original[prev_start:line_start] or MARKER in original[line_start:original.find("\n", offset)]


def check_file(path, rel):
    original = open(path, encoding="utf-8", errors="replace").read()
    src = strip_comments(original)
    problems = []

    def bad(offset, why):
        if not marked(original, offset):
            line = original.count("\n", 0, offset) + 1
            problems.append("%s:%d: %s" % (rel, line, why))

    for m in STREAM.finditer(src):
        bad(m.start(), "std::%s: print through print_error/print_warning or escape_text" % m.group(1))
    for m in SPDLOG.finditer(src):
        bad(m.start(), "spdlog outside diagnostics.cc: print through print_error/print_warning/"
            "print_notice/print_debug, whose logger escapes")
    for m in CALL.finditer(src):
        name = m.group(1)
        args, _ = call_args(src, m.end() - 1)
        if name in ("printf", "fprintf", "dprintf"):
            fmt_index = 0 if name == "printf" else 1
            if len(args) <= fmt_index:
                continue
            fmt = literal_text(args[fmt_index])
            if fmt is None:
                bad(m.start(), "%s with a format that is not a literal" % name)
                continue
            values = args[fmt_index + 1:]
            k = 0
            for conv in conversions(fmt):
                if conv == "%":
                    continue
                if k >= len(values):
                    break
                arg = values[k]
                k += 1
                if conv == "s" and not (ESCAPED.search(arg) or SAFE_ARG.match(arg)):
                    bad(m.start(), "%s prints %r unescaped: wrap it in escape_text()" % (name, arg))
        elif name in ("fputs", "puts"):
            if args and not (ESCAPED.search(args[0]) or SAFE_ARG.match(args[0])):
                bad(m.start(), "%s prints %r unescaped" % (name, args[0]))
        elif name == "fwrite":
            if len(args) == 4 and re.search(r"\b(stdout|stderr)\b", args[3]) and not ESCAPED.search(args[0]):
                bad(m.start(), "fwrite to %s of %r unescaped" % (args[3], args[0]))
    return problems


def lint(root):
    problems = []
    for d in DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if not f.endswith((".cc", ".h", ".mm")):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                if rel in EXEMPT:
                    continue
                problems += check_file(path, rel)
    return problems


PLANTED = {
    "raw_path.cc": 'void f(const std::string& p) { std::fprintf(stderr, "vigil: %s\\n", p.c_str()); }\n',
    "raw_width.cc": 'void f(std::string p) {\n  std::printf("%-60s # %s\\n",\n  escape_text(p).c_str(), rule.c_str());\n}\n',
    "raw_puts.cc": "void f(std::string b) { std::fputs(b.c_str(), stdout); }\n",
    "cerr.cc": 'void f(std::string h) { std::cerr << "host " << h; }\n',
    "fmt_var.cc": "void f(const char* fmt) { std::printf(fmt, 1); }\n",
    "own_logger.cc": 'void f(std::string h) { spdlog::info("host {}", h); }\n',
}
CLEAN = (
    '// a comment: printf("%s", p.c_str());\n'
    'void f(const std::string& p, bool ok) {\n'
    '  std::fprintf(stderr, "vigil: %s\\n", escape_text(p).c_str());\n'
    '  std::printf("%-4s %d %s\\n", ok ? "ok" : "MISS", 3, to_string(v));\n'
    '  std::fputs("literal\\n", stdout);\n'
    '  // display-safe: fixed ASCII tokens only\n'
    '  std::fputs(profile.c_str(), stdout);\n'
    '}\n'
)


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "supervisor"))
        for name, text in PLANTED.items():
            with open(os.path.join(tmp, "supervisor", name), "w") as f:
                f.write(text)
        with open(os.path.join(tmp, "supervisor", "clean.cc"), "w") as f:
            f.write(CLEAN)
        found = lint(tmp)
        caught = {p.split(":")[0].split("/")[-1] for p in found}
        ok = caught == set(PLANTED) and not any("clean.cc" in p for p in found)
        for name in sorted(set(PLANTED) - caught):
            print("self-test: planted violation in %s was not caught" % name, file=sys.stderr)
        for p in found:
            if "clean.cc" in p:
                print("self-test: false positive: %s" % p, file=sys.stderr)
        if ok:
            print("lint_display_text self-test: %d planted violations caught, clean file passes" % len(PLANTED))
        return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = lint(root)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print("%d unescaped prints: escape them with escape_text() (supervisor/core/base/display_text.h)"
              % len(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
