"""The service end to end: the real openai client against the scripted server, the real store,
the Manager's full loop (a failing test run the team fixes), limits, queueing, follow-ups, cancel."""

import asyncio
import base64

import pytest

from agents.errors import UserInputError
from agents.events import Notice, RunFinished, TextDelta, TurnStarted, WorkSaved
from agents.types import Attachment, RunStatus
from bot.checkin import FolderPublisher
from bot.model.client import OpenAIChatModel
from bot.runs.service import ChatRequest, Service
from tests.conftest import with_changes
from tests.fakes import team_script as s
from tests.fakes.openai_server import Reply
from tests.fakes.team_script import ScriptedSandbox


class Sink:
    def __init__(self):
        self.events = []

    async def __call__(self, event):
        self.events.append(event)

    def kinds(self):
        return [type(e).__name__ for e in self.events]


def script_team(server, **overrides):
    for role, replies in {**s.happy_path(), **overrides}.items():
        server.script(role, *replies)


RIGHT = "found.extend(find_intf(value))"  # the line only the right version has (s.CODE, not s.BUGGY_CODE)


def make_service(config, secrets, store, sandbox=None):
    return Service(config, store, OpenAIChatModel(config, secrets), sandbox or ScriptedSandbox())


def request(text="find all intf keys", thread="t1", user="ann", attachments=()):
    return ChatRequest("terminal", thread, user, text, attachments)


async def test_full_loop_with_a_failing_test_run_that_the_team_fixes(model_server, config, secrets, store, tmp_path):
    script_team(model_server, programmer=[s.BUGGY_CODE, s.CODE], optimizer=[s.APPROVE, s.APPROVE], manager=[s.FIX_CODE])
    service, sink = make_service(config, secrets, store), Sink()
    handle = await service.submit(request(), sink, FolderPublisher(tmp_path / "out"))
    finished = await handle.wait()

    assert finished.status is RunStatus.PASSED
    agents = [e.agent for e in sink.events if isinstance(e, TurnStarted)]
    assert agents == ["planner", "programmer", "tester", "optimizer", "manager", "programmer", "optimizer", "checkin"]
    assert sorted(c.agent for c in model_server.requests) == sorted(agents)  # one model call per turn, each named
    assert sink.kinds()[-2:] == ["CheckedIn", "RunFinished"]
    assert (tmp_path / "out" / "intf.py").read_text() == finished.files["intf.py"]
    assert (tmp_path / "out" / "README.md").exists()

    record = await store.run(handle.run_id)
    assert record.summary.status == "passed" and [t.agent for t in record.turns] == agents
    assert record.summary.usage.total_tokens == finished.usage.total_tokens > 0
    second_code_prompt = model_server.calls("programmer")[1].body["messages"][1]["content"]
    assert "FAILED test_intf.py::test_nested" in second_code_prompt and "stops at the first level" in second_code_prompt


async def test_a_follow_up_in_the_thread_continues_from_the_last_files(model_server, config, secrets, store, tmp_path):
    script_team(model_server)
    service = make_service(config, secrets, store)
    first = await (await service.submit(request(), Sink(), FolderPublisher(tmp_path / "a"))).wait()
    script_team(model_server)
    await (await service.submit(request("now make it async"), Sink(), FolderPublisher(tmp_path / "b"))).wait()
    planner_prompt = model_server.calls("planner")[1].body["messages"][1]["content"]
    assert "find all intf keys" in planner_prompt and "now make it async" in planner_prompt
    assert first.files["intf.py"].strip() in planner_prompt
    programmer_prompt = model_server.calls("programmer")[1].body["messages"][1]["content"]
    assert "path=intf.py" in programmer_prompt


@pytest.mark.parametrize("text, message", [("   ", "The task is empty"), ("x" * 20_001, "the limit is 20,000")])
async def test_bad_tasks_are_refused_before_anything_runs(model_server, config, secrets, store, text, message):
    service = make_service(config, secrets, store)
    with pytest.raises(UserInputError, match=message):
        await service.submit(request(text), Sink(), FolderPublisher("unused"))
    assert model_server.requests == [] and await store.runs() == []


