"""Which command runs a repository's own tests, and in which sandbox language: the configured
``[repos."owner/name"] test_command``, else what the tree shows (pytest, npm test, go test ./..., cargo test,
Maven, Gradle)."""

from __future__ import annotations

import shlex
from collections.abc import Collection

from agents.language.python import REPORT, REPOSITORY_PYTEST_THEN_EXIT
from agents.types import RepoTests

# pytest as the repository configures it (its own pytest.ini/pyproject are authoritative), counted from its JUnit
# report written where the built-in Python runner writes it (``REPORT``, which only the sandbox reads), never
# from what it prints (the code under test can print a summary line); no plugin the setup installed loads.
# As the team's own tests are: pytest is the sandbox's (``-I``: a ``pytest.py`` in the tree is not imported in
# its place), and the report's channel is open before any file of the tree runs (none can write into it).
PYTEST = (f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -I -B -c {shlex.quote(REPOSITORY_PYTEST_THEN_EXIT)} "
          f"-q -rfE --tb=short -p no:cacheprovider --color=no --junitxml={REPORT}")
_BY_MARKER = (  # (a file at the top of the tree, language, command, report format)
    ("go.mod", "go", "go test -v ./...", "go"),
    ("Cargo.toml", "rust", "cargo test --offline", "cargo"),
    ("package.json", "javascript", "npm test --silent", "tap"),
    ("pom.xml", "java", "mvn -q -o test", "exit-code"),
    ("build.gradle", "java", "gradle test --offline -q", "exit-code"),
    ("build.gradle.kts", "java", "gradle test --offline -q", "exit-code"),
    ("pyproject.toml", "python", PYTEST, "pytest"),
    ("setup.py", "python", PYTEST, "pytest"),
    ("setup.cfg", "python", PYTEST, "pytest"),
    ("pytest.ini", "python", PYTEST, "pytest"),
    ("requirements.txt", "python", PYTEST, "pytest"),
)
_BY_EXTENSION = ((".py", "python", PYTEST, "pytest"), (".go", "go", "go test -v ./...", "go"),
                 (".js", "javascript", "npm test --silent", "tap"), (".rs", "rust", "cargo test --offline", "cargo"))


def detect(paths: Collection[str], configured: str = "") -> RepoTests | None:
    """How the tests run; None when nothing in the tree says (and none is configured)."""
    found = _detected(paths)
    if configured:
        language = found[0] if found else "python"
        report = "pytest" if "pytest" in configured else {"go": "go", "rust": "cargo"}.get(language, "exit-code")
        return RepoTests(language, configured, report)
    if not found:
        return None
    language, command, report = found
    return RepoTests(language, command, report, shown="pytest" if command == PYTEST else "")


def _detected(paths: Collection[str]) -> tuple[str, str, str] | None:
    top = {p for p in paths if "/" not in p}
    for marker, language, command, report in _BY_MARKER:
        if marker in top:
            return language, command, report
    for extension, language, command, report in _BY_EXTENSION:
        if any(p.endswith(extension) for p in paths):
            return language, command, report
    return None
