"""Repository faults each end in a sentence and lose nothing: an unknown repository or one the token may not
push to (no model call), a branch someone else pushed to (never forced), GitHub failing at the pull request
(the work goes to the fallback with a note, its branch already pushed), and a failing run (a branch, no PR)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

from agents.errors import ModelError
from agents.events import Event, Notice
from agents.types import RunStatus, TestJob, TestReport, TestStatus
from bot.checkin import FolderPublisher
from bot.config.sections import BudgetConfig, CheckinConfig, Config, ConfigError, ReposConfig, RepoSettings
from bot.repos.desk import RepoDesk
from bot.repos.errors import PushRefused
from bot.repos.pushing import push
from bot.runs.service import ChatRequest, Service
from bot.store.sqlite import SQLiteStore
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox
from tests.repos.conftest import TOKEN
from tests.repos.fixtures import PYTHON_PROJECT, branch_files, git, make_repo
from tests.repos.test_pull_request_docker import CODE, PLAN, TESTS

TASK = "add retries to the client in acme/billing"


def _config(git_host, github, tmp_path: Path, **budget: int) -> Config:
    return Config(
        repos=ReposConfig(git_url=git_host.url, allowed={"acme/billing": RepoSettings()}),
        checkin=CheckinConfig(github_api_url=github.url, write_interval_s=0, backoff_s=0.01, max_retries=1),
        budget=BudgetConfig(**budget), storage=dataclasses.replace(Config().storage, path=str(tmp_path / "db")))


def _passing(job: TestJob) -> TestReport:
    return TestReport(TestStatus.PASSED, 0, 0.1, 2, 0, "2 passed")


def _failing(job: TestJob) -> TestReport:
    """The repository passes as it is (the baseline); the team's change fails a test."""
    if not job.team_files:
        return _passing(job)
    return TestReport(TestStatus.FAILED, 1, 0.1, 1, 1, "FAILED tests/test_client.py::test_x - boom\n1 failed, 1 passed")


async def _run(config: Config, model: ScriptedModel, verdict, tmp_path: Path, text: str = TASK):
    store = await SQLiteStore.open(config.db_path())
    try:
        service = Service(config, store, model, ScriptedSandbox(verdict), repos=RepoDesk(config, TOKEN))
        events: list[Event] = []

        async def sink(event: Event) -> None:
            events.append(event)

        handle = await service.submit(ChatRequest("terminal", "s", "alice", text, places=("terminal",)), sink,
                                      FolderPublisher(tmp_path / "saved"))
        return await handle.wait()
    finally:
        await store.close()


def _team() -> ScriptedModel:
    return ScriptedModel({"planner": [PLAN], "programmer": [CODE], "tester": [TESTS],
                          "optimizer": ["VERDICT: APPROVE"], "checkin": ["# retries\n"]})


@pytest.mark.parametrize("setup, sentence", [
    (lambda github: None, "GitHub knows no repository acme/billing that the bot's token can see"),
    (lambda github: github.add_repo("acme/billing", push=False), "may read acme/billing but not push to it"),
    (lambda github: github.add_repo("acme/billing", size_kb=10_000_000), "this bot works on at most"),
])
async def test_a_repository_the_bot_cannot_use_ends_the_run_with_a_sentence_and_no_model_call(
        git_host, github, tmp_path, setup, sentence):
    make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    setup(github)
    model = _team()
    finished = await _run(_config(git_host, github, tmp_path), model, _passing, tmp_path)
    assert finished.status is RunStatus.ERROR and sentence in finished.reason
    assert model.calls == []


async def test_a_tag_named_as_the_base_ends_the_run_with_a_sentence_and_no_model_call(git_host, github, tmp_path):
    bare = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    git("tag", "v1.0", "main", cwd=bare)
    github.add_repo("acme/billing")
    model = _team()
    finished = await _run(_config(git_host, github, tmp_path), model, _passing, tmp_path,
                          "add retries to the client in repo:acme/billing@v1.0")
    assert finished.status is RunStatus.ERROR and "no branch 'v1.0' to start from" in finished.reason
    assert model.calls == [] and github.opened == []


async def test_an_empty_repository_is_said_to_be_empty_and_no_model_is_called(git_host, github, tmp_path):
    """GitHub names a default branch even for an empty repository; the fetch finds no branch at all."""
    empty = git_host.root / "acme/billing.git"
    empty.mkdir(parents=True)
    git("init", "-q", "--bare", cwd=empty)
    github.add_repo("acme/billing")
    model = _team()
    finished = await _run(_config(git_host, github, tmp_path), model, _passing, tmp_path)
    assert finished.status is RunStatus.ERROR and "The repository is empty" in finished.reason
    assert model.calls == []


