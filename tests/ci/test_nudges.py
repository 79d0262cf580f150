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


async def test_a_nudge_on_a_watched_commit_before_the_wait_counts_once_and_silence_times_out() -> None:
    nudges = CiNudges()
    with nudges.watching("team/app", "abc"):  # as a follower does between two looks
        nudges.nudge("team/app", "abc")
        assert await nudges.wait("team/app", "abc", within_s=1) is True
        assert await nudges.wait("team/app", "abc", within_s=0.05) is False


async def test_nudges_on_commits_nobody_follows_are_not_kept() -> None:
    nudges = CiNudges()
    for n in range(1000):  # every push to every branch of a busy repository sends deliveries
        nudges.nudge("team/app", f"{n:040x}")
    assert nudges.watched == 0
    assert await nudges.wait("team/app", f"{1:040x}", within_s=0.05) is False  # an earlier nudge is not kept
    with nudges.watching("team/app", "abc"):
        assert nudges.watched == 1
    assert nudges.watched == 0
