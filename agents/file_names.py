"""The file a code block is when its reply gives it no name: what the context makes obvious.

A model that answers with one bare ```` ```python ```` block meant *the* file: the only code file there
is, a file the task or plan names, or, failing both, the name that language's tooling expects
(``main.py``, ``main.go``, ``src/lib.rs``, ``Main.java`` for ``public class Main``...). A Tester's bare
block is the test file for the module under test, named the way that language's runner finds it
(``test_calc.py``, ``calc_test.go``, ``calc.test.js``, ``CalcTest.java``, ``tests/calc.rs``...).
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence

from agents import language as languages

_DEFINITION = re.compile(
    r"^\s*(?:export\s+|pub(?:\([\w:]+\))?\s+|public\s+|static\s+|async\s+|final\s+|abstract\s+)*"
    r"(?:def|class|func|fn|function|struct|enum|trait|interface|type|impl)\s+(?:\([^)]*\)\s*)?(?P<name>[A-Za-z_]\w*)",
    re.M,
)
_C_FUNCTION = re.compile(r"^[A-Za-z_][\w \t\*]*?\b(?P<name>[A-Za-z_]\w*)\s*\([^;{]*\)\s*\{", re.M)
_TEST_MARKERS = {
    "python": re.compile(r"^\s*(?:async\s+)?def test\w*\s*\(|^\s*class Test\w*|^\s*import (?:pytest|unittest)", re.M),
    "go": re.compile(r"^func (?:Test|Benchmark|Example)\w*\(", re.M),
    "javascript": re.compile(r"\b(?:describe|it|test)\s*\(\s*['\"`]|node:test|require\(['\"](?:assert|node:assert)", re.M),
    "rust": re.compile(r"#\[(?:test|cfg\(test\))\]"),
    "java": re.compile(r"@Test\b|\bassert\w*\s*\(|junit", re.M),
    "c": re.compile(r"\bassert\s*\(|\"(?:not )?ok %d|printf\s*\(\s*\"(?:not )?ok\b|\b1\.\.%d"),
    "bash": re.compile(r"^\s*(?:assert\w*|fail)\b|\[\[? .* \]\]? \|\| (?:exit|fail)", re.M),
}
_TEST_MARKERS["typescript"] = _TEST_MARKERS["javascript"]
_TEST_MARKERS["cpp"] = _TEST_MARKERS["c"]
_TEST_MARKERS["kotlin"] = _TEST_MARKERS["java"]

_DEFAULT_CODE = {
    "python": "main.py", "javascript": "index.js", "typescript": "index.ts", "go": "main.go",
    "rust": "src/lib.rs", "java": "Main.java", "c": "main.c", "cpp": "main.cpp", "bash": "main.sh",
}
KNOWN_LANGUAGES = frozenset(_DEFAULT_CODE)
_PRIMARY_EXTENSION = {
    "python": ".py", "javascript": ".js", "typescript": ".ts", "go": ".go", "rust": ".rs", "java": ".java",
    "c": ".c", "cpp": ".cpp", "bash": ".sh",
}
_JAVA_PUBLIC_TYPE = re.compile(r"^\s*public\s+(?:final\s+|abstract\s+)*(?:class|interface|enum|record)\s+(\w+)", re.M)
_FILE_MENTION = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.[A-Za-z]\w{0,5})\b")


def language_of(path: str) -> str:
    """The language a file name is written in, '' when its extension says nothing."""
    name = path.rsplit("/", 1)[-1]
    return languages.EXTENSIONS.get(name[name.rfind("."):].lower(), "") if "." in name else ""


def defined_names(code: str) -> set[str]:
    """Names a piece of code defines (functions, classes, types), in any of the supported languages."""
    names = {m.group("name") for m in _DEFINITION.finditer(code)}
    names |= {m.group("name") for m in _C_FUNCTION.finditer(code) if m.group("name") not in {"if", "for", "while", "switch"}}
    return names


def is_test_code(code: str, language: str) -> bool:
    """Whether a piece of code is mostly tests (test functions, not the functions under test)."""
    if language == "python":
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            return bool(_TEST_MARKERS["python"].search(code))
        defined = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        tests = [n for n in defined if n.lower().startswith("test")]
        return bool(tests) and len(tests) * 2 >= len(defined)
    marker = _TEST_MARKERS.get(language)
    if marker is None or not marker.search(code):
        return False
    if language in {"javascript", "typescript"}:  # tests are calls (test("...", ...)), not definitions
        return True
    if language == "rust":  # a library keeps its unit tests inside; a test file exports nothing
        return not re.search(r"^pub\s", code, re.M)
    names = defined_names(code)
    tests = [n for n in names if n.lower().startswith("test") or n.endswith(("Test", "Tests"))]
    return not names or len(tests) * 2 >= len(names)


def mentioned_files(text: str) -> list[str]:
    """File names a task or plan mentions ("write `calc.py`", "tests in calc_test.go"), in order."""
    seen: list[str] = []
    for match in _FILE_MENTION.finditer(text):
        name = match.group(1).strip(".")
        if language_of(name) and name not in seen:
            seen.append(name)
    return seen


def code_name(code: str, language: str, existing: Mapping[str, str], mentioned: Sequence[str]) -> str:
    """The file an unnamed block of code is: the existing code file it continues, else one the task or plan
    names, else the language's usual name."""
    same_language = [p for p in existing if language_of(p) == language and not languages.looks_like_test(p)]
    if len(same_language) == 1:
        return same_language[0]
    if same_language:  # several: the one defining most of the same names (a rewrite keeps its names)
        defined = defined_names(code)
        return max(same_language, key=lambda p: len(defined & defined_names(existing[p])))
    named = [m for m in mentioned if language_of(m) == language and not languages.looks_like_test(m)]
    if named:
        return named[0]
    return default_code_name(code, language)


