"""The file a code block is when its reply gives it no name: what the context makes obvious.

A model that answers with one bare ```` ```python ```` block meant *the* file: the only code file there
is, a file the task or plan names, or, failing both, the name that language's tooling expects
(``main.py``, ``main.go``, ``src/lib.rs``, ``Main.java`` for ``public class Main``...). A Tester's bare
block is the test file for the module under test, named the way that language's runner finds it
(``test_calc.py``, ``calc_test.go``, ``calc.test.js``, ``CalcTest.java``, ``tests/calc.rs``...).
What each language expects is its description's (``agents.language``); this module decides which rule applies.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence

from agents.language import Language, Languages
from agents.language.code import defined_names, mostly_test_definitions
from agents.language.description import FALLBACK_EXTENSION

_FILE_MENTION = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.[A-Za-z]\w{0,5})\b")


def is_test_code(code: str, language: Language | None) -> bool:
    """Whether a piece of code is mostly tests (test functions, not the functions under test)."""
    if language is None:
        return False
    if language.is_test_code:
        return language.is_test_code(code)
    return mostly_test_definitions(code, language.test_marker)


def mentioned_files(text: str, languages: Languages) -> list[str]:
    """File names a task or plan mentions ("write `calc.py`", "tests in calc_test.go"), in order."""
    seen: list[str] = []
    for match in _FILE_MENTION.finditer(text):
        name = match.group(1).strip(".")
        if languages.of_path(name) and name not in seen:
            seen.append(name)
    return seen


def code_name(code: str, language: str, existing: Mapping[str, str], mentioned: Sequence[str],
              languages: Languages) -> str:
    """The file an unnamed block of code is: the existing code file it continues, else one the task or plan
    names, else the language's usual name."""
    same_language = [p for p in existing if languages.of_path(p) == language and not languages.looks_like_test(p)]
    if len(same_language) == 1:
        return same_language[0]
    if same_language:  # several: the one defining most of the same names (a rewrite keeps its names)
        defined = defined_names(code)
        return max(same_language, key=lambda p: len(defined & defined_names(existing[p])))
    named = [m for m in mentioned if languages.of_path(m) == language and not languages.looks_like_test(m)]
    if named:
        return named[0]
    return default_code_name(code, language, languages)


def default_code_name(code: str, language: str, languages: Languages) -> str:
    """The name the language's tooling expects for a lone source file."""
    described = languages.get(language)
    return described.code_file(code) if described else "main" + FALLBACK_EXTENSION


def test_name(code: str, language: str, module: str, mentioned: Sequence[str], taken: Iterable[str],
              languages: Languages) -> str:
    """The file an unnamed block of tests is: a test file the task or plan names, else the name the
    language's runner finds for ``module`` (the code under test). Never one of ``taken`` (the user's tests)."""
    taken = set(taken)
    named = [m for m in mentioned
             if languages.of_path(m) == language and languages.looks_like_test(m) and m not in taken]
    if named:
        return named[0]
    folder, base = posixpath.split(module) if module else ("", "")
    stem = posixpath.splitext(base)[0] or "main"
    described = languages.get(language)
    name = described.test_file(code, folder, stem) if described else f"test_{stem}{FALLBACK_EXTENSION}"
    while name in taken:  # the user's test file keeps its name; ours goes beside it
        root, ext = posixpath.splitext(name)
        name = f"{root}_more{ext}"
    return name


def test_skeleton(language: str, module: str, code: str, mentioned: Sequence[str], languages: Languages) -> str:
    """A test file's first lines for the code under test, in the form its runner finds, as an example for a
    Tester whose tests did not run ("" for languages without one)."""
    names = sorted(n for n in defined_names(code) if not n.startswith("_"))[:3]
    described = languages.get(language)
    if not names or not module or described is None or described.skeleton is None:
        return ""
    path = test_name("", language, module, mentioned, (), languages)
    return f"```{language} path={path}\n{described.skeleton(module, code, names)}\n```"