async def test_runs_beyond_the_global_limit_queue_and_are_told_their_place(model_server, config, secrets, store, tmp_path):
    config = with_changes(config, limits={"max_concurrent_runs": 1})
    model_server.responder = lambda recorded: Reply(s.TEAM_DEFAULTS[recorded.agent])
    service = make_service(config, secrets, store, ScriptedSandbox(delay=0.05))
    sinks = [Sink() for _ in range(3)]
    handles = [await service.submit(request(thread=f"t{i}", user=f"u{i}"), sinks[i], FolderPublisher(tmp_path / str(i)))
               for i in range(3)]
    results = await asyncio.gather(*(h.wait() for h in handles))
    assert [r.status for r in results] == [RunStatus.PASSED] * 3
    notices = [[e.text for e in sink.events if isinstance(e, Notice)] for sink in sinks]
    assert notices[0] == []
    assert "Queued: next in line, waiting for a free slot." in notices[1] or "Queued: 1 run is ahead of this one." in notices[1]
    assert "Queued: 1 run is ahead of this one." in notices[2]


async def test_one_run_at_a_time_per_thread_and_the_next_continues_from_it(model_server, config, secrets, store, tmp_path):
    model_server.responder = lambda recorded: Reply(s.TEAM_DEFAULTS[recorded.agent])
    service = make_service(config, secrets, store, ScriptedSandbox(delay=0.05))
    first = await service.submit(request(), Sink(), FolderPublisher(tmp_path / "a"))
    second_sink = Sink()
    second = await service.submit(request("and add a CLI"), second_sink, FolderPublisher(tmp_path / "b"))
    assert service.active_run("terminal", "t1") == first.run_id
    await first.wait()
    await second.wait()
    first_turns = (await store.run(first.run_id)).turns
    second_turns = (await store.run(second.run_id)).turns
    assert first_turns[-1].finished_at <= second_turns[0].started_at + 0.01
    assert any(isinstance(e, Notice) and e.text.startswith("Queued") for e in second_sink.events)
    second_planner = [c for c in model_server.calls("planner")][1].body["messages"][1]["content"]
    assert "```python path=intf.py" in second_planner and "- find all intf keys" in second_planner


async def test_per_user_limit_queues_that_users_extra_runs(model_server, config, secrets, store, tmp_path):
    config = with_changes(config, limits={"max_runs_per_user": 1})
    model_server.responder = lambda recorded: Reply(s.TEAM_DEFAULTS[recorded.agent])
    service = make_service(config, secrets, store, ScriptedSandbox(delay=0.05))
    busy, other = Sink(), Sink()
    a = await service.submit(request(thread="t1"), Sink(), FolderPublisher(tmp_path / "a"))
    b = await service.submit(request(thread="t2"), busy, FolderPublisher(tmp_path / "b"))
    c = await service.submit(request(thread="t3", user="bob"), other, FolderPublisher(tmp_path / "c"))
    await asyncio.gather(a.wait(), b.wait(), c.wait())
    assert any(isinstance(e, Notice) for e in busy.events)
    assert not any(isinstance(e, Notice) for e in other.events)


async def test_cancel_stops_the_run_closes_the_model_stream_and_records_stopped(model_server, config, secrets, store, tmp_path):
    model_server.script("planner", Reply("Thinking about it...", chunk=4, stall_after=8))
    service, sink = make_service(config, secrets, store), Sink()
    handle = await service.submit(request(), sink, FolderPublisher(tmp_path))
    while not any(isinstance(e, TextDelta) for e in sink.events):
        await asyncio.sleep(0.01)
    assert service.cancel(handle.run_id) is True
    with pytest.raises(asyncio.CancelledError):
        await handle.wait()
    assert isinstance(sink.events[-1], RunFinished) and sink.events[-1].status is RunStatus.STOPPED
    assert (await store.run(handle.run_id)).summary.status == "stopped"
    assert await model_server.hung_up() == 1