def default_code_name(code: str, language: str) -> str:
    """The name the language's tooling expects for a lone source file."""
    if language == "java" and (cls := _JAVA_PUBLIC_TYPE.search(code)):
        return f"{cls.group(1)}.java"
    if language == "go" and (pkg := re.search(r"^package\s+(\w+)", code, re.M)) and pkg.group(1) != "main":
        return f"{pkg.group(1)}.go"
    if language == "rust" and re.search(r"^\s*fn main\s*\(", code, re.M) and not re.search(r"^\s*pub\s", code, re.M):
        return "src/main.rs"
    if language in {"c", "cpp"} and not re.search(r"\bint\s+main\s*\(", code):
        return "solution.c" if language == "c" else "solution.cpp"
    return _DEFAULT_CODE.get(language, "main" + _PRIMARY_EXTENSION.get(language, ".txt"))


def test_name(code: str, language: str, module: str, mentioned: Sequence[str], taken: Iterable[str]) -> str:
    """The file an unnamed block of tests is: a test file the task or plan names, else the name the
    language's runner finds for ``module`` (the code under test). Never one of ``taken`` (the user's tests)."""
    taken = set(taken)
    named = [m for m in mentioned if language_of(m) == language and languages.looks_like_test(m) and m not in taken]
    if named:
        return named[0]
    folder, base = posixpath.split(module) if module else ("", "")
    stem = posixpath.splitext(base)[0] or "main"
    if language == "java":
        cls = re.search(r"^\s*(?:public\s+)?(?:final\s+)?class\s+(\w+)", code, re.M)
        name = f"{cls.group(1)}.java" if cls else f"{stem[:1].upper()}{stem[1:]}Test.java"
    elif language == "go":
        name = posixpath.join(folder, f"{stem}_test.go")
    elif language in {"javascript", "typescript"}:
        name = posixpath.join(folder, f"{stem}.test{_PRIMARY_EXTENSION[language]}")
    elif language == "rust":
        name = f"tests/{stem if stem not in {'lib', 'main'} else 'integration'}.rs"
    else:
        name = f"test_{stem}{_PRIMARY_EXTENSION.get(language, '.txt')}"
    while name in taken:  # the user's test file keeps its name; ours goes beside it
        root, ext = posixpath.splitext(name)
        name = f"{root}_more{ext}"
    return name


def test_skeleton(language: str, module: str, code: str, mentioned: Sequence[str] = ()) -> str:
    """A test file's first lines for the code under test, in the form its runner finds, as an example for a
    Tester whose tests did not run ("" for languages without one here)."""
    names = sorted(n for n in defined_names(code) if not n.startswith("_"))[:3]
    if not names or not module:
        return ""
    path = test_name("", language, module, mentioned, ())
    stem = posixpath.splitext(posixpath.basename(module))[0]
    if language == "python":
        package = posixpath.splitext(module)[0].replace("/", ".")
        body = f"from {package} import {', '.join(names)}\n\n\n" + "\n\n\n".join(
            f"def test_{n.lower()}():\n    assert {n}(...) == ..." for n in names)
    elif language == "go":
        declared = re.search(r"^package\s+(\w+)", code, re.M)
        body = f"package {declared.group(1) if declared else 'main'}\n\nimport \"testing\"\n\n" + "\n\n".join(
            f"func Test{n[:1].upper()}{n[1:]}(t *testing.T) {{\n\tif got := {n}(...); got != ... {{\n"
            f"\t\tt.Fatalf(\"got %v\", got)\n\t}}\n}}" for n in names)
    elif language == "javascript":
        body = ("const test = require('node:test');\nconst assert = require('node:assert');\n"
                f"const {{ {', '.join(names)} }} = require('./{stem}');\n\n" + "\n\n".join(
                    f"test('{n}', () => {{\n  assert.strictEqual({n}(...), ...);\n}});" for n in names))
    else:
        return ""
    return f"```{language} path={path}\n{body}\n```"
