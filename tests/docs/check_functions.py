#!/usr/bin/env python3
"""Fails when a C++/CUDA function is new over the house limits, or a listed one grows.

The limits (the developers' guide): no function over 80 lines, none over cyclomatic
complexity 20. Today's offenders are listed in tests/docs/function_baseline.txt, and may only shrink:
the check fails on a function over a limit that the baseline does not list, or that is longer or more
complex than its entry. A listed function may move to another file (it is then matched by name).

  check_functions.py ROOT            check core/, app/, lab/, bench/, tools/, tests/ and python/ under ROOT
  check_functions.py ROOT --update   rewrite the baseline from the tree, after a function shrank,
                                     moved or went below the limits; refuses to add or grow an entry
                                     (it writes a missing baseline from scratch)
  check_functions.py ROOT --list [N] the N (20) longest functions, with their complexity
  check_functions.py --self-test     plant functions in a scratch tree and check what is caught

Counting (lizard's definitions, in a small self-contained counter; no third-party package):
 - lines: the function's length, from the first line of its signature (template<> included) to
   its closing brace, comments and blank lines included (lizard's "length"; the issue's counts);
 - complexity: 1 + the number of if, for, while, case, catch, &&, || and ?: in the function.
A lambda counts towards the function it stands in. A function is a brace block whose head (the
text since the last ';', '{' or '}' of the enclosing namespace or class) holds a parameter list and
is not an initializer; TEST(...) bodies count as functions too.
"""
import os
import re
import sys

from house_rules import planted_tree, usage_ok, verdict

MAX_LINES = 80
MAX_CCN = 20
TREES = ("core", "app", "lab", "bench", "tools", "tests", "python")
SOURCES = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh")
BASELINE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "function_baseline.txt")
TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.']*|&&|\|\||::|->|\S")
DECISIONS = {"if", "for", "while", "case", "catch", "&&", "||", "?"}
ATTRIBUTE_CALLS = {"__launch_bounds__", "__attribute__", "alignas", "__declspec", "decltype", "noexcept"}
SCOPE_WORDS = {"namespace", "class", "struct", "union", "enum", "extern"}


