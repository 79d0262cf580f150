"""What the bot reads in a comment, and what it writes: a request only where the bot is mentioned outside a
quotation, and the model's words shown without pinging anyone or rendering HTML."""

from __future__ import annotations

import dataclasses
import html
import re

import aiohttp
import pytest
from github import Auth

from adapters.github.api import PullRequestApi
from adapters.github.events import MARKER, request_in
from adapters.github.handlers import GitHubBot
from adapters.github.markup import GitHubMarkup
from bot.config.sections import ConfigError
from tests.github.conftest import AUTHOR, PR, REPO
from tests.repos.conftest import TOKEN


def test_a_request_is_the_comment_without_the_mention_and_quotes_ask_nothing():
    assert request_in("@codegen-chat add retries", "codegen-chat") == "add retries"
    assert request_in("Could you, @Codegen-Chat, add retries?", "codegen-chat") == "Could you, , add retries?"
    assert request_in("> @codegen-chat add retries\n\nI agree with this.", "codegen-chat") is None
    assert request_in("ping @codegen-chatty or mail me@codegen-chat", "codegen-chat") is None
    assert request_in(f"@codegen-chat add retries\n{MARKER}", "codegen-chat") is None
    assert request_in("no mention here", "codegen-chat") is None


def test_the_models_words_ping_nobody_and_render_no_html_outside_code():
    shown = GitHubMarkup().text("Thanks @alice and @codegen-chat <img src=https://evil.example/x> `a <b> @c`\n"
                                "```html\n<div>@team</div>\n```")
    assert "@alice" not in shown and "@codegen-chat" not in shown and "<img" not in shown
    assert "`a <b> @c`" in shown and "```html\n<div>@team</div>\n```" in shown  # code is shown as written
    mail = GitHubMarkup().text("mail dev@example.com, or (@bob)")
    assert "mail dev@example.com, or (@" in mail and "@bob" not in mail  # an address is left alone, a mention broken


def github_mentions(shown: str) -> list[str]:
    """Whom GitHub would notify in ``shown``, read as GitHub reads it: entities decoded, then ``@name`` or
    ``@org/team`` after the start or any character that is not a letter, digit or underscore."""
    return re.findall(r"(?:^|\W)@([a-z0-9][a-z0-9-]*(?:/[a-z0-9][a-z0-9_-]*)?)", html.unescape(shown), re.I | re.M)


@pytest.mark.parametrize("written", ["cc -@octocat", "see x.@octocat", "a/@acme/security", "@@octocat",
                                     "&#64;octocat", "&commat;acme/security", "&#x40;octocat", "&amp;#64;octocat",
                                     "https://@octocat"])
def test_no_spelling_of_a_mention_in_the_models_words_pings_anyone(written):
    assert github_mentions(GitHubMarkup().text(f"Thanks {written}, see you")) == []


@pytest.mark.parametrize("written", ["![tests passing](https://img.shields.io/badge/tests-passing-green)",
                                     "![ci][badge]\n\n[badge]: https://evil.example/pixel.png",
                                     "\\\\![tests passing](https://evil.example/badge.svg)"])  # an escaped backslash first
def test_an_image_in_the_models_words_is_shown_as_its_link_not_fetched(written):
    shown = GitHubMarkup().text(written)
    assert "![" not in shown and "https://" in shown  # Markdown reads no image (an entity starts none); the link stays


def test_a_web_address_with_an_at_sign_is_left_as_written():
    assert GitHubMarkup().text("See https://medium.com/@octocat/post") == "See https://medium.com/@octocat/post"


async def test_the_webhook_port_answers_the_health_probes(github_config, start_bot):
    bot = await start_bot(github_config)
    async with aiohttp.ClientSession() as session, session.get(bot.url.replace("/github/webhook", "/healthz")) as got:
        assert got.status == 200 and (await got.json())["alive"] is True


async def test_serving_without_the_webhook_secret_fails_at_start_with_a_sentence(github_config, start_bot,
                                                                                  github_secrets):
    with pytest.raises(ConfigError, match="GITHUB_WEBHOOK_SECRET is not set"):
        await start_bot(github_config, dataclasses.replace(github_secrets, github_webhook_secret=""))


async def test_the_pull_requests_thread_found_again_edits_a_status_that_went_into_a_review_thread(
        github_config, start_bot, github, pull_request):


    bot = GitHubBot((await start_bot(github_config)).service, github_config,
                    PullRequestApi(github_config.checkin, Auth.Token(TOKEN)))
    root = github.add_review_comment(REPO, PR, AUTHOR, "Retry here.", path="billing/client.py")
    status = await bot.thread(f"{REPO}#{PR}", root.id).post("⏳ Working", stop="run1")
    await bot.thread(f"{REPO}#{PR}").edit(status, "⏹️ Interrupted")  # as after a restart: by the key alone
    (reply,) = [c for c in github.thread_of(root.id) if c.id != root.id]
    assert reply.body.startswith("⏹️ Interrupted") and reply.edits == 1
    assert not github.conversation(REPO, PR)


async def test_a_files_comment_someone_deleted_is_posted_again_with_the_newest_files(
        github_config, start_bot, github, pull_request):
    bot = GitHubBot((await start_bot(github_config)).service, github_config,
                    PullRequestApi(github_config.checkin, Auth.Token(TOKEN)))
    thread = bot.thread(f"{REPO}#{PR}")
    await thread.upload({"client.py": "v1"}, "📎 Files")
    (first,) = github.conversation(REPO, PR)
    github.issue_comments.remove(first)  # someone deleted it
    link = await thread.upload({"client.py": "v2"}, "📎 Files")
    (again,) = github.conversation(REPO, PR)
    assert again.id != first.id and "v2" in again.body and link == again.json(github)["html_url"]
