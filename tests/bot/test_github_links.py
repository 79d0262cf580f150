"""GitHub links in a thread: which are read (an allowed repository's pull request, commit or file), and how."""

from __future__ import annotations

import pytest

from bot.config.sections import InputConfig
from bot.runs.github_links import Link, LinkReader, RepositoryPatterns, github_links
from tests.fakes.github_server import FakeGitHub, StoredPull

TOKEN = "ghp_links0123456789"


def test_pull_requests_commits_and_files_are_found_once_each_in_order():
    texts = ["see https://github.com/acme/shop/pull/7/files and https://github.com/acme/shop/pull/7",
             "<https://github.com/acme/shop/commit/abc1234def|the fix> https://github.com/acme/shop/blob/main/src/app.py",
             "not these: https://gitlab.com/acme/shop/pull/1 https://github.com/acme/shop/issues/3"]
    assert github_links(texts) == [Link("pull", "acme/shop", "7"), Link("commit", "acme/shop", "abc1234def"),
                                   Link("file", "acme/shop", "main", "src/app.py")]


@pytest.mark.parametrize("repository, allowed", [
    ("acme/shop", True), ("ACME/Shop", True), ("acme/other", False), ("tools/lint", True), ("evil/tools", False),
])
def test_the_allow_list_names_repositories_or_all_of_an_owners(repository, allowed):
    assert RepositoryPatterns(("acme/shop", "tools/*")).allows(repository) is allowed


async def test_a_commit_and_a_file_are_read_and_the_diff_is_cut_at_its_bound():
    async with FakeGitHub(token=TOKEN, prefix="/api/v3") as github:
        github.commits[("acme/shop", "abc1234def" + "0" * 30)] = ("Fix the 404", {"main.py": "@@ -1 +1 @@\n" + "+x\n" * 50})
        github.contents[("acme/shop", "main", "src/app.py")] = "print('hi')\n"
        github.pulls[("acme/shop", 2)] = StoredPull(2, "t", "b")
        host = github.url.removesuffix("/api/v3")
        reader = LinkReader(InputConfig(link_repositories=("acme/shop",), max_link_diff_chars=60), github.url, TOKEN)
        linked = await reader.read([f"{host}/acme/shop/commit/abc1234def {host}/acme/shop/blob/main/src/app.py "
                                    f"{host}/acme/shop/pull/404 {host}/acme/secret/pull/2"])
    assert [f.name for f in linked.files] == ["src/app.py"] and linked.files[0].content == "print('hi')\n"
    (commit,) = linked.messages
    assert commit.author == "GitHub commit acme/shop@abc1234def" and "Fix the 404" in commit.text
    assert "[the rest of the diff is cut: [input] max_link_diff_chars = 60]" in commit.text
    assert linked.notes == ("acme/shop#404 could not be read from GitHub (HTTP 404).",)
    assert not any("secret" in path for _, path in github.calls())


async def test_without_a_token_no_link_is_fetched_and_the_note_says_why():
    reader = LinkReader(InputConfig(link_repositories=("acme/*",)), "https://api.github.com", "")
    linked = await reader.read(["https://github.com/acme/shop/pull/1"])
    assert linked.notes == ("GitHub links in the thread were not read: GITHUB_TOKEN is not set.",) and not linked.messages


async def test_a_github_that_does_not_answer_costs_a_note_not_the_run():
    async with FakeGitHub(token=TOKEN, prefix="/api/v3") as github:
        host = github.url.removesuffix("/api/v3")
        url = github.url
    reader = LinkReader(InputConfig(link_repositories=("acme/*",)), url, TOKEN)  # the server is gone now
    linked = await reader.read([f"{host}/acme/shop/pull/1"])
    assert len(linked.notes) == 1 and linked.notes[0].startswith("acme/shop#1 could not be read from GitHub (")


async def test_a_linked_file_too_large_or_not_text_is_left_out_with_a_note_as_a_shared_file_is():
    async with FakeGitHub(token=TOKEN, prefix="/api/v3") as github:
        github.contents[("acme/shop", "main", "package-lock.json")] = '{"lockfileVersion": 3}\n' * 50
        github.contents[("acme/shop", "main", "logo.png")] = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
        github.contents[("acme/shop", "main", "src/app.py")] = "print('hi')\n"
        host = github.url.removesuffix("/api/v3")
        reader = LinkReader(InputConfig(link_repositories=("acme/shop",), max_attachment_bytes=200), github.url, TOKEN)
        linked = await reader.read([f"{host}/acme/shop/blob/main/package-lock.json {host}/acme/shop/blob/main/logo.png "
                                    f"{host}/acme/shop/blob/main/src/app.py"])
    assert [f.name for f in linked.files] == ["src/app.py"]
    assert len(linked.notes) == 2
    assert "package-lock.json" in linked.notes[0] and "limited to 200 bytes" in linked.notes[0]
    assert "logo.png" in linked.notes[1] and "only text files" in linked.notes[1]


async def test_a_linked_pull_requests_description_and_review_comments_are_cut_at_the_thread_bound():
    async with FakeGitHub(token=TOKEN, prefix="/api/v3") as github:
        github.pulls[("acme/shop", 7)] = StoredPull(
            7, "Release notes", "- a change worth a line\n" * 400, files={"main.py": "@@ -1 +1 @@\n+x = 1"},
            comments=[("carol", "main.py", "a long review remark " * 20)] * 50)
        host = github.url.removesuffix("/api/v3")
        reader = LinkReader(InputConfig(link_repositories=("acme/shop",), thread_chars=1000), github.url, TOKEN)
        (pull,) = (await reader.read([f"{host}/acme/shop/pull/7"])).messages
    assert len(pull.text) < 2 * 1000 + 500  # the description and the comments within the bound each, and the diff
    assert "+x = 1" in pull.text and "carol on main.py" in pull.text
    assert pull.text.count("[the rest is cut: [input] thread_chars = 1,000]") == 2