def strip(text):
    """The text with comments, string and character contents and preprocessor lines blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":  # a preprocessor line, with its continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append("\n")
                    i += 2
                    continue
                i += 1
            continue
        if c == "/" and text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
            continue
        m = re.match(r'R"([^()\\ ]{0,16})\(', text[i:i + 20]) if c == "R" else None
        if m:  # raw string literal
            end = text.find(")" + m.group(1) + '"', i)
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "".join("\n" for ch in text[i:end] if ch == "\n"))
            i = end
            continue
        if c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):  # not a digit separator
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
            continue
        out.append(c)
        line_start = c == "\n" or (line_start and c in " \t")
        i += 1
    return "".join(out)


def tokens(text):
    """(token, line) pairs of stripped text."""
    line, pos = 1, 0
    for m in TOKEN.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        yield m.group(0), line


def function_name(head):
    """The name of the function whose head (a token list) this is, or None when it is not one."""
    words = [t for t, _ in head]
    if not words or words[0] in SCOPE_WORDS or "(" not in words:
        return None
    depth = 0
    for k, w in enumerate(words):  # an initializer (= at depth 0) unless it is a lambda: = [..](..)
        depth += w in "([<" and w != "<"
        depth -= w in ")]" and w != ">"
        after_operator = k > 0 and (words[k - 1] == "operator" or (k > 1 and words[k - 2] == "operator"))
        if w == "=" and depth == 0 and not after_operator and not (k + 1 < len(words) and words[k + 1] == "["):
            return None
    for k, w in enumerate(words):
        if w != "(" or k == 0:
            continue
        prev = words[k - 1]
        if prev in ATTRIBUTE_CALLS:
            continue
        if prev == ")" and k >= 3 and words[k - 3] == "operator":
            return "operator()"
        if prev == "]":
            return "(lambda)"
        j = k - 1
        while j > 0 and not re.match(r"\w", words[j]):
            j -= 1
        if words[j] == "operator" and j < k - 1:
            return "operator" + "".join(words[j + 1:k])
        if prev in ("TEST", "TEST_F", "TEST_P", "TYPED_TEST") and ")" in words[k:]:
            return prev + "(" + "".join(words[k + 1:words.index(")", k)]) + ")"
        if re.match(r"[A-Za-z_~]\w*$", prev):
            name = [prev]
            j = k - 2
            while j >= 1 and words[j] == "::" and re.match(r"[A-Za-z_~]\w*$", words[j - 1]):
                name.insert(0, words[j - 1])
                j -= 2
            if j >= 0 and words[j] == "operator":
                return "operator" + prev
            return "::".join(name)
        return None
    return None


def in_init_list(head):
    """Whether a '{' after this head is a member's brace initializer (X(int a) : a_{a} {): the head has
    a ')' then a lone ':' at depth 0, and ends in a name (or a template's '>')."""
    words = [t for t, _ in head]
    if not words or not (re.match(r"\w", words[-1]) or words[-1] == ">"):
        return False
    depth, closed = 0, False
    for w in words:
        if w in "([" and len(w) == 1:
            depth += 1
        elif w in ")]" and len(w) == 1:
            depth -= 1
            closed = closed or (w == ")" and depth == 0)
        elif w == ":" and depth == 0 and closed:
            return True
    return False


def functions(path):
    """(name, first line, lines of code, complexity) of every top function in the file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = strip(f.read())
    found = []
    stack = []  # 'scope' (namespace, class, block outside a function) or a function record
    head = []
    func = None  # the open top function: [name, first line, depth, ccn]
    init_depth = 0  # inside a member's brace initializer of a constructor's initializer list
    for tok, line in tokens(text):
        if func is not None:
            if tok in DECISIONS:
                func[3] += 1
            if tok == "{":
                func[2] += 1
            elif tok == "}":
                func[2] -= 1
                if func[2] == 0:
                    found.append((func[0], func[1], line - func[1] + 1, func[3]))
                    func = None
                    head = []
            continue
        if init_depth:
            init_depth += (tok == "{") - (tok == "}")
            continue
        if tok == "{" and in_init_list(head):
            init_depth = 1
            continue
        if tok == "{":
            name = function_name(head)
            if name is not None:
                func = [name, head[0][1], 1, 1]
                func[3] += sum(1 for t, _ in head if t in DECISIONS)
            else:
                stack.append(head)
            head = []
        elif tok == "}":
            if stack:
                stack.pop()
            head = []
        elif tok == ";":
            head = []
        else:
            head.append((tok, line))
    return found


def scan(root):
    """Every function of the trees: (file, name, line, lines, complexity)."""
    out = []
    for top in TREES:
        for dirpath, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(SOURCES):
                    full = os.path.join(dirpath, name)
                    rel = os.path.relpath(full, root).replace(os.sep, "/")
                    out += [(rel, f, first, n, c) for f, first, n, c in functions(full)]
    return out


def offenders(found):
    return sorted(((f, n, l, c) for f, n, _, l, c in found if l > MAX_LINES or c > MAX_CCN), key=lambda o: (o[0], o[1], -o[2]))


def read_baseline(path):
    entries = []
    if os.path.exists(path):
        with open(path) as f:
            for raw in f:
                line = raw.split("#", 1)[0].strip()
                if line:
                    file, name, lines, ccn = line.split()
                    entries.append((file, name, int(lines), int(ccn)))
    return entries


def compare(current, baseline):
    """The offenders the baseline does not cover: new ones, or grown past their entry."""
    left = list(baseline)
    problems = []
    unmatched = []
    for o in sorted(current, key=lambda o: (-o[2], -o[3])):
        same = [b for b in left if b[0] == o[0] and b[1] == o[1]]
        if same:
            left.remove(same[0])
            b = same[0]
            if o[2] > b[2] or o[3] > b[3]:
                problems.append(f"{o[0]}: {o[1]} grew to {o[2]} lines, complexity {o[3]} (baseline {b[2]}, {b[3]})")
        else:
            unmatched.append(o)
    for o in unmatched:  # moved to another file: matched by name
        moved = [b for b in left if b[1] == o[1]]
        if moved and o[2] <= moved[0][2] and o[3] <= moved[0][3]:
            left.remove(moved[0])
        else:
            problems.append(f"{o[0]}: {o[1]} has {o[2]} lines, complexity {o[3]}: over {MAX_LINES} lines or complexity "
                            f"{MAX_CCN}, and not in the baseline (or larger than there)")
    return problems


def write_baseline(path, current):
    with open(path, "w") as f:
        f.write("# Functions over 80 lines or cyclomatic complexity 20 (tests/docs/check_functions.py): they may only\n"
                "# shrink. After shrinking or moving one: python3 tests/docs/check_functions.py . --update\n"
                "# file function lines complexity\n")
        for o in current:
            f.write(f"{o[0]} {o[1]} {o[2]} {o[3]}\n")


def self_test():
    body = "\n".join(f"  x += {i};" for i in range(90))
    planted = {
        "core/a/long.cpp": "namespace n {\nint long_one(int x) {\n" + body + "\n  return x;\n}\n}\n",
        "app/b/branchy.cpp": "struct S {\n  int f(int x) const {\n" + "\n".join(f"    if (x == {i} && x) return {i};" for i in range(10))
                             + "\n    return 0;\n  }\n};\n",
        "core/c/ok.cu": "template <class T>\n__global__ void __launch_bounds__(256) k(T* p) {\n  if (p) *p = 1;\n}\n"
                        "const int table[] = {1, 2, 3};\nauto l = [](int a) { return a ? 1 : 2; };\n",
        "tests/d/grown.cpp": "TEST(A, B) {\n" + body + "\n}\n",
    }
    baseline = [("tests/d/grown.cpp", "TEST(A,B)", 85, 1), ("core/moved_from.cpp", "long_one", 95, 1)]
    with planted_tree(planted) as d:
        found = scan(d)
        problems = compare(offenders(found), baseline)
    got = {(f, n): (l, c) for f, n, _, l, c in found}
    want = {("core/a/long.cpp", "long_one"): (93, 1), ("app/b/branchy.cpp", "f"): (13, 21), ("core/c/ok.cu", "k"): (4, 2),
            ("core/c/ok.cu", "(lambda)"): (1, 2), ("tests/d/grown.cpp", "TEST(A,B)"): (92, 1)}
    ok = got == want and len(problems) == 2 and "branchy" in problems[1] + problems[0] and any("grew" in p for p in problems)
    return verdict(ok, "self-test: lines and complexity as planted; a new offender and a grown one caught, a moved one matched",
                   f"measured {got}\nproblems {problems}")

def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    if not usage_ok(argv, __doc__, ("--update", "--list"), max_args=3):
        return 2
    found = scan(argv[0])
    current = offenders(found)
    if argv[1:2] == ["--list"]:
        for f, n, first, l, c in sorted(found, key=lambda o: -o[3])[: int(argv[2]) if len(argv) == 3 else 20]:
            print(f"{l:5d} lines  complexity {c:3d}  {f}:{first} {n}")
        return 0
    baseline = read_baseline(BASELINE)
    problems = compare(current, baseline)
    if argv[1:] == ["--update"]:
        if problems and os.path.exists(BASELINE):
            print("\n".join(problems) + "\n--update refuses: shrink these below the limits instead", file=sys.stderr)
            return 1
        write_baseline(BASELINE, current)
        print(f"{BASELINE}: {len(current)} functions (was {len(baseline)})")
        return 0
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} function(s) over the house limits (see tests/docs/check_functions.py)", file=sys.stderr)
        return 1
    print(f"functions hold: none new over {MAX_LINES} lines or complexity {MAX_CCN}; {len(current)} listed ones, none grown "
          f"(baseline {len(baseline)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
