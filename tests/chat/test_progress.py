"""The status message's steps while a model is silent: which step says it is waiting, and when it stops."""

from __future__ import annotations

from agents.events import Reviewed, RunFinished, TextDelta, TurnFinished, TurnStarted, Waiting
from agents.types import RunStatus
from bot.chat.progress import ProgressTracker, progress_text

RUN = "r1"


def shown(events) -> list[str]:
    tracker = ProgressTracker(RUN)
    for event in events:
        tracker.observe(event)
    return progress_text(tracker.snapshot()).splitlines()[1:]


def test_a_silent_model_shows_on_its_step_and_writing_replaces_it_when_tokens_come():
    started = [TurnStarted(RUN, agent="planner", round=0), Waiting(RUN, agent="planner", seconds=6.2)]
    assert shown(started) == ["⏳ Plan — waiting for the model (6 s)"]
    assert shown([*started, Waiting(RUN, agent="planner", seconds=16)]) == ["⏳ Plan — waiting for the model (16 s)"]
    assert shown([*started, TextDelta(RUN, agent="planner", text="1. ")]) == ["⏳ Plan — writing"]


def test_the_silence_is_shown_on_the_step_of_the_agent_that_waits_when_two_write_at_once():
    both = [TurnStarted(RUN, agent="programmer", round=1), TurnStarted(RUN, agent="tester", round=1)]
    assert shown([*both, Waiting(RUN, agent="programmer", seconds=7)]) == [
        "⏳ Code · round 1 — waiting for the model (7 s)", "⏳ Tests · round 1"]
    waited = [*both, Waiting(RUN, agent="tester", seconds=5), Waiting(RUN, agent="programmer", seconds=5)]
    assert shown([*waited, TextDelta(RUN, agent="tester", text="x")]) == [
        "⏳ Code · round 1 — waiting for the model (5 s)", "⏳ Tests · round 1 — writing"]


def test_tokens_without_a_silence_before_them_change_nothing():
    tracker = ProgressTracker(RUN)
    tracker.observe(TurnStarted(RUN, agent="programmer", round=1))
    assert not tracker.observe(TextDelta(RUN, agent="programmer", text="code"))
    assert progress_text(tracker.snapshot()).splitlines()[1:] == ["⏳ Code · round 1"]


def test_a_step_that_ends_or_a_run_stopped_during_a_silence_no_longer_says_it_waits():
    waiting = [TurnStarted(RUN, agent="optimizer", round=2), Waiting(RUN, agent="optimizer", seconds=30)]
    assert shown([*waiting, TurnFinished(RUN, agent="optimizer", round=2, text="VERDICT: APPROVE",
                                                    meaning=Reviewed(True, ""))]) == [
        "✅ Review · round 2 — approves"]
    for status, mark in [(RunStatus.STOPPED, "⏹️"), (RunStatus.INTERRUPTED, "⏹️"), (RunStatus.ERROR, "❌")]:
        assert shown([*waiting, RunFinished(RUN, status=status, reason="why")]) == [f"{mark} Review · round 2"]


def test_a_run_that_ends_while_a_step_works_shows_the_step_cut_short_without_what_it_was_doing():
    for last, line in [(TurnFinished(RUN, agent="tester", round=1, text="tests"), "Tests · round 1"),
                       (TurnFinished(RUN, agent="checkin", round=1, text="# x"), "Check-in"),
                       (TurnStarted(RUN, agent="programmer", round=2), "Fix · round 2")]:
        for status, mark in [(RunStatus.STOPPED, "⏹️"), (RunStatus.INTERRUPTED, "⏹️"), (RunStatus.ERROR, "❌")]:
            assert shown([last, RunFinished(RUN, status=status, reason="why")]) == [f"{mark} {line}"]


def test_a_reply_the_stop_cut_short_shows_its_step_stopped_not_done():
    """The runner ends a reply a Stop cut short as a turn (its tokens count), marked as cut: the step it was
    writing is stopped, not ticked off with a verdict it never gave."""
    writing = [TurnStarted(RUN, agent="optimizer", round=2), TextDelta(RUN, agent="optimizer", text="The code")]
    cut = TurnFinished(RUN, agent="optimizer", round=2, text="The code", cut_short=True)
    assert shown([*writing, cut, RunFinished(RUN, status=RunStatus.STOPPED, reason="stopped")]) == [
        "⏹️ Review · round 2"]
