"""Fixture repositories the tests make with git: a small Python project and a small Go one, each with a test
that passes and one that already fails, and hostile trees. Each is a bare repository under a git host's root."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "Dev",
           "GIT_AUTHOR_EMAIL": "dev@example.com", "GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com"}

PYTHON_PROJECT = {
    "billing/__init__.py": "",
    "billing/client.py": (
        "def fetch(send, request):\n"
        "    \"\"\"Send the request once and return the response.\"\"\"\n"
        "    return send(request)\n"
    ),
    "billing/money.py": "def cents(amount):\n    return round(amount * 100)\n",
    "tests/test_money.py": (
        "from billing.money import cents\n\n\n"
        "def test_cents():\n    assert cents(1.25) == 125\n\n\n"
        "def test_rounding_half_even():\n    assert cents(0.125) == 13  # already failing: floats\n"
    ),
    "README.md": "# billing\n",
}

GO_PROJECT = {
    "go.mod": "module example.com/calc\n\ngo 1.19\n",
    "calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a + b }\n",
    "calc_test.go": (
        "package calc\n\nimport \"testing\"\n\n"
        "func TestAdd(t *testing.T) { if Add(2, 3) != 5 { t.Fatal(\"add\") } }\n\n"
        "func TestSub(t *testing.T) { if Sub(5, 3) != 2 { t.Fatal(\"sub\") } }\n"
    ),
}


def git(*args: str, cwd: Path, env: Mapping[str, str] | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV, **(env or {})},
                          capture_output=True, text=True)
    if done.returncode != 0:  # git's own words, so a fixture that fails on a loaded machine says why
        raise RuntimeError(f"git {' '.join(args[:2])} exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    return done.stdout


def make_repo(root: Path, full_name: str, files: Mapping[str, str | bytes], *, links: Mapping[str, str] = {},
              branch: str = "main", submodule: str = "") -> Path:
    """A bare repository ``root/OWNER/NAME.git`` whose ``branch`` holds ``files`` (and links, a submodule)."""
    work = root / "_work" / full_name
    work.mkdir(parents=True)
    git("init", "-q", "-b", branch, cwd=work)
    for path, content in files.items():
        target = work / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode())
    for path, to in links.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(to, work / path)
    git("add", "-A", cwd=work)
    if submodule:  # a gitlink entry, as `git submodule add` leaves it, without fetching anything
        git("update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},{submodule}", cwd=work)
    git("commit", "-q", "-m", "Initial commit", cwd=work)
    bare = root / f"{full_name}.git"
    bare.parent.mkdir(parents=True, exist_ok=True)
    git("clone", "-q", "--bare", str(work), str(bare), cwd=root)
    git("config", "uploadpack.allowFilter", "true", cwd=bare)
    git("config", "http.receivepack", "true", cwd=bare)
    return bare


def branch_files(bare: Path, branch: str) -> dict[str, str]:
    """The files of ``branch`` in a bare repository, read with git (for assertions)."""
    names = git("ls-tree", "-r", "--name-only", branch, cwd=bare).split("\n")
    return {n: git("show", f"{branch}:{n}", cwd=bare) for n in names if n}