async def test_cancel_while_queued_records_stopped(model_server, config, secrets, store, tmp_path):
    config = with_changes(config, limits={"max_concurrent_runs": 1})
    model_server.responder = lambda recorded: Reply(s.TEAM_DEFAULTS[recorded.agent])
    service = make_service(config, secrets, store, ScriptedSandbox(delay=0.2))
    first = await service.submit(request(thread="t1"), Sink(), FolderPublisher(tmp_path / "a"))
    queued_sink = Sink()
    queued = await service.submit(request(thread="t2"), queued_sink, FolderPublisher(tmp_path / "b"))
    await asyncio.sleep(0.05)
    queued.cancel()
    with pytest.raises(asyncio.CancelledError):
        await queued.wait()
    assert (await store.run(queued.run_id)).summary.status == "stopped"
    assert (await first.wait()).status is RunStatus.PASSED


async def test_model_down_ends_with_a_clear_error_and_keeps_what_was_recorded(model_server, config, secrets, store, tmp_path):
    from tests.fakes.openai_server import error

    model_server.script("planner", s.PLAN)
    model_server.script("tester", s.TESTS)  # writes beside the Programmer, and finishes
    model_server.script("programmer", *[error(500)] * 3)
    service, sink = make_service(config, secrets, store), Sink()
    finished = await (await service.submit(request(), sink, FolderPublisher(tmp_path))).wait()
    assert finished.status is RunStatus.ERROR and "kept failing for the programmer (HTTP 500)" in finished.reason
    record = await store.run(finished.run_id)
    assert record.summary.status == "error" and [t.agent for t in record.turns] == ["planner", "tester"]
    assert "test_intf.py" in record.tests  # what was finished is kept


async def test_a_429_then_success_completes_the_run(model_server, config, secrets, store, tmp_path):
    from tests.fakes.openai_server import error

    script_team(model_server)
    model_server.script_any(error(429, retry_after="0"))
    finished = await (await make_service(config, secrets, store).submit(request(), Sink(), FolderPublisher(tmp_path))).wait()
    assert finished.status is RunStatus.PASSED and len(model_server.calls("planner")) == 2


async def test_garbage_from_the_model_twice_goes_on_to_the_tests_which_show_it(model_server, config, secrets, store,
                                                                                tmp_path):
    script_team(model_server, programmer=["I'd rather not.", "Still no.", s.CODE], manager=[s.FIX_CODE],
                optimizer=[s.APPROVE, s.APPROVE])
    sink = Sink()
    finished = await (await make_service(config, secrets, store).submit(request(), sink, FolderPublisher(tmp_path))).wait()
    assert finished.status is RunStatus.PASSED and len(model_server.calls("programmer")) == 3
    assert any("could not be read again" in e.text for e in sink.events if isinstance(e, Notice))


async def test_a_wrong_generated_test_is_fixed_in_the_full_loop(model_server, config, secrets, store, tmp_path):
    script_team(model_server, tester=[s.WRONG_TESTS, s.TESTS], manager=[s.FIX_TESTS])
    finished = await (await make_service(config, secrets, store).submit(request(), Sink(), FolderPublisher(tmp_path))).wait()
    assert finished.status is RunStatus.PASSED and len(model_server.calls("tester")) == 2


async def test_budget_exhausted_is_recorded_as_failed_with_the_best_attempt(model_server, config, secrets, store, tmp_path):
    config = with_changes(config, budget={"max_rounds": 1})
    script_team(model_server, programmer=[s.BUGGY_CODE])
    finished = await (await make_service(config, secrets, store).submit(request(), Sink(), FolderPublisher(tmp_path))).wait()
    assert finished.status is RunStatus.FAILED and "all 1 rounds" in finished.reason
    assert (await store.run(finished.run_id)).summary.status == "failed"
    assert "failing" in (tmp_path / "README.md").read_text().lower()


async def test_attachments_reach_the_team(model_server, config, secrets, store, tmp_path):
    script_team(model_server)
    attachment = Attachment("main.py", "def main():\n    return 'attached'\n")
    await (await make_service(config, secrets, store).submit(request(attachments=(attachment,)), Sink(),
                                                              FolderPublisher(tmp_path))).wait()
    assert "return 'attached'" in model_server.calls("programmer")[0].body["messages"][1]["content"]


