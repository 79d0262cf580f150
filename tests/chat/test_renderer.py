"""The run renderer against a recording thread: what a thread shows for a run's events."""

from __future__ import annotations

import asyncio
import re

import pytest

from agents.errors import CheckInError
from agents.events import (
    CheckedIn,
    Decided,
    Notice,
    Planned,
    Reviewed,
    RunFinished,
    RunStarted,
    TestReported,
    TextDelta,
    TurnFinished,
    TurnStarted,
    Waiting,
)
from agents.fences import FENCE_LINE
from agents.replies import Action
from agents.types import CheckInResult, FileSet, Publication, RunStatus, TestReport, TestStatus, Usage
from bot.chat.renderer import WRITING, RunRenderer
from bot.safety.redact import Redactor
from tests.fakes.chat_thread import RecordingThread, platform

RUN = "r1"


def balanced(text: str) -> bool:
    return sum(1 for line in text.splitlines() if FENCE_LINE.match(line)) % 2 == 0


async def draw(events, thread=None, secrets=(), streamed=False, **style) -> tuple[RecordingThread, RunRenderer]:
    """``streamed``: the events come apart, each drawn before the next (else at once, so they coalesce)."""
    thread = thread or RecordingThread()
    renderer = RunRenderer(thread, platform(**style), Redactor(secrets))
    await renderer.open(RUN)
    for event in events:
        await renderer(event)
        if streamed:
            await asyncio.sleep(0.02)
    await renderer.done()
    return thread, renderer


def finished(status=RunStatus.PASSED, **fields) -> RunFinished:
    return RunFinished(RUN, status=status, reason=fields.pop("reason", "tests passed and the review approved"), **fields)


def turn(agent, text, round_=1, files=None, meaning=None):
    """A turn's events as the Manager tells them: its reply streamed, then what the reply decided (``meaning``)."""
    return [TurnStarted(RUN, agent=agent, round=round_), TextDelta(RUN, agent=agent, text=text),
            TurnFinished(RUN, agent=agent, round=round_, text=text, files=FileSet(files or {}), meaning=meaning)]


async def test_the_status_message_carries_stop_until_the_run_ends_and_then_says_how_it_ended():
    thread, renderer = await draw([*turn("planner", "1. Plan.\nLANGUAGE: python", 0, meaning=Planned("python", "1. Plan.\n")),
                                    finished(usage=Usage(10, 5))])
    status = thread.messages[0]
    assert thread.calls[0] == "post"
    assert status.text == "✅ **Passed** · run `r1`\n✅ Plan — language: python" and status.stop == ""
    assert thread.texts()[1] == "**Planner** — language: python\n1. Plan."
    assert thread.texts()[-1].startswith("✅ Passed: tests passed and the review approved.")
    assert renderer.finished is not None


async def test_while_running_the_status_message_holds_the_stop_control():
    thread = RecordingThread()
    renderer = RunRenderer(thread, platform(), Redactor(()))
    await renderer.open(RUN)
    assert thread.messages[0].stop == RUN and "run `r1`" in thread.messages[0].text
    await renderer(finished(RunStatus.STOPPED, reason="stopped on request"))
    await renderer.done()
    assert thread.messages[0].stop == ""


async def test_a_turn_is_edited_live_with_whole_lines_and_ends_with_its_whole_text():
    events = [TurnStarted(RUN, agent="planner", round=0), TextDelta(RUN, agent="planner", text="1. Parse.\n2. Wa"),
              TextDelta(RUN, agent="planner", text="lk.\n3. Coll"), TextDelta(RUN, agent="planner", text="ect.\n"),
              TurnFinished(RUN, agent="planner", round=0, text="1. Parse.\n2. Walk.\n3. Collect.\n"), finished()]
    thread, _ = await draw(events, streamed=True)
    planner = thread.messages[1]
    assert planner.text == "**Planner**\n1. Parse.\n2. Walk.\n3. Collect."
    assert planner.edits[0] == f"**Planner**\n1. Parse.\n{WRITING}"
    for live in planner.edits[:-1]:  # never half a line while it streams
        body = live.removeprefix("**Planner**\n").removesuffix(f"\n{WRITING}")
        assert set(body.splitlines()) <= {"1. Parse.", "2. Walk.", "3. Collect."}


