"""No secret leaves in a published file: whichever publisher a run's check-in reaches (a Gist on the
loopback GitHub, the output folder, a chat thread's attachments), a model reply that quotes a token is
masked in the files, their names, the README, the task and the test output the README quotes."""

from __future__ import annotations

import io
from pathlib import Path

from adapters.terminal import TerminalRun, run_in_terminal
from agents.types import RunStatus, TestReport, TestStatus
from bot.chat.renderer import RunRenderer
from bot.checkin import FolderPublisher, MemoryGistIndex, publisher_for
from bot.config.sections import CheckinConfig, Config, Secrets
from bot.model.client import OpenAIChatModel
from bot.runs.service import Service
from bot.safety.redact import Redactor
from tests.checkin.support import TOKEN, publication
from tests.conftest import with_changes
from tests.fakes import team_script as s
from tests.fakes.chat_thread import RecordingThread, platform
from tests.fakes.github_server import FakeGitHub
from tests.fakes.team_script import ScriptedSandbox

API_KEY = "sk-live-0123456789abcdefXYZ"
PASSWORD = "pw-endpoint-s3cret"
SECRETS = Secrets(openai_api_key=API_KEY, github_token=TOKEN, openai_base_url=f"http://bot:{PASSWORD}@llm.internal/v1")
LEAKS = (API_KEY, TOKEN, PASSWORD)


def leaky_publication():
    files = {
        "client.py": f'API_KEY = "{API_KEY}"\nGITHUB = "{TOKEN}"\nURL = "http://bot:{PASSWORD}@llm.internal/v1"\n',
        f"keys/{API_KEY}.txt": "named after the key\n",
        "test_client.py": "def test_key():\n    assert True\n",
    }
    report = TestReport(TestStatus.FAILED, 1, 0.2, 0, 1, f"AssertionError: {API_KEY} != ''", f"token {TOKEN}")
    return publication(files, task=f"use the key {API_KEY} to call the API", status=RunStatus.FAILED,
                       readme=f"# Client\n\nSet the key to {API_KEY}.\n", report=report)


def written(folder: Path) -> dict[str, str]:
    """Every file under ``folder``: its path there and its content."""
    return {str(p.relative_to(folder)): p.read_text() for p in folder.rglob("*") if p.is_file()}


def assert_masked(texts, leaks=LEAKS):
    joined = "\n".join(texts)
    for secret in leaks:
        assert secret not in joined
    assert "[redacted]" in joined


async def test_a_gist_never_holds_a_secret(github: FakeGitHub) -> None:
    config = Config(checkin=CheckinConfig(github_api_url=github.url, write_interval_s=0))
    publisher = publisher_for(config, SECRETS, MemoryGistIndex())(FolderPublisher("/nonexistent"))
    result = await publisher.publish(leaky_publication())
    assert result.kind == "gist"
    (gist,) = github.gists.values()
    assert_masked([gist.description, *gist.files, *gist.files.values()])
    assert 'API_KEY = "[redacted]"' in "".join(gist.files.values())  # the rest of the file is intact


async def test_the_output_folder_never_holds_a_secret(tmp_path: Path) -> None:
    publisher = publisher_for(Config(), Secrets(openai_api_key=API_KEY, openai_base_url=SECRETS.openai_base_url),
                              MemoryGistIndex())(FolderPublisher(tmp_path))
    await publisher.publish(leaky_publication())
    files = written(tmp_path)
    assert len(files) == 5  # three files, the README and the record of what was written (its names masked too)
    assert_masked([*files, *files.values()], (API_KEY, PASSWORD))  # no GITHUB_TOKEN here, so none to mask


async def test_a_chat_threads_attachments_never_hold_a_secret(github: FakeGitHub) -> None:
    """GitHub refuses, so the files go to the thread; the thread's own redactor knows no secret here,
    so what it shows was masked before it got there."""
    github.fail(401, times=None)
    config = Config(checkin=CheckinConfig(github_api_url=github.url, write_interval_s=0, max_retries=0))
    thread = RecordingThread()
    renderer = RunRenderer(thread, platform(), Redactor(()))
    await renderer.open("run-1")
    result = await publisher_for(config, SECRETS, MemoryGistIndex())(renderer).publish(leaky_publication())
    assert result.kind == "attachments"
    files = {name: content for message in thread.messages for name, content in message.files.items()}
    assert len(files) >= 3
    assert_masked([*files, *files.values()])


async def test_a_terminal_run_quoting_a_key_publishes_and_saves_it_masked(model_server, config, store, tmp_path,
                                                                         github: FakeGitHub) -> None:
    """The whole loop: the Programmer writes the key into the code; the Gist and the --out folder get it masked."""
    secrets = Secrets(openai_api_key=API_KEY, github_token=TOKEN)
    config = with_changes(config, checkin={"github_api_url": github.url, "write_interval_s": 0})
    leaky_code = s.CODE.replace('"""All (key', f'KEY = "{API_KEY}"\n    """All (key')
    for role, replies in {**s.happy_path(), "programmer": [leaky_code]}.items():
        model_server.script(role, *replies)
    service = Service(config, store, OpenAIChatModel(config, secrets), ScriptedSandbox(),
                      publisher_for(config, secrets, store), redact=Redactor(secrets.values()))
    out = io.StringIO()
    status = await run_in_terminal(service, TerminalRun("find all intf keys", [], str(tmp_path / "out"), None),
                                   FolderPublisher, 10_000, "session-1", out=out, redact=Redactor(secrets.values()))
    assert status == 0
    (gist,) = github.gists.values()
    saved = written(tmp_path / "out")
    assert saved and "intf.py" in saved
    assert_masked([*gist.files.values(), *saved.values(), out.getvalue()])


def test_every_text_a_publication_carries_is_masked_whichever_publisher_shows_it() -> None:
    """A pull request's body quotes the plan, the earlier tasks, the changed paths and the already-failing test
    names: walked field by field, so a text added to ``Publication`` later is caught here too."""
    import dataclasses

    from agents.types import FileSet, Publication
    from bot.checkin.masking import masked

    report = TestReport(TestStatus.FAILED, 1, 0.2, 0, 1, f"out {API_KEY}", f"err {API_KEY}",
                        already_failing=(f"tests/test_x.py::test_{API_KEY}",))
    leaky = Publication("run-1", "terminal:s", f"task {API_KEY}", RunStatus.FAILED,
                        FileSet({f"{API_KEY}.py": API_KEY}), f"readme {API_KEY}", report,
                        earlier_tasks=(f"earlier {API_KEY}",), plan=f"1. use {API_KEY}", changed=(f"{API_KEY}.py",),
                        review=f"{API_KEY}.py:1 leaks")

    def texts(value: object) -> list[str]:
        if isinstance(value, str):
            return [value]
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return [t for f in dataclasses.fields(value) for t in texts(getattr(value, f.name))]
        if isinstance(value, dict) or hasattr(value, "items"):
            return [t for k, v in value.items() for t in (*texts(k), *texts(v))]  # type: ignore[union-attr]
        if isinstance(value, tuple | list):
            return [t for item in value for t in texts(item)]
        return []

    assert API_KEY in "".join(texts(leaky))
    shown = texts(masked(leaky, Redactor([API_KEY])))
    assert len(shown) == len(texts(leaky)) and not [t for t in shown if API_KEY in t]
