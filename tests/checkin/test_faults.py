"""GitHub failing: bad tokens, rate limits, 5xx and no network end in the fallback with a clear reason."""

from __future__ import annotations

import dataclasses
import logging
import socket
import time
from pathlib import Path

import pytest

from agents.errors import CheckInError
from bot.checkin import FallbackPublisher, FolderPublisher, GistPublisher, MemoryGistIndex
from bot.config.sections import CheckinConfig
from tests.checkin.support import TOKEN, SleepLog, publication
from tests.fakes.github_server import FakeGitHub


def with_folder(publisher: GistPublisher, folder: Path) -> FallbackPublisher:
    return FallbackPublisher(publisher, FolderPublisher(folder))


async def test_bad_token_names_the_scope_and_falls_back_to_the_folder(
    github: FakeGitHub, checkin_config: CheckinConfig, tmp_path: Path
) -> None:
    wrong = GistPublisher(checkin_config, "ghp_wrong_token_999999", MemoryGistIndex())

    result = await with_folder(wrong, tmp_path / "out").publish(publication())

    assert result.kind == "folder"
    assert result.location == str((tmp_path / "out").resolve())
    assert "GitHub rejected GITHUB_TOKEN as bad credentials" in result.note
    assert "gist scope" in result.note
    assert f"files saved to {result.location}" in result.note
    assert (tmp_path / "out" / "adder.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (tmp_path / "out" / "README.md").read_text().startswith("# Adder")
    assert github.calls() == [("POST", "/gists")]  # a 401 is not retried
    assert "ghp_wrong_token_999999" not in result.note


async def test_token_without_the_gist_scope_says_which_scope_is_needed(
    github: FakeGitHub, publisher: GistPublisher
) -> None:
    github.scopes = "repo, read:org"  # GitHub answers 404 to a gist write without the scope

    with pytest.raises(CheckInError, match="GITHUB_TOKEN needs the gist scope") as caught:
        await publisher.publish(publication())

    assert "404" in str(caught.value)
    assert github.gists == {}


async def test_rate_limit_waits_until_the_reset_then_succeeds(
    github: FakeGitHub, publisher: GistPublisher, sleeps: SleepLog
) -> None:
    github.rate_limit(reset_in_s=30)

    result = await publisher.publish(publication())

    assert result.kind == "gist"
    assert len(github.gists) == 1
    assert github.calls() == [("POST", "/gists"), ("POST", "/gists")]
    (wait,) = sleeps.waits
    assert 29 <= wait <= 32  # until x-ratelimit-reset, plus a second for clock skew


async def test_secondary_rate_limit_honours_retry_after(
    github: FakeGitHub, publisher: GistPublisher, sleeps: SleepLog
) -> None:
    github.secondary_rate_limit(retry_after_s=7, status=429)

    result = await publisher.publish(publication())

    assert result.kind == "gist"
    assert sleeps.waits == [7.0]


async def test_rate_limit_resetting_after_the_cap_falls_back_at_once(
    github: FakeGitHub, checkin_config: CheckinConfig, sleeps: SleepLog, tmp_path: Path
) -> None:
    capped = dataclasses.replace(checkin_config, max_wait_s=5)
    github.rate_limit(reset_in_s=3600)

    result = await with_folder(GistPublisher(capped, TOKEN, MemoryGistIndex(), sleep=sleeps), tmp_path).publish(
        publication()
    )

    assert result.kind == "folder"
    assert "rate limit for GITHUB_TOKEN is used up until about" in result.note
    assert sleeps.waits == []
    assert len(github.requests) == 1


async def test_rate_limit_wait_really_sleeps_within_the_cap(github: FakeGitHub, checkin_config: CheckinConfig) -> None:
    # The real asyncio.sleep this time; GitHub says retry-after 1 s, under a 2 s cap.
    github.secondary_rate_limit(retry_after_s=1)
    publisher = GistPublisher(dataclasses.replace(checkin_config, max_wait_s=2), TOKEN, MemoryGistIndex())
    started = time.monotonic()

    result = await publisher.publish(publication())

    assert result.kind == "gist"
    assert 1 <= time.monotonic() - started < 2


async def test_server_errors_are_retried_with_backoff(
    github: FakeGitHub, publisher: GistPublisher, sleeps: SleepLog
) -> None:
    github.fail(502, times=2)

    result = await publisher.publish(publication())

    assert result.kind == "gist"
    assert sleeps.waits == [0.01, 0.02]
    assert len(github.gists) == 1


async def test_a_server_error_with_retry_after_waits_as_told(
    github: FakeGitHub, publisher: GistPublisher, sleeps: SleepLog
) -> None:
    github.fail(503, headers={"retry-after": "3"})

    result = await publisher.publish(publication())

    assert result.kind == "gist"
    assert sleeps.waits == [3.0]


async def test_server_errors_until_retries_run_out_fall_back(
    github: FakeGitHub, publisher: GistPublisher, sleeps: SleepLog, tmp_path: Path
) -> None:
    github.fail(500, times=None)

    result = await with_folder(publisher, tmp_path).publish(publication())

    assert result.kind == "folder"
    assert "GitHub answered 500 Server Error, even after retrying" in result.note
    assert len(github.requests) == 3  # max_retries=2: one try and two retries
    assert len(sleeps.waits) == 2
    assert (tmp_path / "test_adder.py").exists()


async def test_unreachable_github_falls_back(tmp_path: Path, sleeps: SleepLog) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = CheckinConfig(github_api_url=f"http://127.0.0.1:{port}", write_interval_s=0, max_retries=1,
                           timeout_s=2)
    publisher = GistPublisher(config, TOKEN, MemoryGistIndex(), sleep=sleeps)

    result = await with_folder(publisher, tmp_path).publish(publication())

    assert result.kind == "folder"
    assert f"GitHub is unreachable at http://127.0.0.1:{port}" in result.note
    assert (tmp_path / "adder.py").exists()


async def test_github_too_slow_to_answer_falls_back(
    github: FakeGitHub, checkin_config: CheckinConfig, tmp_path: Path
) -> None:
    github.stall(2.5)
    impatient = dataclasses.replace(checkin_config, timeout_s=1, max_retries=0)

    result = await with_folder(GistPublisher(impatient, TOKEN, MemoryGistIndex()), tmp_path).publish(publication())

    assert result.kind == "folder"
    assert f"GitHub at {github.url} did not answer in time" in result.note


async def test_the_token_never_reaches_an_error_or_a_log_record(
    github: FakeGitHub, checkin_config: CheckinConfig, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.DEBUG)  # PyGithub, urllib3 and ours, at their most talkative
    # GitHub's own message echoes the token back: still it must not get out.
    github.fail(500, f"upstream said: token {TOKEN} is odd", times=None)
    publisher = GistPublisher(checkin_config, TOKEN, MemoryGistIndex(), sleep=SleepLog())

    with pytest.raises(CheckInError) as caught:
        await publisher.publish(publication())
    fallback = await with_folder(publisher, tmp_path).publish(publication())

    assert caplog.records, "the retries should have been logged"
    texts = [str(caught.value), repr(caught.value), fallback.note, caplog.text]
    texts += [r.getMessage() for r in caplog.records]
    assert not [t for t in texts if TOKEN in t]
    assert "[redacted]" in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__context__ is None