async def test_text_that_arrives_while_the_platform_is_busy_is_drawn_in_one_edit():
    deltas = [TextDelta(RUN, agent="planner", text=f"{n}. Step.\n") for n in range(1, 40)]
    events = [TurnStarted(RUN, agent="planner", round=0), *deltas,
              TurnFinished(RUN, agent="planner", round=0, text="".join(d.text for d in deltas)), finished()]
    thread, _ = await draw(events)  # all queued before the first is drawn: the platform is behind
    planner = thread.messages[1]
    assert planner.edits == [planner.text] and "39. Step." in planner.text  # no stale edit per delta


async def test_the_live_view_shows_the_newest_text_with_its_code_block_closed():
    code = "intro\n```python\n" + "".join(f"line {i}\n" for i in range(500))
    thread = RecordingThread()
    renderer = RunRenderer(thread, platform(max_message_chars=400), Redactor(()))
    await renderer.open(RUN)
    await renderer(TurnStarted(RUN, agent="programmer", round=1))
    await renderer(TextDelta(RUN, agent="programmer", text=code))
    while not thread.messages[-1].edits:
        await asyncio.wait_for(thread.changed.wait(), 5)
        thread.changed.clear()
    view = thread.messages[-1].edits[-1]
    assert len(view) <= 400 and view.startswith("**Programmer** · round 1\n…\n```python") and balanced(view)
    assert "line 499" in view and view.endswith(WRITING)
    await renderer(finished(RunStatus.STOPPED, reason="stopped on request"))
    await renderer.done()
    assert thread.messages[1].text.endswith("_(cut short)_") and balanced(thread.messages[1].text)


async def test_a_stored_run_drawn_again_shows_the_reply_a_stop_cut_short_with_its_mark():
    """A reopened conversation draws the stored turns alone (no starts, no streamed text): the cut reply is there."""
    cut = TurnFinished(RUN, agent="planner", round=1, text="Reading the task closely.\nNow the",
                       usage=Usage(120, 8, estimated=True), cut_short=True)
    thread, _ = await draw([cut, finished(RunStatus.STOPPED, reason="stopped on request")])
    shown = [text for text in thread.texts() if "Reading the task closely." in text]
    assert len(shown) == 1 and shown[0].startswith("**Planner** · round 1"), thread.texts()
    assert shown[0].endswith("_(cut short)_"), shown[0]


async def test_long_turns_continue_in_further_messages_that_fit_and_keep_code_blocks_whole():
    text = "Intro.\n```python\n" + "x = 1\n" * 2000 + "```\nOutro.\n"
    thread, _ = await draw([*turn("programmer", text), finished()], max_message_chars=500,
                           max_inline_code_chars=100_000)
    pieces = thread.texts()[1:-1]
    assert len(pieces) > 2 and all(len(p) <= 500 and balanced(p) for p in pieces)
    assert pieces[0].startswith("**Programmer** · round 1\nIntro.") and pieces[-1].endswith("Outro.")


async def test_long_code_goes_to_the_thread_as_the_turns_file_and_nothing_is_deleted():
    body = "".join(f"VALUE_{i} = {i}\n" for i in range(200))
    text = f"Here.\n```python path=pkg/big.py\n{body}```\nDone."
    thread, _ = await draw([*turn("programmer", text, files={"pkg/big.py": body}), finished()])
    assert "📎 `pkg/big.py` (200 lines) is attached below." in thread.texts()[1] and "VALUE_" not in thread.texts()[1]
    upload = next(m for m in thread.messages if m.files)
    assert upload.text == "📎 Programmer: `pkg__big.py`" and upload.files == {"pkg__big.py": body}
    assert "delete" not in thread.calls


async def test_failing_test_output_cannot_close_its_block_or_reach_markup():
    output = "E   assert '```' == '~~~'\n```\n**not bold**\n"
    report = TestReport(TestStatus.FAILED, 1, 0.2, 0, 1, stdout=output)
    thread, _ = await draw([TestReported(RUN, round=1, language="python", report=report), finished(RunStatus.FAILED)])
    shown = thread.texts()[1]
    assert shown.startswith("🧪 **Tests** (python) · round 1: 0 passed, 1 failed in 0.2s\n```\n")
    assert shown.endswith("\n```")
    assert len(re.findall(r"^```", shown, re.M)) == 2 and "**not bold**" in shown


