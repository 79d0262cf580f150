"""A pull request's description quotes the task, the Planner's plan (model text) and the repository's test names:
on GitHub it pings nobody, hides no link, renders no HTML, and holds no secret the bot has, in any of those parts."""

from __future__ import annotations

from agents.types import RunStatus
from bot.repos.github_markdown import code, quiet
from bot.safety.redact import Redactor
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox
from tests.repos.conftest import TOKEN
from tests.repos.fixtures import PYTHON_PROJECT, make_repo
from tests.repos.test_faults import TASK, _config, _passing
from tests.repos.test_pull_request_docker import CODE, PLAN, TESTS

SECRET = "sk-live-0123456789abcdefSECRET"
HOSTILE_PLAN = PLAN.replace("1. In", (
    "1. cc @octocat and @acme/security-team. See [https://github.com/acme/billing](https://evil.example/x) "
    f'and <a href="https://evil.example/y">github.com/acme</a><!-- hidden -->. Key {SECRET}. In'))


async def test_the_description_pings_nobody_hides_no_link_and_holds_no_secret(git_host, github, tmp_path):
    from agents.events import Event
    from bot.checkin import FolderPublisher
    from bot.repos.desk import RepoDesk
    from bot.runs.service import ChatRequest, Service
    from bot.store.sqlite import SQLiteStore

    make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    model = ScriptedModel({"planner": [HOSTILE_PLAN], "programmer": [CODE], "tester": [TESTS],
                           "optimizer": ["VERDICT: APPROVE"], "checkin": ["# x\n"]})
    config = _config(git_host, github, tmp_path)
    store = await SQLiteStore.open(config.db_path())
    try:
        service = Service(config, store, model, ScriptedSandbox(_passing), repos=RepoDesk(config, TOKEN),
                          redact=Redactor([SECRET]))

        async def sink(event: Event) -> None:
            pass

        handle = await service.submit(ChatRequest("terminal", "s", "alice", f"{TASK}, ask @bob", places=("terminal",)),
                                      sink, FolderPublisher(tmp_path / "saved"))
        finished = await handle.wait()
    finally:
        await store.close()
    assert finished.status is RunStatus.PASSED, finished.reason
    body = github.opened[0].body
    assert SECRET not in body and "Key [redacted]" in body  # the plan is masked like every other part
    for name in ("@octocat", "@acme/security-team", "@bob"):
        assert name not in body and name.replace("@", "@&#8203;") in body
    assert "[https://github.com/acme/billing](https://evil.example/x)" not in body
    assert "https://github.com/acme/billing (https://evil.example/x)" in body
    assert "<a " not in body and "<!--" not in body and "&lt;a href" in body


def test_code_keeps_its_text_and_mentions_in_code_stay_as_written():
    assert quiet("use `@decorator` and\n```python\n@app.get('/')\nx = a < b\n```\n") == (
        "use `@decorator` and\n```python\n@app.get('/')\nx = a < b\n```\n")
    assert quiet("mail bob@example.com") == "mail bob@example.com"
    assert code("tests/odd`name.py") == "``tests/odd`name.py``"
    assert code("`edge") == "`` `edge ``"
