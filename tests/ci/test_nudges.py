import asyncio

from bot.ci.nudges import CiNudges


async def test_a_nudge_wakes_the_wait_on_that_commit_only() -> None:
    nudges = CiNudges()
    waiting = asyncio.create_task(nudges.wait("Team/App", "abc", within_s=5))
    await asyncio.sleep(0)
    nudges.nudge("team/app", "other")
    await asyncio.sleep(0.05)
    assert not waiting.done()
    nudges.nudge("team/app", "abc")
    assert await waiting is True


async def test_a_nudge_before_the_wait_counts_once_and_silence_times_out() -> None:
    nudges = CiNudges()
    nudges.nudge("team/app", "abc")
    assert await nudges.wait("team/app", "abc", within_s=1) is True
    assert await nudges.wait("team/app", "abc", within_s=0.05) is False
