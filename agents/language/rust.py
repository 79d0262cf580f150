"""Rust: ``cargo test``, unit tests inside the library and integration tests under tests/."""

from __future__ import annotations

import re

from agents.language.description import Language, TestRun
from agents.language.sandbox_env import BASE_ENV, OFFLINE_PREFIX

_MARKER = re.compile(r"#\[(?:test|cfg\(test\))\]")
_PUBLIC = re.compile(r"^\s*pub\s", re.M)


def _name_code(code: str) -> str:
    """A program (a main and nothing public) is the binary's source; anything else the library's."""
    return "src/main.rs" if re.search(r"^\s*fn main\s*\(", code, re.M) and not _PUBLIC.search(code) else ""


def _name_test(code: str, folder: str, stem: str) -> str:
    return f"tests/{stem if stem not in {'lib', 'main'} else 'integration'}.rs"


def _is_test_code(code: str) -> bool:
    """A library keeps its unit tests inside; a test file exports nothing."""
    return bool(_MARKER.search(code)) and not re.search(r"^pub\s", code, re.M)


RUST = Language(
    name="rust", title="Rust", extensions=(".rs",), test_files=("tests/*.rs",), usual_file="src/lib.rs",
    aliases=("rs",), named_by=r"\brust\b",
    how_tests_are_found="cargo test runs #[test] functions in tests/*.rs or in a #[cfg(test)] module",
    test_marker=_MARKER, name_code=_name_code, name_test=_name_test, is_test_code=_is_test_code,
    # "error[E0425]: ..." then " --> tests/calc.rs:3:30".
    error_at=(re.compile(r"^error(?:\[E\d+\])?:.*\n\s+--> (?P<path>[\w./-]+\.rs):\d+", re.M),),
    run=TestRun(
        image="rust:1-slim", offline_image=f"{OFFLINE_PREFIX}/rust:bookworm", offline_packages=("rustc", "cargo"),
        env={**BASE_ENV, "CARGO_HOME": "/tmp/cargo", "CARGO_TARGET_DIR": "/tmp/target", "CARGO_TERM_COLOR": "never"},
        setup_when=("Cargo.lock",), setup_command="cargo fetch",
        test_command="cargo test --offline", report_format="cargo",
    ),
)