async def test_a_model_that_stalls_mid_reply_ends_the_run_clearly(model_server, config, secrets, store, tmp_path):
    config = with_changes(config, llm={"request_timeout_s": 0.3})
    model_server.script("planner", s.PLAN)
    model_server.script("tester", s.TESTS)
    model_server.script("programmer", Reply(s.CODE, chunk=8, stall_after=40))
    finished = await (await make_service(config, secrets, store).submit(request(), Sink(), FolderPublisher(tmp_path))).wait()
    assert finished.status is RunStatus.ERROR
    assert finished.reason == "The model stopped mid-reply for the programmer: no answer within 0.3s."
    record = await store.run(finished.run_id)
    assert record.summary.status == "error"
    # The Programmer's reply the stall cut is kept too: its prompt and the text that came were spent.
    assert [t.agent for t in record.turns] == ["planner", "tester", "programmer"]
    assert record.turns[-1].usage.prompt_tokens > 0 and record.turns[-1].text


async def test_cancel_right_after_submit_still_ends_the_run_stopped(model_server, config, secrets, store, tmp_path):
    script_team(model_server)
    sink = Sink()
    service = make_service(config, secrets, store)
    handle = await service.submit(request(), sink, FolderPublisher(tmp_path))
    handle.cancel()
    with pytest.raises(asyncio.CancelledError):
        await handle.wait()
    assert [type(e).__name__ for e in sink.events] == ["RunFinished"] and sink.events[0].status is RunStatus.STOPPED
    assert (await store.run(handle.run_id)).summary.status == "stopped"
    assert model_server.requests == []


async def test_a_queued_run_starts_even_if_the_slot_frees_while_it_is_being_told_it_waits(
        model_server, config, secrets, store, tmp_path):
    config = with_changes(config, limits={"max_concurrent_runs": 1})
    model_server.responder = lambda recorded: Reply(s.TEAM_DEFAULTS[recorded.agent])
    service = make_service(config, secrets, store)

    class SlowNotices(Sink):
        async def __call__(self, event):
            if isinstance(event, Notice):
                await asyncio.sleep(0.5)  # a chat API slow to post "Queued…", while the first run ends
            await super().__call__(event)

    first = await service.submit(request(thread="t1"), Sink(), FolderPublisher(tmp_path / "a"))
    second = await service.submit(request(thread="t2"), SlowNotices(), FolderPublisher(tmp_path / "b"))
    assert (await first.wait()).status is RunStatus.PASSED
    assert (await asyncio.wait_for(second.wait(), 10)).status is RunStatus.PASSED


async def test_a_burst_cannot_overfill_the_queue(model_server, config, secrets, store, tmp_path):
    config = with_changes(config, limits={"max_concurrent_runs": 1, "max_queued_runs": 3})
    model_server.responder = lambda recorded: Reply(s.TEAM_DEFAULTS[recorded.agent])
    service = make_service(config, secrets, store, ScriptedSandbox(delay=0.05))
    attempts = [service.submit(request(thread=f"t{i}", user=f"u{i}"), Sink(), FolderPublisher(tmp_path / str(i)))
                for i in range(6)]
    results = await asyncio.gather(*attempts, return_exceptions=True)
    accepted = [r for r in results if not isinstance(r, Exception)]
    refused = [r for r in results if isinstance(r, UserInputError)]
    assert len(accepted) == 3 and len(refused) == 3 and "too many runs" in str(refused[0])
    assert all(r.status is RunStatus.PASSED for r in await asyncio.gather(*(h.wait() for h in accepted)))


async def test_one_user_cannot_fill_the_queue(model_server, config, secrets, store, tmp_path):
    config = with_changes(config, limits={"max_concurrent_runs": 1, "max_queued_runs_per_user": 2})
    model_server.responder = lambda recorded: Reply(s.TEAM_DEFAULTS[recorded.agent])
    service = make_service(config, secrets, store, ScriptedSandbox(delay=0.05))
    # one runs, two wait: the third waiting run is one too many
    handles = [await service.submit(request(thread=f"t{i}"), Sink(), FolderPublisher(tmp_path / str(i))) for i in range(3)]
    with pytest.raises(UserInputError, match="You already have 2 runs waiting"):
        await service.submit(request(thread="t9"), Sink(), FolderPublisher(tmp_path / "9"))
    other = await service.submit(request(thread="t8", user="bob"), Sink(), FolderPublisher(tmp_path / "8"))
    await asyncio.gather(*(h.wait() for h in [*handles, other]))