async def test_github_failing_at_the_pull_request_keeps_the_work_in_the_fallback(git_host, github, tmp_path):
    bare = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    github.fail(503, times=None, method="POST", path="/repos/acme/billing/pulls")
    finished = await _run(_config(git_host, github, tmp_path), _team(), _passing, tmp_path)
    assert finished.status is RunStatus.PASSED
    assert finished.checkin.kind == "folder" and "instead" in finished.checkin.note
    assert (tmp_path / "saved" / "billing" / "client.py").read_text().count("ConnectionError") >= 1
    pushed = [b for b in git("branch", "--list", "codegen-chat/*", cwd=bare).split() if b != "*"]
    assert len(pushed) == 1  # the branch was pushed before GitHub failed; only the pull request is missing
    assert github.opened == []


async def test_a_failing_run_pushes_its_branch_and_opens_no_pull_request(git_host, github, tmp_path):
    bare = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    finished = await _run(_config(git_host, github, tmp_path, max_rounds=1), _team(), _failing, tmp_path)
    assert finished.status is RunStatus.FAILED
    assert finished.checkin.kind == "branch" and "no pull request" in finished.checkin.note
    assert github.opened == []
    assert "except ConnectionError" in branch_files(bare, finished.checkin.branch)["billing/client.py"]


async def test_a_branch_someone_else_pushed_to_is_never_forced(git_host, github, tmp_path):
    bare = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    config = _config(git_host, github, tmp_path)
    desk = RepoDesk(config, TOKEN)
    target = desk.target(TASK, "", "", ("terminal",), "alice")
    opened = await desk.open(target, "r1", TASK)
    try:
        workspace = opened.workspace
        files = await workspace.read(["billing/client.py"])
        await workspace.commit(files.merged({"billing/client.py": "# one\n"}), "first")
        await push(opened)
        # Someone pushes to the bot's branch meanwhile.
        other = tmp_path / "other"
        git("clone", "-q", "--branch", workspace.branch, str(bare), str(other), cwd=tmp_path)
        (other / "NOTES.md").write_text("mine\n")
        git("add", "NOTES.md", cwd=other)
        git("commit", "-q", "-m", "A person's commit", cwd=other)
        git("push", "-q", "origin", workspace.branch, cwd=other)
        theirs = git("rev-parse", workspace.branch, cwd=bare).strip()
        await workspace.commit(files.merged({"billing/client.py": "# two\n"}), "second")
        with pytest.raises(PushRefused, match="Someone pushed to codegen-chat/.* does not force-push"):
            await push(opened)
        assert git("rev-parse", workspace.branch, cwd=bare).strip() == theirs  # their commit stands
        with pytest.raises(PushRefused, match="only to branches of its own"):
            workspace.branch = "main"
            await push(opened)
    finally:
        await opened.close()
    assert not opened.folder.exists()


async def _someone_changes_the_base(bare: Path, tmp_path: Path, rewrite: bool) -> None:
    """A person pushes to main: a commit on top, or (``rewrite``) main's only commit replaced, as one does to take
    a leaked secret out of a branch, and force-pushed."""
    other = tmp_path / "person"
    git("clone", "-q", str(bare), str(other), cwd=tmp_path)
    (other / "README.md").write_text("# billing, rewritten\n")
    git("add", "README.md", cwd=other)
    git("commit", "-q", *(["--amend", "-m", "Initial commit, without the secret"] if rewrite else ["-m", "More"]),
        cwd=other)
    git("push", "-q", "--force", "origin", "main", cwd=other)


@pytest.mark.parametrize("rewrite", [True, False])
async def test_a_base_branch_force_pushed_under_the_run_gets_none_of_its_removed_commits_back(
        git_host, github, tmp_path, rewrite):
    bare = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    desk = RepoDesk(_config(git_host, github, tmp_path), TOKEN)
    opened = await desk.open(desk.target(TASK, "", "", ("terminal",), "alice"), "r1", TASK)
    try:
        workspace = opened.workspace
        files = await workspace.read(["billing/client.py"])
        await workspace.commit(files.merged({"billing/client.py": "# one\n"}), "first")
        started_from = workspace.checkout.head
        await _someone_changes_the_base(bare, tmp_path, rewrite)
        if rewrite:
            with pytest.raises(PushRefused, match=rf"main was rewritten \(force-pushed\).*{started_from[:12]}"):
                await push(opened)
            assert git("ls-remote", "--heads", str(bare), workspace.branch, cwd=tmp_path) == ""
        else:  # a base that only moved on takes the push as ever
            assert await push(opened) == git("rev-parse", workspace.branch, cwd=bare).strip()
    finally:
        await opened.close()


