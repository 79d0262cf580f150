"""GistPublisher against the fake GitHub through the real PyGithub: create, revise, names, odd files."""

from __future__ import annotations

import dataclasses

from agents.types import RunStatus
from bot.checkin import GistPublisher, MemoryGistIndex
from bot.config.sections import CheckinConfig
from tests.checkin.support import FAILING, TOKEN, publication
from tests.fakes.github_server import FakeGitHub


async def test_creates_a_secret_gist_with_the_files_and_readme(github: FakeGitHub, publisher: GistPublisher) -> None:
    result = await publisher.publish(publication())

    (gist,) = github.gists.values()
    assert result.kind == "gist"
    assert result.location == f"{github.html_url}/{gist.id}"
    assert gist.public is False
    assert set(gist.files) == {"adder.py", "test_adder.py", "README.md"}
    assert gist.files["adder.py"] == "def add(a, b):\n    return a + b\n"
    assert gist.files["README.md"].startswith("# Adder")
    assert gist.description == "Write a function that adds two numbers: passed (1 passed, 0 failed)"
    assert github.calls() == [("POST", "/gists")]
    assert github.requests[0].headers["Authorization"] == f"token {TOKEN}"


async def test_public_when_configured(github: FakeGitHub, checkin_config: CheckinConfig) -> None:
    public = GistPublisher(dataclasses.replace(checkin_config, public=True), TOKEN, MemoryGistIndex())

    await public.publish(publication())

    (gist,) = github.gists.values()
    assert gist.public is True


async def test_a_follow_up_revises_the_same_gist(
    github: FakeGitHub, publisher: GistPublisher, index: MemoryGistIndex
) -> None:
    first = await publisher.publish(publication(task="Write a function that adds two numbers."))
    follow_up = dataclasses.replace(publication(
        {"adder.py": "async def add(a, b):\n    return a + b\n", "test_async_adder.py": "def test_it():\n    pass\n"},
        task="now make it async", run_id="run-2",
    ), earlier_tasks=("Write a function that adds two numbers.",))

    second = await publisher.publish(follow_up)

    (gist,) = github.gists.values()
    assert second.location == first.location
    assert await index.gist_for("slack:C1:1700000000.0001") == gist.id
    assert github.calls()[1:] == [("GET", f"/gists/{gist.id}"), ("PATCH", f"/gists/{gist.id}")]
    assert len(gist.history) == 2
    assert "revision 2" in second.note
    # The revision is the current project: the renamed test file is gone, the new code is in.
    assert set(gist.files) == {"adder.py", "test_async_adder.py", "README.md"}
    assert gist.files["adder.py"].startswith("async def")
    # The title stays the conversation's (its first request, one full stop at most); the README tells the history.
    assert gist.description == "Write a function that adds two numbers: passed (1 passed, 0 failed)"
    assert "## History\n\n1. Write a function that adds two numbers.\n2. now make it async" in gist.files["README.md"]


async def test_another_conversation_gets_its_own_gist(github: FakeGitHub, publisher: GistPublisher) -> None:
    await publisher.publish(publication(conversation_key="discord:1"))
    await publisher.publish(publication(conversation_key="discord:2"))

    assert len(github.gists) == 2


async def test_a_deleted_gist_is_replaced_by_a_new_one(
    github: FakeGitHub, publisher: GistPublisher, index: MemoryGistIndex
) -> None:
    await publisher.publish(publication())
    old_id = next(iter(github.gists))
    del github.gists[old_id]  # the user deleted it on GitHub

    result = await publisher.publish(publication(task="add a CLI"))

    (new_id,) = github.gists
    assert new_id != old_id
    assert result.location.endswith(new_id)
    assert await index.gist_for("slack:C1:1700000000.0001") == new_id


async def test_a_gist_gone_between_reading_and_editing_is_replaced(
    github: FakeGitHub, publisher: GistPublisher
) -> None:
    await publisher.publish(publication())
    old_id = next(iter(github.gists))
    github.fail(404, method="PATCH", path=f"/gists/{old_id}")

    await publisher.publish(publication(task="add a CLI"))

    assert len(github.gists) == 2
    assert github.calls()[-1] == ("POST", "/gists")


async def test_nested_paths_are_flattened_and_mapped_in_the_readme(
    github: FakeGitHub, publisher: GistPublisher
) -> None:
    files = {"src/pkg/mod.py": "X = 1\n", "src/pkg/__init__.py": "from .mod import X\n",
             "src__pkg__mod.py": "clash = True\n", "tests/test_mod.py": "def test(): pass\n",
             "README.md": "the programmer's own readme\n"}

    await publisher.publish(publication(files))

    (gist,) = github.gists.values()
    assert set(gist.files) == {"src__pkg__mod.py", "src__pkg____init__.py", "src__pkg__mod-2.py",
                               "tests__test_mod.py", "README-2.md", "README.md"}
    assert gist.files["src__pkg__mod.py"] == "X = 1\n"
    assert gist.files["src__pkg__mod-2.py"] == "clash = True\n"
    readme = gist.files["README.md"]
    assert "| `src__pkg__mod.py` | `src/pkg/mod.py` |" in readme
    assert "| `src__pkg__mod-2.py` | `src__pkg__mod.py` |" in readme
    assert "| `README-2.md` | `README.md` |" in readme