async def test_two_attachments_with_one_name_are_refused(model_server, config, secrets, store):
    twins = (Attachment("main.py", "a = 1\n"), Attachment("main.py", "b = 2\n"))
    with pytest.raises(UserInputError, match="both called main.py"):
        await make_service(config, secrets, store).submit(request(attachments=twins), Sink(), FolderPublisher("x"))


async def test_a_stop_pressed_while_the_outcome_is_being_recorded_does_not_overwrite_it(
        model_server, config, secrets, store, tmp_path):
    script_team(model_server)
    recording = asyncio.Event()

    class SlowToRecordTheEnd(Sink):
        async def __call__(self, event):
            if isinstance(event, RunFinished):
                recording.set()
                await asyncio.sleep(0.3)  # a chat API slow to post the summary
            await super().__call__(event)

    sink = SlowToRecordTheEnd()
    service = make_service(config, secrets, store)
    handle = await service.submit(request(), sink, FolderPublisher(tmp_path))
    await recording.wait()
    service.cancel(handle.run_id)
    with pytest.raises(asyncio.CancelledError):
        await handle.wait()
    await asyncio.sleep(0.5)
    finals = [e for e in sink.events if isinstance(e, RunFinished)]
    assert [f.status for f in finals] == [RunStatus.PASSED]
    assert (await store.run(handle.run_id)).summary.status == "passed"


async def test_a_run_stopped_mid_way_leaves_its_latest_files_for_the_follow_up(
        model_server, config, secrets, store, tmp_path):
    for role in ("planner", "programmer", "optimizer"):
        model_server.script(role, *s.happy_path()[role])
    model_server.script("tester", Reply("Writing the tests...", chunk=4, stall_after=8))
    sink = Sink()
    service = make_service(config, secrets, store)
    handle = await service.submit(request(), sink, FolderPublisher(tmp_path))
    # Stopped once the code is saved, while the Tester (writing beside the Programmer) is still at it.
    while not any(isinstance(e, WorkSaved) and "intf.py" in e.files for e in sink.events):
        await asyncio.sleep(0.01)
    service.cancel(handle.run_id)
    with pytest.raises(asyncio.CancelledError):
        await handle.wait()
    record = await store.run(handle.run_id)
    assert record.summary.status == "stopped" and "def find_intf" in record.files["intf.py"]

    script_team(model_server)
    await (await service.submit(request("now make it async"), Sink(), FolderPublisher(tmp_path / "b"))).wait()
    assert "def find_intf" in model_server.calls("planner")[-1].body["messages"][1]["content"]



async def test_a_run_stopped_after_a_later_change_leaves_the_version_that_passed(
        model_server, config, secrets, store, tmp_path):
    # Round 1 passes its tests and the review asks for a change; round 2's change is saved, and the run stopped.
    script_team(model_server, programmer=[s.CODE, s.BUGGY_CODE],
                optimizer=[s.CHANGES, Reply("Reading the change...", chunk=4, stall_after=8)],
                manager=[Reply("Looking at the failure...", chunk=4, stall_after=8)])
    sink = Sink()
    service = make_service(config, secrets, store)
    handle = await service.submit(request(), sink, FolderPublisher(tmp_path))
    while not any(isinstance(e, WorkSaved) and RIGHT not in e.files.get("intf.py", RIGHT) for e in sink.events):
        await asyncio.sleep(0.01)
    service.cancel(handle.run_id)
    with pytest.raises(asyncio.CancelledError):
        await handle.wait()
    final = next(e for e in sink.events if isinstance(e, RunFinished))
    assert final.status is RunStatus.STOPPED and final.report.ok and RIGHT in final.files["intf.py"]
    assert final.reason == ("stopped on request; the files are the version of round 1, the best the tests judged "
                            "(2 passed, 0 failed)")
    record = await store.run(handle.run_id)
    assert record.summary.status == "stopped" and RIGHT in record.files["intf.py"] and record.report.ok

# -- chat platforms: which messages are taken, who may stop a run ------------------------------------


