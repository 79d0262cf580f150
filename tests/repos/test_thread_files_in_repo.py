"""A file read from the thread (quoted material: anyone there may have pasted it) or attached to the request,
named as one of the repository's existing tests, never stands in for it: not in any test run, not on the branch."""

from __future__ import annotations

from agents.events import Event, Notice
from agents.types import Attachment, RunStatus, TestJob, TestReport, TestStatus, ThreadContext, ThreadMessage
from bot.checkin import FolderPublisher
from bot.repos.desk import RepoDesk
from bot.runs.service import ChatRequest, Service
from bot.store.sqlite import SQLiteStore
from tests.fakes.team_script import ScriptedSandbox
from tests.repos.conftest import TOKEN
from tests.repos.fixtures import PYTHON_PROJECT, branch_files, make_repo
from tests.repos.test_faults import TASK, _config, _team

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