async def test_notices_and_the_final_summary_with_the_runs_cost():
    final = finished(RunStatus.STOPPED, reason="stopped on request", usage=Usage(1000, 500, 0.002))
    thread, _ = await draw([Notice(RUN, "Queued: waiting for a free slot."), final])
    assert thread.texts()[1] == "ℹ️ Queued: waiting for a free slot."
    assert thread.texts()[-1] == "⏹️ Stopped: stopped on request.\nTokens: 1,000 in / 500 out (about $0.0020)"


async def test_secrets_are_masked_before_anything_reaches_the_thread():
    secret = "sk-live-0123456789abcdef"
    events = [TurnStarted(RUN, agent="programmer", round=1), TextDelta(RUN, agent="programmer", text=f"key {secret[:9]}"),
              TextDelta(RUN, agent="programmer", text=f"{secret[9:]}\nnext\n"),
              TurnFinished(RUN, agent="programmer", round=1, text=f"key {secret}\nnext\n```python path=k.py\n"
                           f"KEY = '{secret}'\n" * 100 + "```\n", files=FileSet({"k.py": f"KEY = '{secret}'\n" * 100})),
              Notice(RUN, f"retrying with {secret}"), finished()]
    thread, _ = await draw(events, secrets=(secret,), max_inline_code_chars=50)
    seen = [t for m in thread.messages for t in (m.text, *m.edits, *m.files.values(), *m.files)]
    assert not any(secret[:12] in text for text in seen) and any("[redacted]" in text for text in seen)


async def test_the_fallback_publisher_attaches_the_files_in_order_and_links_them():
    thread = RecordingThread()
    renderer = RunRenderer(thread, platform(), Redactor(()))
    await renderer.open(RUN)
    for event in turn("checkin", "# README", 1):
        await renderer(event)
    publication = Publication(RUN, "test:t", "task", RunStatus.PASSED, FileSet({"a/b.py": "x = 1\n"}), "# README\n", None)
    result = await renderer.publish(publication)
    await renderer(finished())
    await renderer.done()
    files_message = next(m for m in thread.messages if m.files)
    assert thread.messages.index(files_message) == 2  # after the Check-In's turn
    assert set(files_message.files) == {"README.md", "a__b.py"} and result.kind == "attachments"
    assert result.location == f"https://chat.example/{files_message.id}"


async def test_a_refused_upload_is_a_check_in_error_and_the_run_still_ends_in_the_thread():
    thread = RecordingThread(refuse_uploads=True)
    renderer = RunRenderer(thread, platform(), Redactor(()))
    await renderer.open(RUN)
    publication = Publication(RUN, "test:t", "task", RunStatus.PASSED, FileSet({"a.py": "x = 1\n"}), "", None)
    with pytest.raises(CheckInError, match="refused the files"):
        await renderer.publish(publication)
    await renderer(finished())
    assert (await renderer.done()) is not None and thread.texts()[-1].startswith("✅ Passed")


async def test_a_failing_platform_call_is_logged_and_the_drawing_goes_on(caplog):
    class Flaky(RecordingThread):
        async def edit(self, message_id, text, stop=""):
            raise RuntimeError("platform down")

    thread, renderer = await draw([*turn("planner", "plan\n", 0), finished()], thread=Flaky())
    assert thread.texts()[-1].startswith("✅ Passed") and "drawing run r1" in caplog.text


CONTROL_LINE = re.compile(r"^\W*(?:VERDICT|DECISION|LANGUAGE)\W*[:=]", re.I | re.M)


@pytest.mark.parametrize("agent, text, meaning, badge, prose", [
    ("optimizer", "Looks right.\nVERDICT: APPROVE", Reviewed(True, "Looks right."), "✅ approves", "Looks right."),
    ("optimizer", "- find_intf does not recurse into dict values.\n- Add a test.\n**Verdict:** changes",
     Reviewed(False, "- find_intf does not recurse into dict values.\n- Add a test."),
     "✍️ asks for changes: find_intf does not recurse into dict values.", "find_intf does not recurse"),
    ("manager", "The code stops at the first level.\nDECISION: fix_code",
     Decided(Action.FIX_CODE, "The code stops at the first level."), "🔧 fix the code", "stops at the first level"),
    ("manager", "test_lists expects one match.\nDECISION: fix_tests",
     Decided(Action.FIX_TESTS, "test_lists expects one match."), "🧪 fix the tests", "expects one match"),
    ("manager", "The approach cannot work.\n**DECISION**: replan", Decided(Action.REPLAN, "The approach cannot work."),
     "🗺️ re-plan", "cannot work"),
    ("planner", "1. Walk the tree.\n2. Collect.\nLANGUAGE: Python", Planned("Python", "1. Walk the tree.\n2. Collect.\n"),
     "language: Python", "1. Walk the tree."),
])
async def test_lines_meant_for_the_workflow_become_a_badge_and_are_not_shown_raw(agent, text, meaning, badge, prose):
    """What the turn decided travels on its event; the reply's control lines are not shown."""
    thread, _ = await draw([*turn(agent, text, meaning=meaning), finished()])
    shown = thread.texts()[1]
    assert shown.splitlines()[0].endswith(f" — {badge}") and prose in shown
    assert not CONTROL_LINE.search(shown)