def arrival(text="find all intf keys", key="m1", thread="", user="ann", channel="C1", addressed=True, **place):
    from bot.chat.access import Place
    from bot.runs.service import Arrival

    return Arrival(key, thread, Place(user, channel, **place), text, addressed)


async def take(service, thread, platform, **fields):
    """A message taken the one way platforms take them, in conversation T1; its run (None when refused)."""
    from bot.runs.service import Prepared

    message = arrival(**fields)

    async def prepare():
        return Prepared(message.request("chat", "T1"), thread)

    return (await service.take(message, platform, prepare)).run


def chat(access=None):
    import dataclasses

    from bot.chat.access import AccessRules
    from tests.fakes.chat_thread import platform

    return dataclasses.replace(platform(name="chat"), access=access or AccessRules())


async def test_a_message_is_taken_once_however_often_the_platform_delivers_it(model_server, config, secrets, store):
    service = make_service(config, secrets, store)
    assert (await service.admit(arrival(key="m1"), chat())).take
    assert not (await service.admit(arrival(key="m1"), chat())).take  # a redelivery
    assert (await service.admit(arrival(key="m2"), chat())).take  # another message


async def test_an_unaddressed_message_is_taken_only_in_a_thread_the_bot_works_in(
        model_server, config, secrets, store, tmp_path):
    from tests.fakes.chat_thread import RecordingThread

    script_team(model_server)
    service = make_service(config, secrets, store)
    assert not (await service.admit(arrival(key="a", thread="T1", addressed=False), chat())).take  # chatter
    handle = await take(service, RecordingThread(), chat(), key="first")
    await handle.wait()
    assert (await service.admit(arrival(key="b", thread="T1", addressed=False, text="now async"), chat())).take
    assert not (await service.admit(arrival(key="c", thread="T2", addressed=False), chat())).take
    assert not (await service.admit(arrival(key="d", thread="T1", addressed=False, text=" "), chat())).take


async def test_someone_outside_the_allowlists_is_refused_with_a_sentence_and_nothing_is_recorded(
        model_server, config, secrets, store):
    from bot.chat.access import WRONG_CHANNEL, AccessRules

    service = make_service(config, secrets, store)
    rules = AccessRules.of("chat", channels=["C9"], users=["boss"])
    refused = await service.admit(arrival(channel="C1"), chat(rules))
    assert not refused.take and refused.refusal == WRONG_CHANNEL
    user = await service.admit(arrival(key="m2", channel="C9"), chat(rules))
    assert user.refusal.startswith("You are not on this bot's list of users")
    assert await store.runs() == [] and model_server.requests == []


async def test_a_message_is_prepared_only_once_admitted_and_a_run_starts_only_through_admission(
        model_server, config, secrets, store):
    from bot.chat.access import AccessRules
    from bot.runs.service import Prepared
    from tests.fakes.chat_thread import RecordingThread

    script_team(model_server)
    service, prepared = make_service(config, secrets, store), []
    thread = RecordingThread()

    async def prepare():
        prepared.append(True)  # where an adapter downloads files and opens the thread
        return Prepared(arrival().request("chat", "T1"), thread)

    refused = await service.take(arrival(channel="C1"), chat(AccessRules.of("chat", channels=["C9"])), prepare)
    assert refused.run is None and refused.refusal and prepared == []
    taken = await service.take(arrival(key="m2"), chat(), prepare)
    assert prepared == [True] and taken.run is not None
    await taken.run.wait()
    assert thread.messages and (await store.run(taken.run.run_id)).summary.status == "passed"
    again = await service.take(arrival(key="m2"), chat(), prepare)  # a redelivery starts nothing
    assert again.run is None and not again.refusal and prepared == [True]


@pytest.mark.parametrize("text, words", [("  ", "The task is empty"), ("x" * 20_001, "the limit is 20,000")])
async def test_an_addressed_message_with_a_task_that_cannot_be_taken_says_why(
        model_server, config, secrets, store, text, words):
    with pytest.raises(UserInputError, match=words):
        await make_service(config, secrets, store).admit(arrival(text=text), chat())


