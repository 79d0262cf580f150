"""A file of the repository the team rewrites keeps the shape it is stored in: CRLF line endings stay CRLF (a
model answers with LF), a UTF-8 byte-order mark stays, and so does whether the file ends with a line break; so
the pull request shows the lines that changed, not every line of the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.types import FileSet, RepoTests, RunStatus
from bot.repos.checkout import fetch, fetch_rest
from bot.repos.git import Git, GitAccess
from bot.repos.workspace import RepoWorkspace
from tests.fakes.team_script import ScriptedModel
from tests.repos.conftest import TOKEN
from tests.repos.fixtures import PYTHON_PROJECT, git, make_repo
from tests.repos.test_faults import _config, _passing, _run
from tests.repos.test_pull_request_docker import PLAN, TESTS
from tests.repos.test_tree_clash import LIMITS

STORED = {
    "crlf.py": b"def cents(amount):\r\n    return round(amount * 100)\r\n",
    "bom.py": "\ufeffdef cents(amount):\n    return round(amount * 100)\n".encode(),
    "no_final_break.txt": b"one\ntwo",
    "lf.py": b"def cents(amount):\n    return round(amount * 100)\n",
    "mixed.txt": b"one\r\ntwo\n",
}
REWRITTEN = "def cents(amount):\n    return int(amount * 100)\n"


async def _workspace(git_host, tmp_path: Path, files: dict[str, bytes]) -> RepoWorkspace:
    make_repo(git_host.root, "acme/billing", files)
    home = tmp_path / "home"
    home.mkdir()
    url = f"{git_host.url}/acme/billing.git"
    access = Git(GitAccess(url, TOKEN), home, 60)
    checkout = await fetch(access, url, "main", tmp_path / "work", LIMITS)
    await fetch_rest(access, checkout, LIMITS)
    return RepoWorkspace("acme/billing@main", access, checkout, RepoTests("python", "pytest", "pytest"), 2000, LIMITS,
                         "codegen-chat/x-1")


async def _committed(workspace: RepoWorkspace, path: str) -> bytes:
    return (await workspace.git.run(["show", f"{workspace.head}:{path}"], workspace.checkout.git_dir)).stdout


@pytest.mark.parametrize("path, written, stored", [
    ("crlf.py", REWRITTEN, b"def cents(amount):\r\n    return int(amount * 100)\r\n"),
    ("bom.py", REWRITTEN, "\ufeffdef cents(amount):\n    return int(amount * 100)\n".encode()),
    ("no_final_break.txt", "one\ntwo\nthree\n", b"one\ntwo\nthree"),
    ("lf.py", REWRITTEN.replace("\n", "\r\n"), REWRITTEN.encode()),
    ("mixed.txt", "one\ntwo\nthree\n", b"one\ntwo\nthree\n"),  # no one style to keep: as written
    ("new.py", "x = 1\r\n", b"x = 1\r\n"),  # a new file is as the team wrote it
])
async def test_a_rewritten_file_keeps_the_line_endings_mark_and_final_break_it_was_stored_with(
        git_host, tmp_path, path, written, stored):
    workspace = await _workspace(git_host, tmp_path, STORED)
    assert await workspace.commit(FileSet({path: written}), "Change") is not None
    assert await _committed(workspace, path) == stored


async def test_a_rewrite_that_differs_only_in_line_endings_changes_nothing(git_host, tmp_path):
    workspace = await _workspace(git_host, tmp_path, STORED)
    same = FileSet({"crlf.py": STORED["crlf.py"].decode().replace("\r\n", "\n"),
                    "bom.py": STORED["bom.py"].decode().removeprefix("\ufeff"), "no_final_break.txt": "one\ntwo\n"})
    assert workspace.changed(same) == {}
    assert await workspace.commit(same, "Nothing") is None and workspace.commits == []


DOLLARS = ("```python path=billing/money.py\ndef cents(amount):\n    return round(amount * 100)\n\n\n"
           "def dollars(cents):\n    return cents / 100\n```\n")


async def test_a_crlf_file_rewritten_whole_shows_only_its_added_lines_in_the_pull_request(git_host, github, tmp_path):
    stored = {**PYTHON_PROJECT, "billing/money.py": PYTHON_PROJECT["billing/money.py"].replace("\n", "\r\n")}
    bare = make_repo(git_host.root, "acme/billing", stored)
    github.add_repo("acme/billing")
    model = ScriptedModel({"planner": [PLAN], "programmer": [DOLLARS], "tester": [TESTS],
                           "optimizer": ["VERDICT: APPROVE"], "checkin": ["# dollars\n"]})
    finished = await _run(_config(git_host, github, tmp_path), model, _passing, tmp_path,
                          "add dollars() to billing/money.py in acme/billing")
    assert finished.status is RunStatus.PASSED and finished.checkin.kind == "pull_request", finished.reason
    added, removed, _ = git("diff", "--numstat", "main", finished.checkin.branch, "--", "billing/money.py",
                            cwd=bare).split("\t")
    assert (int(added), int(removed)) == (4, 0)  # two blank lines and dollars(); the lines it had are untouched
