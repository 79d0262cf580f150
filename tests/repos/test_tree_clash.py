"""A file the team writes never takes the place of something else of the repository's tree: git keeps one entry
per path, so a file named like a folder would drop the folder and all it holds from the commit, a file below a
file or a link would drop that file or link, and a file over a link or a submodule would replace it. Such a file
is not saved (said, with why); the commit refuses it too."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.events import Event, Notice, RunFinished
from agents.types import FileSet, RepoTests, RunStatus, TestJob, TestReport, TestStatus
from bot.checkin import FolderPublisher
from bot.repos.checkout import Limits, fetch, fetch_rest
from bot.repos.desk import RepoDesk
from bot.repos.errors import RepoError
from bot.repos.git import Git, GitAccess
from bot.repos.workspace import RepoWorkspace
from bot.runs.service import ChatRequest, Service
from bot.store.sqlite import SQLiteStore
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox
from tests.repos.conftest import TOKEN
from tests.repos.fixtures import PYTHON_PROJECT, branch_files, make_repo
from tests.repos.test_faults import TASK, _config
from tests.repos.test_pull_request_docker import CODE, PLAN, TESTS

LIMITS = Limits(max_files=1000, max_bytes=50_000_000, max_file_bytes=100_000)
LINKS = {"docs": "/etc", "billing/current": "money.py"}


async def _workspace(git_host, tmp_path: Path) -> RepoWorkspace:
    make_repo(git_host.root, "acme/billing", PYTHON_PROJECT, links=LINKS, submodule="vendor/lib")
    home = tmp_path / "home"
    home.mkdir()
    url = f"{git_host.url}/acme/billing.git"
    git = Git(GitAccess(url, TOKEN), home, 60)
    checkout = await fetch(git, url, "main", tmp_path / "work", LIMITS)
    await fetch_rest(git, checkout, LIMITS)
    return RepoWorkspace("acme/billing@main", git, checkout, RepoTests("python", "pytest", "pytest"), 2000, LIMITS,
                         "codegen-chat/x-1")


@pytest.mark.parametrize("path, why", [
    ("billing", "it is a folder of the repository: a file there would remove everything in it"),
    ("README.md/notes.md", "README.md is a file of the repository, not a folder"),
    ("docs/passwd", "docs is a link of the repository, not a folder"),
    ("billing/current", "it is a link in the repository"),
    ("vendor/lib", "it is a submodule in the repository"),
    ("vendor/lib/patch.py", "vendor/lib is a submodule of the repository, not a folder"),
    ("Billing/retry.py", "the repository has billing, which differs from Billing only in case"),
    ("readme.md", "the repository has README.md, which differs from readme.md only in case"),
])
async def test_a_file_that_would_take_the_place_of_part_of_the_tree_is_never_committed(git_host, tmp_path, path, why):
    workspace = await _workspace(git_host, tmp_path)
    assert why in workspace.unwritable([path, "billing/retry.py", "billing/money.py"])[path]
    assert set(workspace.unwritable([path, "billing/retry.py", "billing/money.py"])) == {path}
    with pytest.raises(RepoError, match="nothing was committed"):
        await workspace.commit(FileSet({path: "x = 1\n", "billing/money.py": "changed = True\n"}), "Change")
    assert workspace.commits == [] and workspace.head == workspace.checkout.head


async def test_new_files_beside_the_tree_are_committed_and_the_tree_kept(git_host, tmp_path):
    workspace = await _workspace(git_host, tmp_path)
    await workspace.commit(FileSet({"billing/retry.py": "x = 1\n", "docs.md": "# docs\n"}), "Add")
    done = await workspace.git.run(["ls-tree", "-r", "--name-only", workspace.head], workspace.checkout.git_dir)
    assert set(done.stdout.decode().split()) == {*PYTHON_PROJECT, *LINKS, "vendor/lib", "billing/retry.py", "docs.md"}


async def _team_writes(git_host, github, tmp_path: Path, files: dict[str, str], written: str,
                       sandbox_sees: list[TestJob] | None = None) -> tuple[Path, RunFinished, list[str]]:
    """A run in a repository holding ``files`` whose Programmer also writes ``written`` (a file block): the
    repository, how the run finished, and the notices it gave."""
    bare = make_repo(git_host.root, "acme/billing", files)
    github.add_repo("acme/billing")
    model = ScriptedModel({"planner": [PLAN], "programmer": [CODE + written], "tester": [TESTS],
                           "optimizer": ["VERDICT: APPROVE"], "checkin": ["# retries\n"]})
    config = _config(git_host, github, tmp_path)
    notices: list[str] = []
    seen = sandbox_sees if sandbox_sees is not None else []

    async def sink(event: Event) -> None:
        if isinstance(event, Notice):
            notices.append(event.text)

    def passing(job: TestJob) -> TestReport:
        seen.append(job)
        return TestReport(TestStatus.PASSED, 0, 0.1, 2, 0, "2 passed")

    store = await SQLiteStore.open(config.db_path())
    try:
        service = Service(config, store, model, ScriptedSandbox(passing), repos=RepoDesk(config, TOKEN))
        handle = await service.submit(ChatRequest("terminal", "s", "alice", TASK, places=("terminal",)), sink,
                                      FolderPublisher(tmp_path / "saved"))
        finished = await handle.wait()
    finally:
        await store.close()
    return bare, finished, notices


async def test_the_team_is_told_and_the_pull_request_keeps_the_folder_a_file_was_named_like(git_host, github, tmp_path):
    shadow = "```python path=tests\nimport pytest\n```\n"
    bare, finished, notices = await _team_writes(git_host, github, tmp_path, PYTHON_PROJECT, shadow)
    assert finished.status is RunStatus.PASSED and finished.checkin.kind == "pull_request"
    assert any("Not saved: tests (it is a folder of the repository" in n for n in notices)
    files = branch_files(bare, finished.checkin.branch)
    assert files["tests/test_money.py"] == PYTHON_PROJECT["tests/test_money.py"]
    assert "tests" not in files and "except ConnectionError" in files["billing/client.py"]


LFS_POINTER = ("version https://git-lfs.github.com/spec/v1\n"
               "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n")
UNREAD = {".gitattributes": "data/*.csv filter=lfs diff=lfs merge=lfs -text\n", "data/rates.csv": LFS_POINTER,
          "logo.png": b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "notes/latin1.txt": "caf\xe9\n".encode("latin-1"),
          "data/huge.txt": "x" * 200_000}


async def test_a_file_the_team_cannot_have_as_text_is_never_shown_as_one_nor_rewritten(git_host, tmp_path):
    """A Git LFS pointer is not its file (the file is on the LFS server), a binary file or one over the size cap
    is never read: none is shown to the team or sent to the sandbox, and none is replaced by what the team wrote."""
    make_repo(git_host.root, "acme/billing", {**PYTHON_PROJECT, **UNREAD})
    home = tmp_path / "home"
    home.mkdir()
    url = f"{git_host.url}/acme/billing.git"
    git = Git(GitAccess(url, TOKEN), home, 60)
    checkout = await fetch(git, url, "main", tmp_path / "work", LIMITS)
    workspace = RepoWorkspace("acme/billing@main", git, checkout, RepoTests("python", "pytest", "pytest"), 2000,
                              LIMITS, "codegen-chat/x-1")
    unread = [p for p in UNREAD if p != ".gitattributes"]
    assert await workspace.read(unread) == FileSet()
    assert not set(unread) & set(await workspace.everything())
    refused = workspace.unwritable([*unread, "billing/money.py"])
    assert set(refused) == set(unread)
    assert "a Git LFS file" in refused["data/rates.csv"] and "binary" in refused["logo.png"]
    assert "larger than 100,000 bytes" in refused["data/huge.txt"]
    with pytest.raises(RepoError, match="nothing was committed"):
        await workspace.commit(FileSet({"data/rates.csv": "day,rate\n1,0.5\n"}), "Change")
    assert workspace.commits == []


async def test_the_team_is_told_a_git_lfs_file_stays_as_it_is_and_the_pull_request_keeps_its_pointer(
        git_host, github, tmp_path):
    lfs = {path: UNREAD[path] for path in (".gitattributes", "data/rates.csv")}
    rewrite = "```csv path=data/rates.csv\nday,rate\n1,0.5\n```\n"
    jobs: list[TestJob] = []
    bare, finished, notices = await _team_writes(git_host, github, tmp_path, {**PYTHON_PROJECT, **lfs}, rewrite, jobs)
    assert jobs and not any("data/rates.csv" in job.files for job in jobs)  # the pointer is not the tests' file
    assert finished.status is RunStatus.PASSED and finished.checkin.kind == "pull_request"
    assert any("Not saved: data/rates.csv (not read by the bot: a Git LFS file" in n for n in notices), notices
    assert not any("data/rates.csv" in n and "written without being read" in n for n in notices)
    files = branch_files(bare, finished.checkin.branch)
    assert files["data/rates.csv"] == LFS_POINTER and "except ConnectionError" in files["billing/client.py"]