async def test_only_who_started_a_run_may_stop_it_and_a_run_that_ended_says_so(model_server, config, secrets, store):
    from bot.chat.access import WRONG_ROLE, AccessRules, Place
    from tests.fakes.chat_thread import RecordingThread

    model_server.script("planner", Reply("Thinking about it...", chunk=4, stall_after=8))
    service = make_service(config, secrets, store)
    platform = chat(AccessRules.of("chat", roles=["coder"]))
    coder = frozenset({"coder"})
    handle = await take(service, RecordingThread(), platform, roles=coder)
    assert await service.stop(handle.run_id, Place("bob", "C1"), platform) == WRONG_ROLE
    assert await service.stop(handle.run_id, Place("bob", "C1", roles=coder), platform) == (
        "Only @ann (who started this run) can stop it.")
    assert await service.stop(handle.run_id, Place("ann", "C1", roles=coder), platform) is None
    with pytest.raises(asyncio.CancelledError):
        await handle.wait()
    assert await service.stop(handle.run_id, Place("ann", "C1", roles=coder), platform) == (
        f"Run `{handle.run_id}` is not running any more.")


async def test_stopping_a_platform_stops_its_runs_and_their_threads_say_so(model_server, config, secrets, store):
    from tests.fakes.chat_thread import RecordingThread

    model_server.script("planner", Reply("Thinking about it...", chunk=4, stall_after=8))
    service, thread = make_service(config, secrets, store), RecordingThread()
    handle = await take(service, thread, chat())
    while not model_server.calls("planner"):
        await asyncio.sleep(0.01)
    await service.stop_all("chat", grace_s=10)
    assert thread.texts()[-1].startswith("⏹️ Stopped: stopped on request.") and thread.messages[0].stop == ""
    assert (await store.run(handle.run_id)).summary.status == "stopped"


async def test_a_follow_ups_publication_knows_the_conversations_earlier_requests(model_server, config, secrets, store):
    from tests.fakes.publishers import RecordingPublisher

    recorder = RecordingPublisher()
    service = Service(config, store, OpenAIChatModel(config, secrets), ScriptedSandbox(), lambda fallback: recorder)
    for text in ("find all intf keys.", "now make it async", "add a CLI"):
        script_team(model_server)
        await (await service.submit(request(text), Sink(), FolderPublisher("unused"))).wait()
    assert [p.earlier_tasks for p in recorder.publications] == [
        (), ("find all intf keys.",), ("find all intf keys.", "now make it async")]


async def test_the_bots_own_secrets_pasted_in_a_request_or_its_thread_reach_no_prompt_and_no_record(
        model_server, config, secrets, store, tmp_path):
    from agents.types import ThreadContext, ThreadMessage
    from bot.safety.redact import MASK, Redactor

    own = "whsec-internal-gateway-0000111122223333"  # no common shape: only the bot's own list knows it
    encoded = base64.b64encode(f"svc:{own}".encode()).decode()
    script_team(model_server)
    service = Service(config, store, OpenAIChatModel(config, secrets), ScriptedSandbox(), redact=Redactor([own]))
    thread = ThreadContext((ThreadMessage("Ann", f"the gateway wants Basic {encoded}"),),
                           (Attachment("notes.txt", f"key: {own}\n"),), "read 1 earlier message, 1 file, 0 code blocks")
    asked = ChatRequest("terminal", "t1", "ann", f"find all intf keys; our key is {own}",
                        (Attachment("cfg.ini", f"key={own}\n"),), thread=thread)
    handle = await service.submit(asked, Sink(), FolderPublisher(tmp_path / "out"))
    await handle.wait()

    prompts = "".join(str(call.body) for call in model_server.requests)
    record = await store.run(handle.run_id)
    assert own not in prompts and encoded not in prompts and MASK in prompts
    assert own not in repr(record) and encoded not in repr(record)
    assert any("masked before anything was sent on" in note for note in record.thread.notes)


