"""``--repo PATH``: a git folder on this machine. The bot fetches from it and pushes its branch to it with a git of
its own settings: nothing the folder configures runs (its hooks, on the push it receives), the folder's work tree
is never touched, the size caps hold as for a remote, and whatever its path holds reaches git as that path."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.types import FileSet
from bot.config.sections import ReposConfig, RepoSettings
from bot.repos.errors import RepoError
from bot.repos.names import RepoTarget, from_argument
from bot.repos.opening import OpenedRepo, open_repo
from bot.repos.pushing import push
from tests.repos.fixtures import PYTHON_PROJECT, branch_files, git

RECEIVING_HOOKS = ("pre-receive", "update", "post-receive", "post-update", "reference-transaction", "proc-receive",
                   "push-to-checkout", "pre-auto-gc")


def _folder(where: Path, files: dict[str, str] = PYTHON_PROJECT, branch: str = "main") -> Path:
    where.mkdir(parents=True)
    git("init", "-q", "-b", branch, cwd=where)
    for path, content in files.items():
        (where / path).parent.mkdir(parents=True, exist_ok=True)
        (where / path).write_text(content)
    git("add", "-A", cwd=where)
    git("commit", "-q", "-m", "Initial commit", cwd=where)
    return where


async def _open(folder: Path, config: ReposConfig | None = None) -> OpenedRepo:
    target = RepoTarget(from_argument(str(folder)), RepoSettings())
    return await open_repo(target, config or ReposConfig(), "", None, "run1", "change billing/money.py")


async def test_pushing_to_a_local_folder_runs_none_of_its_hooks_and_leaves_its_work_tree(tmp_path):
    folder = _folder(tmp_path / "billing")
    marker = tmp_path / "RAN"
    for where in (folder / ".git/hooks", tmp_path / "configured-hooks"):
        where.mkdir(exist_ok=True)
        for hook in RECEIVING_HOOKS:
            (where / hook).write_text(f"#!/bin/sh\necho {hook} >> {marker}\n")
            (where / hook).chmod(0o755)
    git("config", "core.hooksPath", str(tmp_path / "configured-hooks"), cwd=folder)
    git("config", "receive.denyCurrentBranch", "updateInstead", cwd=folder)  # would check files out there
    opened = await _open(folder)
    try:
        await opened.workspace.commit(FileSet({"billing/money.py": "def cents(amount):\n    return 1\n"}), "Change")
        await push(opened)
    finally:
        await opened.close()
    assert not marker.exists()
    assert branch_files(folder, opened.workspace.branch)["billing/money.py"] == "def cents(amount):\n    return 1\n"
    assert (folder / "billing/money.py").read_text() == PYTHON_PROJECT["billing/money.py"]
    assert git("status", "--porcelain", cwd=folder) == ""


# Settings of the folder's own config that name a program for git to run, each writing a marker if it ever does.
COMMAND_SETTINGS = ("core.alternateRefsCommand", "core.fsmonitor", "core.sshCommand", "core.gitProxy", "core.pager",
                    "core.editor", "core.askPass", "credential.helper", "gpg.program", "diff.external",
                    "uploadpack.packObjectsHook", "filter.any.process", "filter.any.smudge", "filter.any.clean")


async def test_fetching_from_and_pushing_to_a_local_folder_runs_no_program_its_config_names(tmp_path):
    folder = _folder(tmp_path / "billing")
    marker = tmp_path / "RAN"
    for setting in COMMAND_SETTINGS:
        git("config", setting, f"echo {setting} >> {marker}; true", cwd=folder)
    (folder / ".git/info/attributes").write_text("* filter=any\n")
    # Refs of another repository the folder borrows objects from: the push lists them, through the command above.
    lender = _folder(tmp_path / "lender")
    (folder / ".git/objects/info/alternates").write_text(f"{lender / '.git/objects'}\n")
    opened = await _open(folder)
    try:
        await opened.workspace.everything()
        await opened.workspace.commit(FileSet({"billing/money.py": "def cents(amount):\n    return 1\n"}), "Change")
        await push(opened)
    finally:
        await opened.close()
    assert not marker.exists(), marker.read_text()
    assert branch_files(folder, opened.workspace.branch)["billing/money.py"] == "def cents(amount):\n    return 1\n"


async def test_a_push_to_the_branch_the_folder_has_checked_out_is_refused_not_checked_out(tmp_path):
    folder = _folder(tmp_path / "billing")
    git("config", "receive.denyCurrentBranch", "updateInstead", cwd=folder)
    opened = await _open(folder)
    git("checkout", "-q", "-b", opened.workspace.branch, cwd=folder)  # someone works on the bot's branch there
    try:
        await opened.workspace.commit(FileSet({"billing/money.py": "def cents(amount):\n    return 1\n"}), "Change")
        with pytest.raises(RepoError, match="refused"):
            await push(opened)
    finally:
        await opened.close()
    assert (folder / "billing/money.py").read_text() == PYTHON_PROJECT["billing/money.py"]


async def test_a_local_folder_is_fetched_within_the_caps_like_a_remote_one(tmp_path):
    folder = _folder(tmp_path / "billing", {**PYTHON_PROJECT, "data/huge.txt": "x" * 300_000})
    opened = await _open(folder, ReposConfig(max_file_bytes=100_000))
    try:
        await opened.workspace.everything()
        checkout = opened.workspace.checkout
        blobs = git("cat-file", "--batch-all-objects", "--batch-check=%(objecttype) %(objectsize)",
                    cwd=checkout.git_dir)
    finally:
        await opened.close()
    assert "larger than 100,000 bytes" in checkout.left_out["data/huge.txt"]
    assert "blob 300000" not in blobs  # never fetched: the folder's git served the filter
    assert set(checkout.files) == set(PYTHON_PROJECT)


@pytest.mark.parametrize("name", ["with space", "per%41cent", "hash#and?query", "übung"])
async def test_a_folder_path_reaches_git_as_written(tmp_path, name):
    folder = _folder(tmp_path / name)
    opened = await _open(folder)
    try:
        assert opened.workspace.name == f"{folder.resolve()}@main"
        assert (opened.workspace.tree / "billing/client.py").read_text() == PYTHON_PROJECT["billing/client.py"]
    finally:
        await opened.close()


async def test_a_detached_head_and_a_folder_that_is_no_repository_each_get_a_sentence(tmp_path):
    folder = _folder(tmp_path / "billing")
    git("checkout", "-q", "--detach", cwd=folder)
    (folder / "README.md").write_text("# changed\n")
    git("commit", "-q", "-am", "On no branch", cwd=folder)
    with pytest.raises(RepoError, match=r"HEAD is on no branch .*--base BRANCH"):
        await _open(folder)
    with pytest.raises(RepoError, match="not a git repository: --repo takes the top folder"):
        await _open(folder / "billing")
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(RepoError, match="not a git repository"):
        await _open(plain)


async def test_a_head_naming_a_branch_that_does_not_exist_is_not_called_empty(tmp_path):
    folder = _folder(tmp_path / "billing", branch="dev")
    git("symbolic-ref", "HEAD", "refs/heads/gone", cwd=folder)
    with pytest.raises(RepoError, match=r"default branch \(its HEAD\) is a branch that does not exist"):
        await _open(folder)
    empty = tmp_path / "empty"
    empty.mkdir()
    git("init", "-q", cwd=empty)
    with pytest.raises(RepoError, match="The repository is empty"):
        await _open(empty)