async def test_a_turn_whose_reply_could_not_be_read_is_shown_as_written_without_a_badge():
    thread, _ = await draw([*turn("optimizer", "VERDICT: maybe?"), finished()])
    assert thread.texts()[1] == "**Optimizer (review)** · round 1\nVERDICT: maybe?"


async def test_code_blocks_are_captioned_with_their_file_and_keep_only_the_language():
    text = "Here it is.\n```python path=src/intf.py\ndef f():\n    return 1\n```\n```js:index.js\nx()\n```\n"
    thread, _ = await draw([*turn("programmer", text, files={"src/intf.py": "def f():\n    return 1\n"}), finished()])
    shown = thread.texts()[1]
    assert "📄 `src/intf.py`\n```python\ndef f():" in shown and "📄 `index.js`\n```js\nx()" in shown
    assert "path=" not in shown


async def test_the_check_in_shows_two_lines_and_then_the_link_not_the_readme_again():
    readme = ("# find_intf\n\nFinds every `intf` key at any depth.\n\n## Usage\n\n```python\nfind_intf(data)\n```\n"
              + "more\n" * 50)
    events = [*turn("checkin", readme), CheckedIn(RUN, result=CheckInResult("https://gist.example/abc", "gist")), finished()]
    thread, _ = await draw(events)
    checkin = thread.messages[1]
    assert checkin.text == ("**Check-In** · round 1\nfind_intf\nFinds every `intf` key at any depth.\n"
                            "🔗 https://gist.example/abc")
    assert "Usage" not in checkin.text and "more" not in checkin.text


async def test_a_follow_up_is_named_in_every_header_so_rounds_never_repeat_in_a_thread():
    thread = RecordingThread()
    renderer = RunRenderer(thread, platform(), Redactor(()))
    await renderer.open(RUN)
    report = TestReport(TestStatus.PASSED, 0, 0.1, 2, 0)
    for event in [RunStarted(RUN, task="now make it async", follow_up=2), *turn("planner", "plan\n", 0),
                  *turn("programmer", "code\n", 1),
                  TestReported(RUN, round=1, language="python", report=report), finished()]:
        await renderer(event)
    await renderer.done()
    headers = [text.splitlines()[0] for text in thread.texts()[1:4]]
    assert headers == ["**Planner** · follow-up 2", "**Programmer** · follow-up 2 · round 1",
                       "🧪 **Tests** (python) · follow-up 2 · round 1: 2 passed, 0 failed in 0.1s"]


async def test_a_silent_model_shows_as_waiting_and_writing_resumes_when_text_arrives():
    thread = RecordingThread()
    renderer = RunRenderer(thread, platform(), Redactor(()))
    await renderer.open(RUN)
    for event in [TurnStarted(RUN, agent="programmer", round=1), Waiting(RUN, agent="programmer", seconds=12.4),
                  TextDelta(RUN, agent="programmer", text="Here.\n"), finished(RunStatus.STOPPED, reason="stopped")]:
        await renderer(event)
        await asyncio.sleep(0.02)  # as they come from a model: each drawn before the next
    await renderer.done()
    edits = thread.messages[1].edits
    assert edits[0] == "**Programmer** · round 1\n_waiting for the model (12 s)…_"
    assert edits[1] == f"**Programmer** · round 1\nHere.\n{WRITING}"