@pytest.mark.parametrize("lines, off_the_loop", [(10, False), (20_000, True)])
async def test_a_large_request_is_masked_in_a_worker_thread_and_masked_all_the_same(
        model_server, config, secrets, store, tmp_path, monkeypatch, lines, off_the_loop):
    # Masking takes time in proportion to the text: a request of megabytes must not hold every other run meanwhile.
    import threading

    from bot.runs import service as service_module
    from bot.safety.redact import Redactor

    own = "whsec-internal-gateway-0000111122223333"
    on_the_loop: list[bool] = []
    real = service_module.mask_secrets

    def recording(text, known):
        on_the_loop.append(threading.current_thread() is threading.main_thread())
        return real(text, known)

    monkeypatch.setattr(service_module, "mask_secrets", recording)
    script_team(model_server)
    service = Service(config, store, OpenAIChatModel(config, secrets), ScriptedSandbox(), redact=Redactor([own]))
    attached = Attachment("data.py", "x = 1\n" * lines + f"KEY = {own!r}\n")
    handle = await service.submit(ChatRequest("terminal", "t1", "ann", "find all intf keys", (attached,)),
                                  Sink(), FolderPublisher(tmp_path / "out"))
    await handle.wait()

    record = await store.run(handle.run_id)
    assert own not in repr(record) and own not in "".join(str(call.body) for call in model_server.requests)
    assert any("masked before anything was sent on" in note for note in record.thread.notes)
    assert (False in on_the_loop) is off_the_loop  # the files were masked off the event loop's thread, or on it


async def test_a_requests_files_are_masked_once(model_server, config, secrets, store, tmp_path, monkeypatch):
    """Masking reads every byte of every file (a second or more for the largest requests, with nothing else
    done meanwhile): the check before the run reads only what names the repository."""
    import bot.runs.service as service_module

    read: list[str] = []
    mask = service_module.mask_secrets
    monkeypatch.setattr(service_module, "mask_secrets", lambda text, known: (read.append(text), mask(text, known))[1])
    script_team(model_server)
    service = Service(config, store, OpenAIChatModel(config, secrets), ScriptedSandbox())
    asked = ChatRequest("terminal", "t1", "ann", "find all intf keys.", (Attachment("cfg.ini", "key=1\n"),))
    await (await service.submit(asked, Sink(), FolderPublisher(tmp_path / "out"))).wait()
    assert read.count("key=1\n") == 1


async def test_a_file_named_after_a_secret_is_attached_under_a_masked_name(model_server, config, secrets, store,
                                                                           tmp_path):
    from bot.safety.redact import Redactor

    own = "sk-own-key-0123456789abcdef0123"
    github = "ghp_AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHHIIII"
    script_team(model_server)
    service = Service(config, store, OpenAIChatModel(config, secrets), ScriptedSandbox(), redact=Redactor([own]))
    files = (Attachment(f"key_{github}.py", "A = 1\n"), Attachment(f"key_{own}.py", "B = 2\n"),
             Attachment(f"{own}.txt", "C\n"))
    handle = await service.submit(ChatRequest("terminal", "t1", "ann", "write tests for these", files),
                                  Sink(), FolderPublisher(tmp_path / "out"))
    await handle.wait()

    record = await store.run(handle.run_id)
    sent = "".join(str(call.body) for call in model_server.requests)
    for secret in (own, github):
        assert secret not in repr(record) and secret not in sent
    named = record.summary.attachments
    assert len(set(named)) == 3 and named[0].startswith("key_") and named[0].endswith(".py")  # two files stay two
    contents = [str(call.body) for call in model_server.requests if call.agent == "tester"]
    assert all(f"{name}" in contents[0] for name in named) and "B = 2" in contents[0]  # contents kept


async def test_reading_the_thread_failing_unforeseen_costs_the_context_not_the_request(
        model_server, config, secrets, store):
    from bot.runs.service import Prepared
    from tests.fakes.chat_thread import RecordingThread

    script_team(model_server)
    service, thread = make_service(config, secrets, store), RecordingThread()

    async def read_earlier():
        raise AttributeError("a channel kind the adapter did not know")

    async def prepare():
        return Prepared(arrival().request("chat", "T1"), thread, earlier=read_earlier)

    taken = await service.take(arrival(), chat(), prepare)
    assert taken.run is not None
    await taken.run.wait()
    record = await store.run(taken.run.run_id)
    assert record.summary.status == "passed"
    assert any("could not read the earlier messages" in note for note in record.thread.notes)
    assert any("could not read the earlier messages" in text for text in thread.texts())