async def test_prompts_stay_within_the_ceiling_on_a_large_repository(git_host, github, tmp_path):
    files = {**PYTHON_PROJECT, **{f"pkg{i % 30}/mod_{i}.py": f"def f{i}():\n    return {i}\n" for i in range(3000)}}
    make_repo(git_host.root, "acme/billing", files)
    github.add_repo("acme/billing")
    model = ScriptedModel({"planner": [PLAN], "programmer": [CODE, CODE], "tester": [TESTS, TESTS],
                           "optimizer": ["VERDICT: APPROVE"] * 2, "manager": ["DECISION: fix_code"],
                           "checkin": ["# retries\n"]})
    rounds = iter([_failing, _passing])
    verdicts = {"baseline": _passing}

    def verdict(job: TestJob) -> TestReport:
        if not job.team_files:
            return verdicts["baseline"](job)
        return next(rounds, _passing)(job)

    config = _config(git_host, github, tmp_path)
    finished = await _run(config, model, verdict, tmp_path)
    assert finished.status is RunStatus.PASSED, finished.reason
    planner = model.user_prompt("planner")
    the_map = planner.split("top-level names)\n", 1)[1].split("\n\nWork in this repository")[0]
    assert len(the_map) <= config.repos.map_chars and "more files" in the_map
    first_programmer = next(chars for role, chars in model.prompts if role == "programmer")
    assert max(chars for _, chars in model.prompts) <= 1.5 * first_programmer


async def test_a_github_app_mints_a_token_per_run_for_git_and_the_pull_request(git_host, github, tmp_path):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    from bot.config.sections import Secrets
    from bot.repos.desk import AppCredentials

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    github.add_app("4242", public, 77)
    git_host.also = github.tokens  # the host takes what GitHub minted, as github.com does
    make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    secrets = Secrets(github_app_id="4242", github_app_private_key=private, github_app_installation_id="77")
    config = _config(git_host, github, tmp_path)
    store = await SQLiteStore.open(config.db_path())
    try:
        desk = RepoDesk(config, "", app=AppCredentials.from_secrets(secrets))
        service = Service(config, store, _team(), ScriptedSandbox(_passing), repos=desk)

        async def sink(event: Event) -> None:
            pass

        handle = await service.submit(ChatRequest("terminal", "s", "alice", TASK, places=("terminal",)), sink,
                                      FolderPublisher(tmp_path / "saved"))
        finished = await handle.wait()
    finally:
        await store.close()
    assert finished.status is RunStatus.PASSED and finished.checkin.kind == "pull_request", finished.checkin
    minted = next(t for t in github.tokens if t.startswith("ghs_"))
    assert any(r.path.endswith("/access_tokens") for r in github.requests)
    assert github.requests[-1].headers["Authorization"] == f"token {minted}"
    assert "4242" not in secrets.values() and private in secrets.values()  # ids are no secret; the key is
    with pytest.raises(ConfigError, match="go together"):
        AppCredentials.from_secrets(Secrets(github_app_id="4242"))


async def test_a_follow_up_in_another_repository_carries_no_file_of_the_first(git_host, github, tmp_path):
    make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    other = make_repo(git_host.root, "acme/other", {"README.md": "# other\n", "app.py": "def main():\n    pass\n"})
    github.add_repo("acme/billing")
    github.add_repo("acme/other")
    config = dataclasses.replace(_config(git_host, github, tmp_path), repos=ReposConfig(
        git_url=git_host.url, allowed={"acme/billing": RepoSettings(), "acme/other": RepoSettings()}))
    model = ScriptedModel({"planner": [PLAN, "1. Change app.py.\nLANGUAGE: python"],
                           "programmer": [CODE, "```python path=app.py\ndef main():\n    return 1\n```\n"],
                           "tester": [TESTS, "```python path=tests/test_app.py\nfrom app import main\n\n\n"
                                             "def test_main():\n    assert main() == 1\n```\n"],
                           "optimizer": ["VERDICT: APPROVE"] * 2, "checkin": ["# x\n"] * 2})
    store = await SQLiteStore.open(config.db_path())
    try:
        service = Service(config, store, model, ScriptedSandbox(_passing), repos=RepoDesk(config, TOKEN))

        async def sink(event: Event) -> None:
            pass

        for text in (TASK, "now make main return 1 in repo:acme/other"):
            handle = await service.submit(ChatRequest("terminal", "s", "alice", text, places=("terminal",)), sink,
                                          FolderPublisher(tmp_path / "saved"))
            finished = await handle.wait()
    finally:
        await store.close()
    assert finished.checkin.repository == "acme/other"
    pushed = branch_files(other, finished.checkin.branch)
    assert "billing/client.py" not in pushed and pushed["app.py"].endswith("return 1\n")