async def test_empty_binary_oversized_and_escaping_files_are_left_out_with_a_note(
    github: FakeGitHub, checkin_config: CheckinConfig
) -> None:
    publisher = GistPublisher(dataclasses.replace(checkin_config, max_file_bytes=100), TOKEN, MemoryGistIndex())
    files = {"main.py": "print('hi')\n", "pkg/__init__.py": "", "logo.png": "\x89PNG\r\n\x1a\n\x00\x00",
             "big.txt": "x" * 101, "../../etc/passwd": "root:x:0:0\n", "/abs.py": "a = 1\n"}

    result = await publisher.publish(publication(files))

    (gist,) = github.gists.values()
    assert set(gist.files) == {"main.py", "README.md"}
    readme = gist.files["README.md"]
    assert "`pkg/__init__.py`: empty" in readme
    assert "`logo.png`: binary" in readme
    assert "`big.txt`: too large to publish (101 bytes, the limit is 100)" in readme
    assert "`../../etc/passwd`: file path '../../etc/passwd' must be relative and stay inside the project" in readme
    assert "`/abs.py`: file path '/abs.py' must be relative" in readme
    assert "5 files left out" in result.note


async def test_a_failing_run_is_marked_in_the_description_and_readme(
    github: FakeGitHub, publisher: GistPublisher
) -> None:
    await publisher.publish(publication(status=RunStatus.FAILED, report=FAILING))

    (gist,) = github.gists.values()
    assert gist.description == "[FAILING TESTS] Write a function that adds two numbers (1 passed, 2 failed)"
    assert gist.files["README.md"].startswith("> **Status: FAILING TESTS** (1 passed, 2 failed)")


async def test_an_empty_readme_is_replaced_by_a_generated_one(github: FakeGitHub, publisher: GistPublisher) -> None:
    await publisher.publish(publication(readme="  ", status=RunStatus.FAILED, report=FAILING))

    readme = next(iter(github.gists.values())).files["README.md"]
    assert "# Write a function that adds two numbers" in readme
    assert "## Test result" in readme
    assert "Run status: failed; 1 passed, 2 failed." in readme
    assert "FAILED test_adder.py::test_big - assert 3 == 4" in readme


async def test_github_enterprise_api_prefix() -> None:
    async with FakeGitHub(token=TOKEN, prefix="/api/v3") as ghe:
        config = CheckinConfig(github_api_url=ghe.url, write_interval_s=0)
        publisher = GistPublisher(config, TOKEN, MemoryGistIndex())

        await publisher.publish(publication())
        await publisher.publish(publication(task="follow-up"))

    assert ghe.url.endswith("/api/v3")
    assert [method for method, _ in ghe.calls()] == ["POST", "GET", "PATCH"]
    assert len(ghe.gists) == 1


class ForgetfulIndex(MemoryGistIndex):
    async def remember(self, conversation_key: str, gist_id: str) -> None:
        raise OSError("database is locked")


async def test_a_store_that_cannot_remember_does_not_fail_the_check_in(
    github: FakeGitHub, checkin_config: CheckinConfig
) -> None:
    result = await GistPublisher(checkin_config, TOKEN, ForgetfulIndex()).publish(publication())

    assert result.kind == "gist"
    assert len(github.gists) == 1


async def test_the_title_never_doubles_its_punctuation(github: FakeGitHub, publisher: GistPublisher) -> None:
    for number, task in enumerate(["Split on hyphens.", "Split on hyphens!", "Split on hyphens:", "Split on hyphens ..."]):
        await publisher.publish(publication(task=task, conversation_key=f"slack:C{number}:1", run_id=f"run-{number}"))
    assert {gist.description for gist in github.gists.values()} == {"Split on hyphens: passed (1 passed, 0 failed)"}


async def test_a_generated_readme_shows_long_failing_output_on_whole_lines_failures_first(
        github: FakeGitHub, publisher: GistPublisher) -> None:
    passing = [f"test_adder.py::test_case_{i} PASSED   [{i % 100:3d}%]" for i in range(400)]
    failing = "\n".join([*passing[:200], "FAILED test_adder.py::test_big - assert 3 == 4", *passing[200:],
                         "1 failed, 400 passed in 0.5s"])
    report = dataclasses.replace(FAILING, stdout=failing, stderr="")
    await publisher.publish(publication(readme="", status=RunStatus.FAILED, report=report))

    readme = next(iter(github.gists.values())).files["README.md"]
    output = readme.split("```")[-2].strip().splitlines()
    assert output[0] == "FAILED test_adder.py::test_big - assert 3 == 4" and output[-1] == "1 failed, 400 passed in 0.5s"
    assert output[1].startswith("[… 400 more lines not shown") and len(output) == 3
