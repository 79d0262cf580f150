"""End to end in a repository, with the real Docker sandbox, a real git server and PyGithub against the GitHub
fake: a change lands as commits on the bot's branch and a draft pull request whose body holds the counts; a
test that failed before the change is named and not blamed; a follow-up adds a commit to the same branch and
updates the body; the repository's existing tests are never rewritten."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from agents.events import Event, Notice
from agents.types import RunStatus
from bot.checkin import FolderPublisher
from bot.config.sections import CheckinConfig, Config, ReposConfig, RepoSettings
from bot.repos.desk import RepoDesk
from bot.runs.service import ChatRequest, Service
from bot.sandbox import DockerSandbox
from bot.store.sqlite import SQLiteStore
from tests.docker_support import TEST_CONFIG
from tests.fakes.team_script import ScriptedModel
from tests.repos.conftest import TOKEN
from tests.repos.fixtures import PYTHON_PROJECT, branch_files, git, make_repo

PLAN = ("1. In billing/client.py give fetch(send, request, attempts=3) retries on ConnectionError.\n"
        "2. Test it in tests/test_client.py.\nLANGUAGE: python")
CODE = '''```python path=billing/client.py
def fetch(send, request, attempts=3):
    """Send the request, trying again on ConnectionError, at most ``attempts`` times."""
    for attempt in range(attempts):
        try:
            return send(request)
        except ConnectionError:
            if attempt == attempts - 1:
                raise
```
'''
CODE_LOGGED = CODE.replace("        except ConnectionError:\n",
                           "        except ConnectionError:\n            print(f'retry {attempt + 1}')\n")
TESTS = '''```python path=tests/test_client.py
import pytest

from billing.client import fetch


def test_retries_until_it_works():
    calls = []

    def send(request):
        calls.append(request)
        if len(calls) < 3:
            raise ConnectionError
        return "ok"

    assert fetch(send, "r") == "ok" and len(calls) == 3


def test_gives_up_after_the_attempts():
    def send(request):
        raise ConnectionError

    with pytest.raises(ConnectionError):
        fetch(send, "r", attempts=2)
```
'''
EDITED_EXISTING = '''```python path=tests/test_money.py
def test_rounding_half_even():
    pass
```

```yaml path=.github/workflows/ci.yml
on: push
jobs: {leak: {runs-on: ubuntu-latest, steps: [{run: "echo ${{ secrets.DEPLOY_KEY }}"}]}}
```
'''


def _config(git_host, github, tmp_path: Path) -> Config:
    return Config(
        repos=ReposConfig(git_url=git_host.url, allowed={"acme/billing": RepoSettings(labels=("billing",))}),
        checkin=CheckinConfig(github_api_url=github.url, write_interval_s=0, backoff_s=0.01, max_retries=1),
        sandbox=TEST_CONFIG, storage=dataclasses.replace(Config().storage, path=str(tmp_path / "db.sqlite3")),
    )


async def _run(service: Service, text: str, tmp_path: Path) -> tuple[object, list[Event]]:
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    request = ChatRequest("terminal", "session-1", "alice", text, places=("terminal",))
    handle = await service.submit(request, sink, FolderPublisher(tmp_path / "fallback"))
    return await handle.wait(), events


@pytest.mark.docker
async def test_a_change_lands_as_a_pull_request_and_a_follow_up_adds_a_commit(git_host, github, tmp_path,
                                                                               docker_client):
    bare = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    config = _config(git_host, github, tmp_path)
    model = ScriptedModel({"planner": [PLAN, PLAN], "programmer": [CODE, CODE_LOGGED],
                           "tester": [TESTS + EDITED_EXISTING, TESTS], "optimizer": ["Fine.\nVERDICT: APPROVE"] * 2,
                           "checkin": ["# retries\n"] * 2})
    store = await SQLiteStore.open(config.db_path())
    try:
        async with DockerSandbox(config.sandbox, client=docker_client) as sandbox:
            service = Service(config, store, model, sandbox, repos=RepoDesk(config, TOKEN))
            first, events = await _run(service, "add retries to the client in acme/billing and test it", tmp_path)
            notices = [e.text for e in events if isinstance(e, Notice)]
            assert first.status is RunStatus.PASSED, (first.reason, notices)
            assert any("already failing: " in n and "test_rounding_half_even" in n for n in notices)
            assert any("Not saved: tests/test_money.py" in n for n in notices)
            assert any("Not saved: .github/workflows/ci.yml (CI configuration" in n for n in notices)
            assert first.checkin.kind == "pull_request" and first.checkin.location.endswith("/acme/billing/pull/1")
            branch = first.checkin.branch
            assert branch.startswith("codegen-chat/add-retries-to-the-client-") and branch.endswith(first.run_id)
            (pull,) = github.opened
            assert pull.draft and pull.base == "main" and pull.head == branch
            assert pull.labels == ["codegen-chat", "billing"]
            assert "3 passed, 0 failed (1 already failing before the change)" in pull.body
            assert "test_rounding_half_even" in pull.body and "`billing/client.py`" in pull.body
            assert "`tests/test_client.py` (new)" in pull.body and "add retries to the client" in pull.body
            pushed = branch_files(bare, branch)
            assert "except ConnectionError" in pushed["billing/client.py"]
            assert pushed["tests/test_money.py"] == PYTHON_PROJECT["tests/test_money.py"]  # authoritative
            assert not any(path.startswith(".github/") for path in pushed)
            assert branch_files(bare, "main") == PYTHON_PROJECT  # the base is untouched
            authors = git("log", "--format=%an", branch, cwd=bare).split()
            assert authors[0] == "codegen-chat" and authors[-1] == "Dev"

            second, _ = await _run(service, "also print each retry", tmp_path)
            assert second.status is RunStatus.PASSED, second.reason
            assert second.checkin.branch == branch and len(github.opened) == 1
            assert "updated" in second.checkin.note
            assert "also print each retry" in github.opened[0].body
            assert "retry {attempt + 1}'" in branch_files(bare, branch)["billing/client.py"]
            assert len(git("log", "--format=%H", f"main..{branch}", cwd=bare).split()) >= 2
            history = await store.runs(5)
            assert {r.pr_url for r in history} == {first.checkin.location}
            assert {r.branch for r in history} == {branch}
            assert history[0].head_commit == git("rev-parse", branch, cwd=bare).strip()
    finally:
        await store.close()


@pytest.mark.docker
async def test_a_follow_up_whose_tests_fail_says_so_in_the_open_pull_request_it_pushed_to(git_host, github, tmp_path,
                                                                                          docker_client):
    make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    config = _config(git_host, github, tmp_path)
    broken = CODE.replace("return send(request)", "return None")
    model = ScriptedModel({"planner": [PLAN, PLAN], "programmer": [CODE], "tester": [TESTS, TESTS],
                           "optimizer": ["Fine.\nVERDICT: APPROVE"], "checkin": ["# retries\n"] * 2},
                          fallback={"programmer": broken, "optimizer": "Fine.\nVERDICT: APPROVE",
                                    "manager": "The code returns nothing.\nDECISION: fix_code"})
    store = await SQLiteStore.open(config.db_path())
    try:
        async with DockerSandbox(config.sandbox, client=docker_client) as sandbox:
            service = Service(config, store, model, sandbox, repos=RepoDesk(config, TOKEN))
            first, _ = await _run(service, "add retries to the client in acme/billing and test it", tmp_path)
            assert first.status is RunStatus.PASSED, first.reason
            assert "Status: **passed**" in github.opened[0].body
            second, _ = await _run(service, "return what send returns, twice", tmp_path)
            assert second.status is RunStatus.FAILED, second.reason
            (pull,) = github.opened  # the branch's pull request, which now holds the failing commits
            assert second.checkin.kind == "pull_request" and second.checkin.location == first.checkin.location
            assert "pull request #1 updated" in second.checkin.note and "tests fail" in second.checkin.note
            assert "Status: **failed**" in pull.body and "Status: **passed**" not in pull.body
            assert "return what send returns, twice" in pull.body
    finally:
        await store.close()


@pytest.mark.docker
async def test_a_repository_whose_tests_never_end_runs_only_in_the_sandbox_and_ends(git_host, github, tmp_path,
                                                                                  docker_client):
    marker = tmp_path / "RAN-ON-THE-HOST"
    hostile = {**PYTHON_PROJECT,
               "conftest.py": (f"import os\nos.makedirs({str(tmp_path)!r}, exist_ok=True)\n"  # runs wherever
                               f"open({str(marker)!r}, 'w').write('x')\n"),  # pytest runs
               "tests/test_forever.py": "def test_forever():\n    while True:\n        pass\n"}
    make_repo(git_host.root, "acme/billing", hostile)
    github.add_repo("acme/billing")
    config = dataclasses.replace(_config(git_host, github, tmp_path),
                                 sandbox=dataclasses.replace(TEST_CONFIG, timeout_s=4.0),
                                 budget=dataclasses.replace(Config().budget, max_rounds=1))
    model = ScriptedModel({"planner": [PLAN], "programmer": [CODE], "tester": [TESTS],
                           "optimizer": ["VERDICT: APPROVE"], "checkin": ["# retries\n"]})
    store = await SQLiteStore.open(config.db_path())
    try:
        async with DockerSandbox(config.sandbox, client=docker_client) as sandbox:
            service = Service(config, store, model, sandbox, repos=RepoDesk(config, TOKEN))
            finished, events = await _run(service, "add retries to the client in acme/billing", tmp_path)
    finally:
        await store.close()
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert any("Before any change, the repository's tests: tests timed out after 4s" in n for n in notices), notices
    assert finished.status is RunStatus.FAILED and "timed out" in finished.reason, finished.reason
    assert not marker.exists()  # the repository's conftest.py ran in the container, never here
    assert finished.checkin.kind == "branch" and github.opened == []  # pushed, no PR for a failing run


CHECKED_PROJECT = {  # its tests are wherever pytest.ini says, under a name no convention guesses
    "pytest.ini": "[pytest]\npython_files = checks.py *_checks.py\n",
    "billing/__init__.py": "",
    "billing/money.py": "def cents(amount):\n    return round(amount * 100)\n",
    "billing/checks.py": "from billing.money import cents\n\n\ndef test_cents():\n    assert cents(1.25) == 125\n",
}
TRUNCATING = '''```python path=billing/money.py
def cents(amount):
    return int(amount * 100) + 1
```

```python path=billing/checks.py
from billing.money import cents


def test_cents():
    assert cents(1.25) >= 0
```
'''

TYPE_CHECKS = ("```python path=billing/type_checks.py\nfrom billing.money import cents\n\n\n"
               "def test_whole_cents():\n    assert isinstance(cents(1.25), int)\n```\n")


@pytest.mark.docker
async def test_the_files_the_repository_ran_its_tests_from_are_never_rewritten_whatever_their_name(
        git_host, github, tmp_path, docker_client):
    bare = make_repo(git_host.root, "acme/billing", CHECKED_PROJECT)
    github.add_repo("acme/billing")
    config = dataclasses.replace(_config(git_host, github, tmp_path),
                                 budget=dataclasses.replace(Config().budget, max_rounds=1))
    model = ScriptedModel({"planner": ["1. Make cents in billing/money.py truncate.\nLANGUAGE: python"],
                           "programmer": [TRUNCATING], "tester": [TYPE_CHECKS], "optimizer": ["VERDICT: APPROVE"],
                           "checkin": ["# truncate\n"]})
    store = await SQLiteStore.open(config.db_path())
    try:
        async with DockerSandbox(config.sandbox, client=docker_client) as sandbox:
            service = Service(config, store, model, sandbox, repos=RepoDesk(config, TOKEN))
            finished, events = await _run(service, "make cents truncate in acme/billing; see billing/checks.py",
                                          tmp_path)
    finally:
        await store.close()
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert any("Not saved: billing/checks.py (the repository's own tests are authoritative" in n for n in notices), (
        finished.reason, notices)
    assert finished.status is RunStatus.FAILED, finished.reason  # its own test judges the change: 126 != 125
    pushed = branch_files(bare, finished.checkin.branch)
    assert pushed["billing/checks.py"] == CHECKED_PROJECT["billing/checks.py"]
    assert "int(amount * 100) + 1" in pushed["billing/money.py"]
