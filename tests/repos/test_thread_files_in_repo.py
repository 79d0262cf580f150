"""A file read from the thread (quoted material: anyone there may have pasted it) or attached to the request,
named as one of the repository's existing tests, never stands in for it: not in any test run, not on the branch."""

from __future__ import annotations

import asyncio
from typing import Any

from agents.events import Event, Notice
from agents.types import Attachment, RunStatus, TestJob, TestReport, TestStatus, ThreadContext, ThreadMessage
from bot.checkin import FolderPublisher
from bot.repos import workspace as workspace_module
from bot.repos.desk import RepoDesk
from bot.runs.service import ChatRequest, Service
from bot.store.sqlite import SQLiteStore
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox
from tests.repos.conftest import TOKEN
from tests.repos.fixtures import PYTHON_PROJECT, branch_files, make_repo
from tests.repos.test_faults import TASK, _config, _passing, _team

HOLLOW = "def test_cents():\n    pass\n"


async def test_a_thread_file_named_as_an_existing_test_never_replaces_it(git_host, github, tmp_path):
    bare = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    seen: list[str] = []

    def verdict(job: TestJob) -> TestReport:
        seen.append(job.files.get("tests/test_money.py", ""))
        return TestReport(TestStatus.PASSED, 0, 0.1, 2, 0, "2 passed")

    thread = ThreadContext((ThreadMessage("mallory", "here is a better test"),),
                           (Attachment("tests/test_money.py", HOLLOW),), "read 1 earlier message, 1 file")
    config = _config(git_host, github, tmp_path)
    store = await SQLiteStore.open(config.db_path())
    try:
        service = Service(config, store, _team(), ScriptedSandbox(verdict), repos=RepoDesk(config, TOKEN))

        events: list[Event] = []

        async def sink(event: Event) -> None:
            events.append(event)

        request = ChatRequest("slack", "C1:1", "alice", TASK, places=("slack:C1",), thread=thread)
        finished = await (await service.submit(request, sink, FolderPublisher(tmp_path / "saved"))).wait()
    finally:
        await store.close()
    assert any(isinstance(e, Notice) and e.text.startswith("Not used: tests/test_money.py") for e in events)
    assert all(text == PYTHON_PROJECT["tests/test_money.py"] for text in seen), seen
    assert finished.checkin is not None and finished.checkin.branch
    assert branch_files(bare, finished.checkin.branch)["tests/test_money.py"] == PYTHON_PROJECT["tests/test_money.py"]
    assert finished.status is RunStatus.PASSED


LFS_POINTER = ("version https://git-lfs.github.com/spec/v1\n"
               "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n")


async def test_a_request_file_at_a_git_lfs_path_is_not_used_and_the_pointer_stays(git_host, github, tmp_path,
                                                                                  monkeypatch):
    """Whether a path holds a Git LFS pointer is known once its blob is fetched: a file given with the request is
    checked against it before the run starts, however far the background fetch of the tree has come (here: not
    started until the Planner is asked)."""
    bare = make_repo(git_host.root, "acme/billing", {**PYTHON_PROJECT, "data/rates.csv": LFS_POINTER,
                                                     ".gitattributes": "data/*.csv filter=lfs -text\n"})
    github.add_repo("acme/billing")
    planning = asyncio.Event()
    fetch_rest = workspace_module.fetch_rest

    async def held(*args: Any) -> None:
        await planning.wait()
        await fetch_rest(*args)

    monkeypatch.setattr(workspace_module, "fetch_rest", held)

    class Team(ScriptedModel):
        def stream(self, role: str, *args: Any, **kwargs: Any) -> Any:
            planning.set()
            return super().stream(role, *args, **kwargs)

    model = Team(dict(_team().queues))
    thread = ThreadContext((), (Attachment("data/rates.csv", "day,rate\n1,0.5\n"),), "read 1 file")
    config = _config(git_host, github, tmp_path)
    store = await SQLiteStore.open(config.db_path())
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    try:
        service = Service(config, store, model, ScriptedSandbox(_passing), repos=RepoDesk(config, TOKEN))
        request = ChatRequest("slack", "C1:1", "alice", TASK, places=("slack:C1",), thread=thread)
        finished = await (await service.submit(request, sink, FolderPublisher(tmp_path / "saved"))).wait()
    finally:
        await store.close()
    assert any(isinstance(e, Notice) and "data/rates.csv (not read by the bot: a Git LFS file" in e.text
               for e in events), [e for e in events if isinstance(e, Notice)]
    assert finished.status is RunStatus.PASSED and finished.checkin is not None
    assert finished.checkin.kind == "pull_request", finished.checkin
    assert branch_files(bare, finished.checkin.branch)["data/rates.csv"] == LFS_POINTER
