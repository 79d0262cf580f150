"""FallbackPublisher and publisher_for: which publisher a run gets, and what the user is told."""

from __future__ import annotations

from pathlib import Path

from agents.errors import CheckInError
from agents.types import CheckInResult, Publication
from bot.checkin import FallbackPublisher, FolderPublisher, MemoryGistIndex, publisher_for
from bot.config.sections import CheckinConfig, Config, Secrets
from tests.checkin.support import TOKEN, publication
from tests.fakes.github_server import FakeGitHub


class Attachments:
    """A chat adapter's fallback: remembers what it was given, like attaching files to a thread."""

    def __init__(self) -> None:
        self.published: list[Publication] = []

    async def publish(self, publication: Publication) -> CheckInResult:
        self.published.append(publication)
        return CheckInResult(location="thread 42", kind="attachments", note="2 files attached")


class Broken:
    async def publish(self, publication: Publication) -> CheckInResult:
        raise CheckInError("GitHub refused the Gist (422 Validation Failed)")


async def test_the_primary_result_is_returned_when_it_works(tmp_path: Path) -> None:
    attachments = Attachments()

    result = await FallbackPublisher(FolderPublisher(tmp_path), attachments).publish(publication())

    assert result.kind == "folder"
    assert attachments.published == []


async def test_on_failure_the_fallback_result_carries_the_reason() -> None:
    attachments = Attachments()

    result = await FallbackPublisher(Broken(), attachments).publish(publication())

    assert result.kind == "attachments"
    assert result.location == "thread 42"
    assert result.note == (
        "GitHub refused the Gist (422 Validation Failed); files attached to the thread instead (2 files attached)"
    )
    assert len(attachments.published) == 1


async def test_without_a_token_the_fallback_is_used_alone(tmp_path: Path) -> None:
    folder = FolderPublisher(tmp_path)

    result = await publisher_for(Config(), Secrets(), MemoryGistIndex())(folder).publish(publication())

    assert result.kind == "folder" and (tmp_path / "adder.py").exists()


async def test_with_a_token_runs_publish_gists_and_fall_back(github: FakeGitHub, tmp_path: Path) -> None:
    config = Config(checkin=CheckinConfig(github_api_url=github.url, write_interval_s=0))
    publisher = publisher_for(config, Secrets(github_token=TOKEN), MemoryGistIndex())(FolderPublisher(tmp_path))

    published = await publisher.publish(publication())
    github.fail(401, times=None)
    fell_back = await publisher.publish(publication(conversation_key="another"))

    assert published.kind == "gist"
    assert fell_back.kind == "folder"
    assert "bad credentials" in fell_back.note


def test_every_run_shares_one_gist_publisher(tmp_path: Path) -> None:
    """GitHub asks for one token's writes to go one after another: one publisher (and its lock) per process."""
    wrap = publisher_for(Config(), Secrets(github_token=TOKEN), MemoryGistIndex())
    first, second = wrap(FolderPublisher(tmp_path / "a"))._inner, wrap(FolderPublisher(tmp_path / "b"))._inner
    assert isinstance(first, FallbackPublisher) and isinstance(second, FallbackPublisher)
    assert first._primary is second._primary and first._fallback is not second._fallback
