"""What one language is, described once and read by every layer: ``Language`` and ``TestRun``.

The domain reads the naming half (extensions, test-file patterns, the usual file names, how a task names
it, what its tests look like); the sandbox reads ``run`` (its image, commands and report format). A
built-in language is one module of this package; a language added under ``[sandbox.languages.NAME]`` in
config.toml becomes one ``Language`` too, with the naming half from the same entry.

Most languages are plain data. The few habits of a toolchain that data cannot say (Java names a file after
its public class, Go after its package, Rust's binary is ``src/main.rs``) are small functions on the
description, next to the data they refine.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

FALLBACK_EXTENSION = ".txt"  # a file of a language with no extension the team knows


@dataclass(frozen=True)
class TestRun:
    """How the sandbox runs a language's tests (``[sandbox.languages.NAME]`` says the same in config.toml).

    Commands run with ``sh -c`` in ``workdir`` as an unprivileged user on a read-only root; ``setup_command``
    first, only when one of ``setup_when`` is among the files. ``report_format`` names how the output is
    counted (pytest, go, cargo, tap, junit, exit-code); ``report_file`` is a structured report the command
    writes outside the work dir, the counts' source when set."""

    __test__ = False  # not a pytest class

    image: str = ""
    image_prepare: str = ""  # run once by `sandbox build` on top of ``image`` (install the runner)
    offline_image: str = ""
    offline_packages: tuple[str, ...] = ()  # Debian packages layered on the offline base image
    workdir: str = "/work"
    env: Mapping[str, str] = field(default_factory=dict)
    setup_when: tuple[str, ...] = ()
    setup_command: str = ""
    test_command: str = ""
    report_format: str = "exit-code"
    report_file: str = ""


CodeNamer = Callable[[str], str]  # code -> its file name when its content decides it, else ""
TestNamer = Callable[[str, str, str], str]  # (test code, folder, stem of the module under test) -> name
TestCodeCheck = Callable[[str], bool]  # whether code is mostly tests
Skeleton = Callable[[str, str, Sequence[str]], str]  # (module path, its code, names it defines) -> test file body


@dataclass(frozen=True)
class Language:
    """One language, as the team names, reads and tests its files.

    ``extensions`` come first-is-primary: a new file of the language gets the first. ``test_files`` are
    glob patterns (``test_*.py``, ``*_test.go``) on a file's name, or on its path when the pattern holds a
    ``/``; the first one names a test file the team writes when nothing else does."""

    name: str
    title: str = ""  # how a person writes it ("TypeScript"); the name capitalised when empty
    extensions: tuple[str, ...] = ()
    test_files: tuple[str, ...] = ()
    usual_file: str = ""  # a lone source file's name when nothing names it; "main" + the extension when empty
    aliases: tuple[str, ...] = ()  # other words for it in a fence or a plan ("py", "golang")
    named_by: str = ""  # a regular expression: how a task's words name it; the name as a word when empty
    how_tests_are_found: str = ""  # told to a Tester whose tests did not run; said from test_files when empty
    tests_beside_code: bool = False  # a test file goes in the folder of the code it tests (Go, node)
    test_marker: re.Pattern[str] | None = None  # a line only test code has
    error_at: tuple[re.Pattern[str], ...] = ()  # where its tools say a file failed to compile or load: group "path"
    run: TestRun | None = None
    name_code: CodeNamer | None = None
    name_test: TestNamer | None = None
    is_test_code: TestCodeCheck | None = None
    skeleton: Skeleton | None = None

    @property
    def primary_extension(self) -> str:
        return self.extensions[0] if self.extensions else FALLBACK_EXTENSION

    @property
    def display_name(self) -> str:
        return self.title or self.name.capitalize()

    @property
    def words(self) -> re.Pattern[str]:
        return re.compile(self.named_by or rf"(?<![\w+#-]){re.escape(self.name)}(?![\w+#-])")

    def code_file(self, code: str) -> str:
        """The name the language's tooling expects for a lone source file of ``code``."""
        if self.name_code and (named := self.name_code(code)):
            return named
        return self.usual_file or "main" + self.primary_extension

    def test_file(self, code: str, folder: str, stem: str) -> str:
        """The test file for the module ``stem`` in ``folder``, named so the language's runner finds it."""
        if self.name_test:
            return self.name_test(code, folder, stem)
        pattern = next((p for p in self.test_files if p.count("*") == 1 and not re.search(r"[?\[\]]", p)), "")
        name = pattern.replace("*", stem) if pattern else f"test_{stem}{self.primary_extension}"
        return posixpath.join(folder, name) if self.tests_beside_code else name

    def matches_test_file(self, path: str) -> bool:
        """Whether ``path`` is named like one of this language's test files."""
        name = path.rsplit("/", 1)[-1]
        return any(fnmatchcase(path if "/" in pattern else name, pattern) for pattern in self.test_files)

    def tests_are_found(self) -> str:
        """How its runner finds tests, in a sentence for a Tester whose tests did not run."""
        if self.how_tests_are_found:
            return self.how_tests_are_found
        if self.test_files:
            return "its tests are files named " + " or ".join(self.test_files)
        return ""
