"""Go: ``go test -json`` in the package under test (counted from its events: ``bot.sandbox.results``)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from agents.language.description import Language, TestRun
from agents.language.sandbox_env import BASE_ENV, OFFLINE_PREFIX

_PACKAGE = re.compile(r"^package\s+(\w+)", re.M)


def _name_code(code: str) -> str:
    """A package other than main is a file named after it."""
    package = _PACKAGE.search(code)
    return f"{package.group(1)}.go" if package and package.group(1) != "main" else ""


def _skeleton(module: str, code: str, names: Sequence[str]) -> str:
    declared = _PACKAGE.search(code)
    return f"package {declared.group(1) if declared else 'main'}\n\nimport \"testing\"\n\n" + "\n\n".join(
        f"func Test{n[:1].upper()}{n[1:]}(t *testing.T) {{\n\tif got := {n}(...); got != ... {{\n"
        f"\t\tt.Fatalf(\"got %v\", got)\n\t}}\n}}" for n in names)


GO = Language(
    name="go", title="Go", extensions=(".go",), test_files=("*_test.go",), usual_file="main.go",
    aliases=("golang",), named_by=r"\bgolang\b|\bin go\b|\bgo (?:function|program|package|module)",
    how_tests_are_found="go test runs func TestXxx(t *testing.T) in files ending in _test.go, in the package under test",
    tests_beside_code=True, test_marker=re.compile(r"^func (?:Test|Benchmark|Example)\w*\(", re.M),
    name_code=_name_code, skeleton=_skeleton,
    # "./x_test.go:3:57: undefined: x"
    error_at=(re.compile(r"^(?:\./)?(?P<path>[\w./-]+\.go):\d+(?::\d+)?: (?!warning|note)", re.M),),
    run=TestRun(
        image="golang:1.23", offline_image=f"{OFFLINE_PREFIX}/go:bookworm", offline_packages=("golang-go",),
        env={**BASE_ENV, "GOCACHE": "/tmp/go-cache", "GOPATH": "/tmp/go", "CGO_ENABLED": "0",
             "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"},
        setup_when=("go.sum",), setup_command="go mod download",
        test_command="[ -f go.mod ] || go mod init sandbox >/dev/null 2>&1; go test -json ./...",
        report_format="go",
    ),
)