async def test_a_secret_the_bot_holds_is_masked_in_every_commit_it_pushes(git_host, github, tmp_path):
    from bot.safety.redact import Redactor

    secret = "sk-live-0123456789abcdefSECRET"
    bare = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    leaky = CODE.replace('"""Send the request', f'"""Uses {secret}. Send the request')
    model = ScriptedModel({"planner": [PLAN], "programmer": [leaky], "tester": [TESTS],
                           "optimizer": ["VERDICT: APPROVE"], "checkin": ["# x\n"]})
    config = _config(git_host, github, tmp_path)
    store = await SQLiteStore.open(config.db_path())
    try:
        service = Service(config, store, model, ScriptedSandbox(_passing), repos=RepoDesk(config, TOKEN),
                          redact=Redactor([secret]))

        async def sink(event: Event) -> None:
            pass

        handle = await service.submit(ChatRequest("terminal", "s", "alice", f"{TASK} with key {secret}",
                                                  places=("terminal",)), sink, FolderPublisher(tmp_path / "saved"))
        finished = await handle.wait()
    finally:
        await store.close()
    history = git("log", "-p", "--format=%B", finished.checkin.branch, cwd=bare)
    assert "Uses [redacted]" in history and secret not in history
    assert secret not in github.opened[0].body + github.opened[0].title


async def test_a_file_written_without_being_read_is_read_instead_and_changed_next_round(git_host, github, tmp_path):
    bare = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    blind = "```python path=billing/money.py\ndef cents(amount):\n    return int(amount * 100)\n```\n"
    seen = "```python path=billing/money.py\ndef cents(amount):\n    return round(amount * 100 + 0.0)\n```\n"
    model = ScriptedModel({"planner": ["1. Make cents exact.\nLANGUAGE: python"], "programmer": [blind, seen],
                           "tester": [TESTS], "optimizer": ["VERDICT: APPROVE"] * 2,
                           "manager": ["DECISION: fix_code"], "checkin": ["# x\n"]})
    rounds = iter([_failing, _passing])

    def verdict(job: TestJob) -> TestReport:
        return _passing(job) if not job.team_files else next(rounds, _passing)(job)

    store = await SQLiteStore.open(_config(git_host, github, tmp_path).db_path())
    try:
        service = Service(_config(git_host, github, tmp_path), store, model, ScriptedSandbox(verdict),
                          repos=RepoDesk(_config(git_host, github, tmp_path), TOKEN))
        notices: list[str] = []

        async def sink(event: Event) -> None:
            if isinstance(event, Notice):
                notices.append(event.text)

        handle = await service.submit(ChatRequest("terminal", "s", "alice", "make cents exact in acme/billing",
                                                  places=("terminal",)), sink, FolderPublisher(tmp_path / "saved"))
        finished = await handle.wait()
    finally:
        await store.close()
    assert any("Not saved: billing/money.py (written without being read" in n for n in notices)
    assert "def cents(amount):\n    return round(amount * 100)" in model.user_prompt("programmer", 1)  # now read
    assert "+ 0.0" in branch_files(bare, finished.checkin.branch)["billing/money.py"]


async def test_a_rate_limited_pull_request_waits_as_github_says_then_opens(git_host, github, tmp_path):
    make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    github.fail(403, "You have exceeded a secondary rate limit.", times=1, headers={"retry-after": "1"},
                method="POST", path="/repos/acme/billing/pulls")
    started = asyncio.get_running_loop().time()
    finished = await _run(_config(git_host, github, tmp_path), _team(), _passing, tmp_path)
    assert finished.checkin.kind == "pull_request" and len(github.opened) == 1
    assert [c for c in github.calls() if c == ("POST", "/repos/acme/billing/pulls")] == [
        ("POST", "/repos/acme/billing/pulls")] * 2
    assert asyncio.get_running_loop().time() - started >= 1.0  # Retry-After honoured


