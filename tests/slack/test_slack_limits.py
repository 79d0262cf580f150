"""Slack's own limits: rate limits (429 + Retry-After) and message size; long code goes as a file."""

from __future__ import annotations

import re

import pytest

from tests.conftest import with_changes
from tests.fakes import team_script as s
from tests.fakes.slack_api import FakeSlack
from tests.fakes.team_script import ScriptedSandbox
from tests.slack.conftest import finished, headers, mention, script_team

TURNS = ["Planner", "Programmer", "Tester", "Optimizer (review)", "Check-In"]  # the Tester writes beside the Programmer


async def test_a_429_on_chat_update_is_retried_after_retry_after_and_the_run_lands(
        slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    slack.fail("chat.update", 429, times=2, retry_after="0")
    script_team(model_server)
    message, _ = await mention(slack, "find all intf keys")
    thread = await finished(slack, "C1", message.ts)
    assert headers(thread) == TURNS
    planner = next(m for m in thread if m.text.startswith("*Planner*"))
    assert planner.text.startswith("*Planner* — language: python") and "_writing…_" not in planner.text  # last edit landed
    assert len(slack.called("chat.update")) > 2  # the two refused edits were sent again


def balanced(piece: str) -> bool:
    return len(re.findall(r"^\s*```", piece, re.M)) % 2 == 0


async def test_a_60_kb_answer_is_split_and_its_code_uploaded_as_a_file(slack, model_server, slack_config, start_bot):
    from agents.types import TestReport, TestStatus

    limit = slack_config.slack.max_message_chars
    code = "".join(f"def f{i}(x):\n    return x * {i}  # {'.' * 20}\n\n" for i in range(900))
    prose = "".join(f"Step {i}: the function f{i} multiplies by {i}; it is a pure function with no state.\n"
                    for i in range(250))
    answer = f"{prose}\n```python path=big.py\n{code}```\n\nEnd of the answer.\n"
    assert len(answer) > 60_000
    await start_bot(slack_config, sandbox=ScriptedSandbox(lambda job: TestReport(TestStatus.PASSED, 0, 0.1, 1, 0)))
    script_team(model_server, programmer=[answer])
    message, _ = await mention(slack, "write 900 functions")
    thread = await finished(slack, "C1", message.ts)

    start = next(i for i, m in enumerate(thread) if m.text.startswith("*Programmer*"))
    end = next(i for i, m in enumerate(thread) if m.text.startswith("*Optimizer"))
    turn = [m for m in thread[start:end] if not m.files]
    assert len(turn) > 1 and all(len(m.text) <= limit for m in turn) and all(balanced(m.text) for m in turn)
    text = "\n".join(m.text for m in turn)
    assert "Step 249:" in text and "End of the answer." in text and "return x * 899" not in text
    assert "📎 `big.py` (2,700 lines) is attached below." in text
    uploaded = [u for u in slack.uploads if u["title"] == "big.py" and u["thread_ts"] == message.ts]
    assert uploaded and uploaded[0]["content"] == code


async def test_short_files_stay_inline(slack, model_server, slack_config, start_bot):
    await start_bot(with_changes(slack_config, slack={"upload_files_over_chars": 100_000}))
    script_team(model_server)
    message, _ = await mention(slack, "find all intf keys")
    await finished(slack, "C1", message.ts)
    assert [u["title"] for u in slack.uploads if u["title"] == "intf.py"] == ["intf.py"]  # only the check-in's
    assert s.CODE.splitlines()[3] in "\n".join(m.text for m in slack.thread("C1", message.ts))


async def test_a_compact_thread_holds_the_status_the_files_and_the_result_only(slack, model_server, slack_config,
                                                                                start_bot):
    await start_bot(with_changes(slack_config, slack={"thread_detail": "compact"}))
    script_team(model_server)
    message, _ = await mention(slack, "find all intf keys")
    status, *attachments, last = await finished(slack, "C1", message.ts)
    assert last.text.startswith("✅ Passed:") and all(m.files for m in attachments)
    assert [m.text.split(":")[0] for m in attachments] == ["📎 Programmer · round 1", "📎 Tester · round 1",
                                                            "📎 Files of run `" + status.text.split("`")[1] + "` (passed)"]
    assert "✅ Tests · round 1 — 2 passed, 0 failed" in status.text and not headers([status, *attachments, last])


def always_fails(job):
    from agents.types import TestReport, TestStatus

    return TestReport(TestStatus.FAILED, 1, 0.1, 1, 1, "FAILED test_intf.py::test_nested - AssertionError\n1 failed, 1 passed")


@pytest.mark.parametrize("scopes", [("app_mentions:read", "chat:write", "channels:history", "files:write")],
                         ids=["edited-status"])
async def test_the_status_of_a_run_of_many_rounds_is_kept_current_within_slack_s_limits(
        model_server, slack_config, start_bot, scopes):
    rounds = 30  # a line per step, four steps a round: more than a block's 3,000 characters
    async with FakeSlack(scopes=scopes) as narrow:
        config = with_changes(slack_config, slack={"api_url": narrow.api_url},
                              budget={"max_rounds": rounds, "max_tokens": 10**9})
        await start_bot(config, sandbox=ScriptedSandbox(always_fails), fake=narrow)
        script_team(model_server, programmer=[s.CODE] * rounds, tester=[s.TESTS] * rounds,
                    optimizer=[s.APPROVE] * rounds, manager=[s.FIX_CODE] * rounds)
        message, _ = await mention(narrow, "find all intf keys")
        status = (await finished(narrow, "C1", message.ts))[0]

    working = [text for text in status.edits if text.startswith("🛠️ *Working*")]
    assert any(f"Fix · round {rounds}" in text for text in working)  # edited while it ran, Stop button and all
    assert status.text.startswith("❌ *Failed*") and f"Tests · round {rounds} — 1 passed, 1 failed" in status.text
    assert status.blocks == [] and len(status.text) <= config.slack.max_message_chars


@pytest.mark.parametrize("scopes", [("app_mentions:read", "chat:write", "channels:history", "files:write")],
                         ids=["edited-status"])
async def test_a_status_message_deleted_mid_run_is_left_alone_and_the_run_ends_as_usual(
        model_server, slack_config, start_bot, scopes):
    from tests.fakes.openai_server import Reply

    async with FakeSlack(scopes=scopes) as narrow:
        await start_bot(with_changes(slack_config, slack={"api_url": narrow.api_url}), fake=narrow)
        script_team(model_server, programmer=[Reply(s.CODE, pause_after=10)])
        message, _ = await mention(narrow, "find all intf keys")
        await narrow.wait_for(lambda: any(m.text.startswith("*Programmer*") for m in narrow.thread("C1", message.ts)))
        status = narrow.thread("C1", message.ts)[0]
        narrow.messages.remove(status)  # a person deleted it
        edits_before = len([c for c in narrow.called("chat.update") if c.args.get("ts") == status.ts])
        model_server.resume.set()
        thread = await finished(narrow, "C1", message.ts)

    assert thread[-1].text.startswith("✅ Passed")
    # Told once that the message is gone, the bot edits it no more (each edit was a refused call and an error).
    assert len([c for c in narrow.called("chat.update") if c.args.get("ts") == status.ts]) - edits_before <= 1
