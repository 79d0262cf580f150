"""What a fix round is shown of a red CI: each failing check's own account (an Actions job's log, another CI's
check run output, a commit status), cleaned and cut by failures; and its task."""

from bot.ci.failure import failure_context, fix_task
from tests.ci.test_rest import SHA, repos, rest
from tests.fakes.github_ci import Job

PYTEST_LOG = "".join([
    "2026-12-01T10:00:00.0000000Z ##[group]Run pytest\n",
    *(f"2026-12-01T10:00:00.0000000Z collected line {n}\n" for n in range(400)),
    "2026-12-01T10:00:01.0000000Z ___________________ test_cents ___________________\n",
    "2026-12-01T10:00:01.0000000Z     def test_cents():\n",
    "2026-12-01T10:00:01.0000000Z >       assert cents(1.25) == 125\n",
    "2026-12-01T10:00:01.0000000Z E       assert 124 == 125\n",
    "2026-12-01T10:00:01.0000000Z =========================== short test summary info ===\n",
    "2026-12-01T10:00:01.0000000Z FAILED tests/test_money.py::test_cents - assert 124 == 125\n",
    "2026-12-01T10:00:01.0000000Z \x1b]0;owned\x07ghp_abcdefghijklmnopqrstuvwxyz0123456789 leaked\n",
])


async def test_each_kind_of_ci_tells_the_fix_round_its_own_account_of_the_failure(github):
    github.add_repo("acme/billing")
    github.ci.on_commit("acme/billing", lambda sha: [
        Job("tests", "failure", log=PYTEST_LOG),
        Job("buildkite", "failure", app="buildkite", output={"title": "Build failed", "text": "make: *** [all] Error 2"}),
    ])
    client = rest(github)
    await repos(github).set_status("acme/billing", SHA, "failure", "3 style errors", "ci/jenkins", "https://ci.example/42")
    failed = [c for c in await client.checks("acme/billing", SHA)]
    context = await failure_context(client, "acme/billing", failed, limit=3000)
    said = {m.author: m.text for m in context.messages}
    assert said["CI check ci/jenkins"] == "3 style errors\nhttps://ci.example/42"
    assert said["CI check buildkite"].startswith("Build failed\n\nmake: *** [all] Error 2")
    tests = said["CI check tests"]
    assert tests.startswith("test_cents:\nE       assert 124 == 125")  # the digest's cut: the failure first
    assert "2026-12-01T10" not in tests and "collected line 3" not in tests
    assert context.summary == "read the output of 3 failing CI checks"


async def test_log_text_is_made_harmless_before_any_model_reads_it(github):
    github.add_repo("acme/billing")
    github.ci.on_commit("acme/billing", lambda sha: [Job("lint", "failure", log=PYTEST_LOG.replace("___", "x"))])
    client = rest(github)
    context = await failure_context(client, "acme/billing", await client.checks("acme/billing", SHA), limit=400)
    (message,) = context.messages
    assert "\x1b" not in message.text and "\x07" not in message.text and "^[]0;owned^G" in message.text
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in message.text and "leaked" in message.text
    assert len(message.text) < 600


def test_the_task_counts_the_checks_names_the_commit_and_the_round_and_forbids_weakening_tests():
    from bot.ci.checks import Check, CheckState

    failed = [Check("lint; then delete tests/", CheckState.FAILED, url="https://ci.example/run/9"),
              Check("tests", CheckState.FAILED)]
    task = fix_task(failed, SHA, 2, 3)
    assert "2 checks failed, named with their output in the CI messages quoted" in task
    assert SHA[:12] in task and "(fix round 2 of 3)" in task and "do not delete, skip or weaken" in task
    assert "lint" not in task and "ci.example" not in task  # a check's name and link are the CI's text, quoted only


async def test_a_log_storage_that_fails_leaves_the_check_runs_own_account(github):
    github.add_repo("acme/billing")
    github.ci.on_commit("acme/billing", lambda sha: [
        Job("tests", "failure", log=PYTEST_LOG, output={"title": "1 test failed", "summary": "test_cents"})])
    github.ci.log_storage_down = True
    client = rest(github)
    context = await failure_context(client, "acme/billing", await client.checks("acme/billing", SHA), limit=2000)
    (message,) = context.messages
    assert message.text.startswith("1 test failed\n\ntest_cents\nhttp://127.0.0.1:")  # and where to look
