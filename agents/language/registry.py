"""The languages a run knows: the built-in ones, with those the config adds or changes laid over them.

Every layer asks one ``Languages`` which language a file is in, whether it is a test file, what a fence's
word or a task's words name. The composition root builds it once from config (``bot.sandbox.languages``);
``BUILT_IN`` is the one with no config.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Iterator

from agents.language.description import Language

# Test-file conventions common to many runners, whatever the language: test_x.py, x_test.go, x_tests.py, x.test.js,
# x.spec.ts, Django's tests.py, anything under a tests/, Jest's __tests__/ or RSpec's spec/ folder. Each language adds
# its own patterns (FooTest.java).
TEST_PREFIXES = ("test_",)
TEST_SUFFIXES = ("_test", "_tests", "-test", ".test", ".spec", "_spec", "-spec")  # of the name before its extension
TEST_STEMS = ("tests",)  # the whole name before its extension: Django's tests.py, Rust's tests.rs
TEST_FOLDERS = ("tests/", "test/", "__tests__/", "spec/", "specs/")
OTHER_TEST_CLASSES = (".kt",)  # Kotlin is no language of the team's, but its FooTest.kt is still a test


class Languages:
    """An immutable table of languages by name, with the lookups every layer needs."""

    def __init__(self, languages: Iterable[Language]) -> None:
        self._by_name: dict[str, Language] = {}
        for language in languages:
            self._by_name[language.name] = language
        self._by_extension = {ext.lower(): lang.name for lang in self._by_name.values() for ext in lang.extensions}
        self._aliases = {alias: lang.name for lang in self._by_name.values() for alias in lang.aliases}

    def __iter__(self) -> Iterator[Language]:
        return iter(self._by_name.values())

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self._by_name)

    def get(self, name: str) -> Language | None:
        return self._by_name.get(self.normalise(name))

    def laid_over(self, changes: Iterable[Language]) -> Languages:
        """These languages with ``changes`` laid over them by name: a changed built-in keeps what the change
        leaves empty (its extensions, test patterns, usual file, naming habits); a new one is taken whole."""
        merged = dict(self._by_name)
        for change in changes:
            base = merged.get(change.name)
            merged[change.name] = _over(base, change) if base else change
        return Languages(merged.values())

    def normalise(self, name: str) -> str:
        key = name.strip().lower()
        return self._aliases.get(key, key)

    def known(self, name: str, task: str = "") -> bool:
        """Whether a language name is one these languages have, or one the task itself names."""
        language = self.normalise(name)
        return language in self._by_name or (bool(language) and language in task.lower())

    def of_path(self, path: str) -> str:
        """The language a file name is written in, '' when its extension says nothing."""
        name = path.rsplit("/", 1)[-1]
        return self._by_extension.get(name[name.rfind("."):].lower(), "") if "." in name else ""

    def detect(self, paths: Iterable[str], hint: str = "") -> str:
        """The hint when given, else the language most of the files are written in ('' if none)."""
        if hint.strip():
            return self.normalise(hint)
        counts = Counter(language for path in paths if (language := self.of_path(path)))
        return counts.most_common(1)[0][0] if counts else ""

    def extension(self, name: str) -> str:
        """The extension a new file of the language gets ('' for a language not in the table)."""
        language = self.get(name)
        return language.primary_extension if language and language.extensions else ""

    def looks_like_test(self, path: str) -> bool:
        """Whether a file follows a test-file convention: a common one (test_x.py, x_test.go, x.test.js,
        x.spec.ts, tests.py, anything under a tests/, __tests__/ or spec/ folder) or one of a language's own
        (FooTest.java). ``contest.py`` or ``latest_prices.py`` are not tests."""
        lowered = path.lower()
        if lowered.startswith(TEST_FOLDERS) or any(f"/{folder}" in lowered for folder in TEST_FOLDERS):
            return True
        name = path.rsplit("/", 1)[-1]
        stem = name[: name.rfind(".")] if "." in name else name
        lowered_stem = stem.lower()
        if lowered_stem.startswith(TEST_PREFIXES) or lowered_stem.endswith(TEST_SUFFIXES) or lowered_stem in TEST_STEMS:
            return True
        if name.endswith(OTHER_TEST_CLASSES) and stem.endswith(("Test", "Tests")):
            return True
        return any(language.matches_test_file(path) for language in self._by_name.values())

    def named_in(self, text: str) -> str:
        """The language a task's words name ("a Go function", "in TypeScript"), '' when none: the one named
        first, by name when two are named at the same place ("TypeScript" holds "Script")."""
        lowered = text.lower()
        found = [(match.start(), language.name) for language in self._by_name.values()
                 if (match := language.words.search(lowered))]
        return min(found)[1] if found else ""


def _over(base: Language, change: Language) -> Language:
    """``base`` with every field ``change`` sets (not empty) taken from ``change``."""
    given = {f.name: getattr(change, f.name) for f in dataclasses.fields(change)
             if getattr(change, f.name) not in (None, "", (), False)}
    return dataclasses.replace(base, **given)