async def test_doctor_says_which_allow_listed_repositories_the_token_can_work_on(github):
    from bot.config.sections import Secrets
    from bot.repos.doctor import repo_checks

    github.add_repo("acme/billing")
    github.add_repo("acme/readonly", push=False)
    config = Config(checkin=CheckinConfig(github_api_url=github.url, max_retries=0), repos=ReposConfig(allowed={
        "acme/billing": RepoSettings(), "acme/readonly": RepoSettings(), "acme/gone": RepoSettings()}))
    results = {r.name: r for r in await repo_checks(config, Secrets(github_token=TOKEN))}
    assert results["Repository acme/billing"].ok and "work starts from main" in results["Repository acme/billing"].detail
    assert not results["Repository acme/readonly"].ok and "not push" in results["Repository acme/readonly"].detail
    assert not results["Repository acme/gone"].ok and "knows no repository" in results["Repository acme/gone"].detail
    (none,) = await repo_checks(config, Secrets())
    assert not none.ok and "never pushed" in none.detail
    assert await repo_checks(Config(), Secrets(github_token=TOKEN)) == []


async def test_a_follow_up_on_a_local_folder_continues_its_branch(tmp_path):
    from tests.repos.fixtures import GO_PROJECT

    work = make_repo(tmp_path / "src", "me/calc", GO_PROJECT).parent.parent / "_work" / "me/calc"
    mul = "```go path=calc.go\n" + GO_PROJECT["calc.go"] + "\nfunc Mul(a, b int) int { return a * b }\n```\n"
    div = mul.replace("\n```\n", "\nfunc Div(a, b int) int { return a / b }\n```\n")
    tests = ('```go path=mul_test.go\npackage calc\n\nimport "testing"\n\n'
             'func TestMul(t *testing.T) { if Mul(2, 3) != 6 { t.Errorf("mul") } }\n```\n')
    model = ScriptedModel({"planner": ["1. Add Mul.\nLANGUAGE: go", "1. Add Div.\nLANGUAGE: go"],
                           "programmer": [mul, div], "tester": [tests, tests.replace("Mul", "Div")],
                           "optimizer": ["VERDICT: APPROVE"] * 2, "checkin": ["# calc\n"] * 2})
    config = Config(storage=dataclasses.replace(Config().storage, path=str(tmp_path / "db")))
    store = await SQLiteStore.open(config.db_path())
    try:
        service = Service(config, store, model, ScriptedSandbox(_passing), repos=RepoDesk(config, ""))

        async def sink(event: Event) -> None:
            pass

        results = []
        for text, repo in (("add Mul to calc.go", str(work)), ("now add Div too", "")):
            handle = await service.submit(ChatRequest("terminal", "s", "me", text, repo=repo, places=("terminal",)),
                                          sink, FolderPublisher(tmp_path / "saved"))
            results.append(await handle.wait())
    finally:
        await store.close()
    first, second = results
    assert first.checkin.kind == second.checkin.kind == "branch", (first.checkin, second.checkin)
    assert second.checkin.branch == first.checkin.branch
    files = branch_files(work, first.checkin.branch)
    assert "func Mul" in files["calc.go"] and "func Div" in files["calc.go"]
    assert len(git("log", "--format=%H", f"main..{first.checkin.branch}", cwd=work).split()) == 2


async def test_the_bot_authors_each_commit_and_the_person_who_asked_co_authors_it(git_host, github, tmp_path):
    bare = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    config = dataclasses.replace(_config(git_host, github, tmp_path), repos=ReposConfig(
        git_url=git_host.url, allowed={"acme/billing": RepoSettings(co_authors={"alice": "Ada <ada@example.com>"})}))
    finished = await _run(config, _team(), _passing, tmp_path)
    commits = git("log", "--format=%an <%ae>|%B%x00", f"main..{finished.checkin.branch}", cwd=bare).split("\0")
    commits = [c.strip() for c in commits if c.strip()]
    assert commits and all(c.startswith("codegen-chat <codegen-chat@users.noreply.github.com>|") for c in commits)
    assert all("Co-authored-by: Ada <ada@example.com>" in c for c in commits)  # the round's, or the check-in's


