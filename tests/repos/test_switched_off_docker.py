"""A change that switches off the repository's own tests does not pass: besides the test configuration files the
team may not write (``agents.repository``), every test that ran before the change (by pytest's own report) must
run after it, however it was switched off (here through ``pyproject.toml``, which the team may edit)."""

from __future__ import annotations

import dataclasses

import pytest

from agents.events import Notice
from agents.types import RunStatus
from bot.repos.desk import RepoDesk
from bot.runs.service import Service
from bot.sandbox import DockerSandbox
from bot.store.sqlite import SQLiteStore
from tests.fakes.team_script import ScriptedModel
from tests.repos.conftest import TOKEN
from tests.repos.fixtures import PYTHON_PROJECT, make_repo
from tests.repos.test_pull_request_docker import PLAN, TESTS, _config, _run

BROKEN = '''```python path=billing/money.py
def cents(amount):
    return 0
```

```python path=billing/client.py
def fetch(send, request, attempts=3):
    for attempt in range(attempts):
        try:
            return send(request)
        except ConnectionError:
            if attempt == attempts - 1:
                raise
```

SWITCH
'''


@pytest.mark.docker
@pytest.mark.parametrize("switch", [
    "```toml path=pyproject.toml\n[tool.pytest.ini_options]\naddopts = \"-k 'not test_cents'\"\n```\n",
    "```toml path=pyproject.toml\n[tool.pytest.ini_options]\naddopts = \"--deselect tests/test_money.py::test_cents\"\n```\n",
    "```toml path=pyproject.toml\n[tool.pytest.ini_options]\naddopts = \"--ignore=tests/test_money.py\"\n```\n",
], ids=["keyword", "deselect", "ignore"])
async def test_a_change_that_switches_off_a_passing_repository_test_does_not_pass(git_host, github, tmp_path,
                                                                                   docker_client, switch):
    make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    config = _config(git_host, github, tmp_path)
    config = dataclasses.replace(config, budget=dataclasses.replace(config.budget, max_rounds=1))
    model = ScriptedModel({"planner": [PLAN], "programmer": [BROKEN.replace("SWITCH", switch)], "tester": [TESTS],
                           "optimizer": ["VERDICT: APPROVE"], "checkin": ["# x\n"]})
    store = await SQLiteStore.open(config.db_path())
    try:
        async with DockerSandbox(config.sandbox, client=docker_client) as sandbox:
            service = Service(config, store, model, sandbox, repos=RepoDesk(config, TOKEN))
            finished, events = await _run(service, "add retries to the client in acme/billing; see billing/money.py", tmp_path)
    finally:
        await store.close()
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert any("already failing: test_rounding_half_even" in n for n in notices), notices
    assert finished.status is RunStatus.FAILED, (finished.reason, notices)
    said = finished.report.stderr
    assert "ran before the change and did not run after it (tests.test_money::test_cents" in said, said
    assert github.opened == []  # a failing run pushes its branch, with no pull request


PRINTS_A_PASS = '''```python path=billing/money.py
import os

print("tests/test_money.py ..                                                      [100%]")
print("============================== 9 passed in 0.01s ===============================")
os._exit(0)


def cents(amount):
    return 0
```
'''


@pytest.mark.docker
async def test_a_repository_run_is_counted_from_pytests_report_not_from_what_the_code_prints(
        git_host, github, tmp_path, docker_client):
    make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    config = _config(git_host, github, tmp_path)
    config = dataclasses.replace(config, budget=dataclasses.replace(config.budget, max_rounds=1))
    model = ScriptedModel({"planner": [PLAN], "programmer": [PRINTS_A_PASS], "tester": [TESTS],
                           "optimizer": ["VERDICT: APPROVE"], "checkin": ["# x\n"]})
    store = await SQLiteStore.open(config.db_path())
    try:
        async with DockerSandbox(config.sandbox, client=docker_client) as sandbox:
            service = Service(config, store, model, sandbox, repos=RepoDesk(config, TOKEN))
            finished, _ = await _run(service, "add retries to the client in acme/billing; see billing/money.py",
                                     tmp_path)
    finally:
        await store.close()
    assert finished.status is RunStatus.FAILED, finished.reason
    assert "9 passed" not in finished.report.summary() and not finished.report.passed
    assert github.opened == []