async def test_tokens_cost_and_time_per_agent_are_in_the_final_summary_not_on_every_turn():
    events = [TurnStarted(RUN, agent="planner", round=0),
              TurnFinished(RUN, agent="planner", round=0, text="plan", usage=Usage(100, 20, 0.001), duration_s=1.5),
              TurnStarted(RUN, agent="programmer", round=1),
              TurnFinished(RUN, agent="programmer", round=1, text="code", usage=Usage(300, 200, 0.003), duration_s=4.0),
              TurnStarted(RUN, agent="programmer", round=2),
              TurnFinished(RUN, agent="programmer", round=2, text="code", usage=Usage(300, 100, 0.002), duration_s=2.0),
              finished(usage=Usage(700, 320, 0.006))]
    thread, _ = await draw(events)
    assert not any("tokens" in text or " in /" in text for text in thread.texts()[1:-1])
    assert thread.texts()[-1].splitlines()[-3:] == [
        "Tokens: 700 in / 320 out (about $0.0060)",
        "· Planner: 100 in / 20 out, $0.0010 · 1.5s",
        "· Programmer: 600 in / 300 out, $0.0050 · 6.0s",
    ]


def report_of(passed: int, failed: int) -> TestReport:
    status = TestStatus.PASSED if not failed else TestStatus.FAILED
    return TestReport(status, int(bool(failed)), 0.2, passed, failed, stdout="FAILED test_a.py::test_x" if failed else "")


def a_run_with_a_fix() -> list:
    """Plan, code, review, tests failing, triage, fix, review, tests passing, check-in: a whole run."""
    return [RunStarted(RUN, task="find all intf keys"),
            *turn("planner", "Plan.\nLANGUAGE: python", 0, meaning=Planned("python", "Plan.\n")),
            *turn("programmer", "```python path=intf.py\nx = 1\n```", 1, files={"intf.py": "x = 1\n"}),
            *turn("optimizer", "Fine.\nVERDICT: APPROVE", 1, meaning=Reviewed(True, "Fine.")),
            *turn("tester", "```python path=test_intf.py\ndef test_x(): pass\n```", 1, files={"test_intf.py": "t\n"}),
            TestReported(RUN, round=1, language="python", report=report_of(1, 1)),
            *turn("manager", "Off by one.\nDECISION: fix_code", 1, meaning=Decided(Action.FIX_CODE, "Off by one.")),
            *turn("programmer", "```python path=intf.py\nx = 2\n```", 2, files={"intf.py": "x = 2\n"}),
            *turn("optimizer", "Good.\nVERDICT: APPROVE", 2, meaning=Reviewed(True, "Good.")),
            TestReported(RUN, round=2, language="python", report=report_of(2, 0)),
            *turn("checkin", "# intf\n\nFinds keys.\n", 2),
            CheckedIn(RUN, result=CheckInResult("https://gist.example/abc", "gist"))]


async def test_the_status_message_shows_where_the_run_is_at_every_step_and_carries_stop_until_the_end():
    thread = RecordingThread()
    renderer = RunRenderer(thread, platform(), Redactor(()))
    await renderer.open(RUN)
    status = thread.messages[0]
    seen: list[tuple[str, str]] = [(status.text, status.stop)]
    for event in a_run_with_a_fix():
        await renderer(event)
        await asyncio.sleep(0.01)  # let the renderer draw it, as the team would go on meanwhile
        seen.append((status.text, status.stop))
    await renderer(finished(usage=Usage(10, 5)))
    await renderer.done()
    assert all(stop == RUN for _, stop in seen) and status.stop == ""  # Stop exactly while the run can stop
    assert status.text.splitlines() == [
        "✅ **Passed** · run `r1`", "✅ Plan — language: python", "✅ Code · round 1", "✅ Review · round 1 — approves",
        "❌ Tests · round 1 — 1 passed, 1 failed", "✅ Triage · round 1 — fix the code", "✅ Fix · round 2",
        "✅ Review · round 2 — approves", "✅ Tests · round 2 — 2 passed, 0 failed",
        "✅ Check-in — https://gist.example/abc"]
    assert any("⏳ Tests · round 1 — running the tests" in text for text, _ in seen)
    assert status.progress is not None and [s.key for s in status.progress.steps][:3] == ["plan-0", "code-1", "review-1"]


async def test_who_is_at_work_goes_to_the_platforms_passing_status_and_is_cleared_at_the_end():
    events = [TurnStarted(RUN, agent="programmer", round=1), Waiting(RUN, agent="programmer", seconds=9),
              TurnFinished(RUN, agent="programmer", round=1, text="x\n"), finished()]
    thread, _ = await draw(events)
    assert thread.statuses[:3] == ["Programmer is writing…", "Programmer is waiting for the model (9 s)…", ""]
    assert thread.statuses[-1] == ""