async def test_a_protected_branch_is_never_pushed_to(git_host, github, tmp_path):
    from bot.repos.opening import branch_name

    bare = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing", protected=("main", branch_name(TASK, "r9")))
    desk = RepoDesk(_config(git_host, github, tmp_path), TOKEN)
    opened = await desk.open(desk.target(TASK, "", "", ("terminal",), "alice"), "r9", TASK)
    try:
        files = await opened.workspace.read(["billing/client.py"])
        await opened.workspace.commit(files.merged({"billing/client.py": "# changed\n"}), "change")
        with pytest.raises(PushRefused, match="is a protected branch; the bot does not push to it"):
            await push(opened)
    finally:
        await opened.close()
    assert git("branch", "--list", "codegen-chat/*", cwd=bare).strip() == ""


async def test_credentials_in_a_repository_url_reach_no_prompt_and_the_run_uses_its_own_token(git_host, github,
                                                                                             tmp_path):
    bare = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    host = git_host.url.split("://", 1)[1]
    model = _team()
    text = f"add retries to the client of http://me:s3cretpass@{host}/acme/billing"
    finished = await _run(_config(git_host, github, tmp_path), model, _passing, tmp_path, text=text)
    assert finished.status is RunStatus.PASSED and finished.checkin.kind == "pull_request"
    assert "except ConnectionError" in branch_files(bare, finished.checkin.branch)["billing/client.py"]
    prompts = "".join(model.user_prompt(role) for role in ("planner", "programmer", "tester"))
    assert "s3cretpass" not in prompts and f"http://[redacted]@{host}/acme/billing" in prompts
    assert "s3cretpass" not in github.opened[0].body


async def _two_runs(config: Config, model: ScriptedModel, tmp_path: Path, between=lambda first: None):
    """A run and a follow-up in its thread, and what the thread was told; ``between`` runs after the first,
    given what it ended with."""
    store = await SQLiteStore.open(config.db_path())
    told: list[str] = []
    try:
        service = Service(config, store, model, ScriptedSandbox(_passing), repos=RepoDesk(config, TOKEN))

        async def sink(event: Event) -> None:
            if isinstance(event, Notice):
                told.append(event.text)

        results = []
        for text in (TASK, "try again"):
            handle = await service.submit(ChatRequest("terminal", "s", "alice", text, places=("terminal",)), sink,
                                          FolderPublisher(tmp_path / "saved"))
            results.append(await handle.wait())
            if len(results) == 1:
                between(results[0])
    finally:
        await store.close()
    return results, told


async def test_a_follow_up_to_a_run_that_never_pushed_its_branch_starts_from_the_base(git_host, github, tmp_path):
    repo = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    model = ScriptedModel({"planner": [ModelError("the model endpoint is down"), PLAN], "programmer": [CODE],
                           "tester": [TESTS], "optimizer": ["VERDICT: APPROVE"], "checkin": ["# billing\n"]})
    (first, second), _ = await _two_runs(_config(git_host, github, tmp_path), model, tmp_path)
    assert first.status is RunStatus.ERROR and first.checkin is None
    assert second.status is RunStatus.PASSED, second.reason
    assert second.checkin.repository == "acme/billing" and second.checkin.kind == "pull_request"
    assert "attempts" in branch_files(repo, second.checkin.branch)["billing/client.py"]


async def test_a_follow_up_after_its_branch_was_deleted_starts_a_new_one_from_the_base(git_host, github, tmp_path):
    """GitHub deletes a merged pull request's branch when the repository asks it to; the thread goes on."""
    repo = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    model = ScriptedModel({"planner": [PLAN] * 2, "programmer": [CODE] * 2, "tester": [TESTS] * 2,
                           "optimizer": ["VERDICT: APPROVE"] * 2, "checkin": ["# billing\n"] * 2})
    (first, second), told = await _two_runs(_config(git_host, github, tmp_path), model, tmp_path,
                                            lambda first: git("branch", "-D", first.checkin.branch, cwd=repo))
    assert first.status is RunStatus.PASSED and first.checkin.kind == "pull_request"
    assert second.status is RunStatus.PASSED, second.reason
    assert second.checkin.kind == "pull_request" and second.checkin.branch != first.checkin.branch
    assert f"The branch {first.checkin.branch} is no longer in the repository" in " ".join(told)
    assert "attempts" in branch_files(repo, second.checkin.branch)["billing/client.py"]