async def test_a_stopped_run_marks_its_unfinished_step_and_the_stop_control_goes():
    thread, _ = await draw([TurnStarted(RUN, agent="tester", round=1), finished(RunStatus.STOPPED, reason="stopped")])
    # the unfinished step is marked stopped, not failed
    assert thread.messages[0].text.splitlines() == ["⏹️ **Stopped** · run `r1`", "⏹️ Tests · round 1"]
    assert thread.messages[0].stop == ""


async def test_compact_mode_is_the_status_message_the_files_and_the_result_only():
    thread, _ = await draw([*a_run_with_a_fix(), finished()], detail="compact")
    uploads = [m for m in thread.messages if m.files]
    assert len(thread.messages) == 1 + len(uploads) + 1  # status, attachments, result
    assert [m.text for m in uploads] == ["📎 Programmer · round 1: `intf.py`", "📎 Tester · round 1: `test_intf.py`",
                                         "📎 Programmer · round 2: `intf.py`"]
    assert uploads[-1].files == {"intf.py": "x = 2\n"}
    assert thread.texts()[-1].startswith("✅ Passed") and "❌ Tests · round 1" in thread.texts()[0]
    assert "delete" not in thread.calls


async def test_a_queued_run_says_so_in_its_status_message():
    thread = RecordingThread()
    renderer = RunRenderer(thread, platform(detail="compact"), Redactor(()))
    await renderer.open(RUN, follows="r0")
    assert thread.messages[0].text == "⏳ **Waiting for run `r0`** in this thread · run `r1`"
    await renderer(Notice(RUN, "Queued: 1 run is ahead of this one."))
    await renderer(TurnStarted(RUN, agent="planner", round=0))
    await renderer(finished(RunStatus.STOPPED, reason="stopped"))
    await renderer.done()
    assert any("ℹ️ Queued: 1 run is ahead of this one." in text for text in thread.messages[0].edits)


async def test_after_a_silence_the_passing_status_says_writing_again_and_another_agents_silence_is_not_this_turns():
    events = [TurnStarted(RUN, agent="programmer", round=1), Waiting(RUN, agent="programmer", seconds=6),
              TextDelta(RUN, agent="programmer", text="Here.\n"), Waiting(RUN, agent="tester", seconds=8),
              TurnFinished(RUN, agent="programmer", round=1, text="Here.\n"), finished()]
    thread, _ = await draw(events)
    assert thread.statuses[:4] == ["Programmer is writing…", "Programmer is waiting for the model (6 s)…",
                                   "Programmer is writing…", "Tester is waiting for the model (8 s)…"]
    assert not any("(8 s)" in edit for edit in thread.messages[1].edits)  # the Programmer's turn is not waiting


async def test_a_run_ended_after_a_restart_keeps_the_steps_its_status_message_showed():
    thread = RecordingThread()
    status_id = await thread.post("🛠️ **Working** · run `r1`", stop=RUN)  # what the earlier process left
    earlier = [RunStarted(RUN, task="find all intf keys", follow_up=1),
               TurnFinished(RUN, agent="planner", round=0, text="Plan.\nLANGUAGE: python", usage=Usage(100, 20),
                            meaning=Planned("python", "Plan.\n")),
               TurnFinished(RUN, agent="programmer", round=1, text="code", usage=Usage(300, 200)),
               TurnFinished(RUN, agent="tester", round=1, text="tests", usage=Usage(50, 10))]
    renderer = RunRenderer(thread, platform(), Redactor(()))
    await renderer.reopen(RUN, status_id, earlier)
    await renderer(finished(RunStatus.INTERRUPTED, reason="the bot stopped while this run was under way",
                            usage=Usage(450, 230)))
    await renderer.done()
    status = thread.messages[0]
    assert status.text.splitlines() == ["⏸️ **Interrupted** · run `r1`, follow-up 1", "✅ Plan — language: python",
                                        "✅ Code · round 1", "⏹️ Tests · round 1"]
    assert status.stop == "" and len(thread.messages) == 2  # the status, edited; one line to say how it ended
    assert thread.texts()[-1].splitlines()[-3:] == ["· Planner: 100 in / 20 out · 0.0s",
                                                    "· Programmer: 300 in / 200 out · 0.0s",
                                                    "· Tester: 50 in / 10 out · 0.0s"]
