"""Whatever the models write, what reaches Slack pings no one and hides no link's target: every text the bot
sends (messages, edits, blocks, the streamed plan's titles and task details, thread statuses, file
comments) as the fake Slack received it."""

from __future__ import annotations

import json
import re

import pytest

from adapters.slack.markup import neutral, to_mrkdwn
from tests.conftest import with_changes
from tests.fakes import team_script as s
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import finished, mention, script_team

HOSTILE = ("<!channel> <!here> <!subteam^S0ADMINS> <@U0BOSS> <#C0SECRET> "
           "see [github.com](https://evil.example/a_(b)) and <https://evil.example|https://github.com|more>")
SENDS = ("chat.postMessage", "chat.update", "chat.startStream", "chat.appendStream", "chat.stopStream",
         "chat.postEphemeral", "assistant.threads.setStatus", "files.completeUploadExternal")
SPECIAL = re.compile(r"<[!@#][^<>]*>")


def pings(slack: FakeSlack, allowed: str) -> list[str]:
    """Every mention, broadcast or channel link in what the bot sent, but the one of ``allowed``."""
    sent = [json.dumps(call.args) for method in SENDS for call in slack.called(method)]
    return [found for text in sent for found in SPECIAL.findall(text) if found != f"<@{allowed}>"]


def hidden_targets(slack: FakeSlack) -> list[str]:
    """Slack links whose shown text names github.com while they go elsewhere."""
    sent = [json.dumps(call.args) for method in SENDS for call in slack.called(method)]
    return [found for text in sent for found in re.findall(r"<https?://(?!github\.com)[^|>]*\|[^>]*github\.com", text)]


async def test_model_text_in_turns_reviews_and_the_streamed_plan_pings_no_one(slack, model_server, slack_config,
                                                                                start_bot):
    await start_bot(slack_config)
    script_team(model_server, planner=[f"{HOSTILE}\n{s.PLAN}"], programmer=[s.CODE, s.CODE],
                optimizer=[f"{HOSTILE}\nVERDICT: CHANGES", s.APPROVE])
    message, _ = await mention(slack, "find all intf keys", user="UANN")
    thread = await finished(slack, "C1", message.ts)
    status = thread[0]
    assert "channel" in status.tasks["review-1"]["details"]  # the review's line is there, escaped
    streamed = [json.dumps(c.args) for m in ("chat.appendStream", "chat.stopStream") for c in slack.called(m)]
    assert any("review-1" in text for text in streamed) and slack.called("chat.postMessage")  # the review, streamed
    assert pings(slack, allowed="UANN") == []
    assert hidden_targets(slack) == []
    shown = "\n".join(m.text for m in thread)
    assert "&lt;!channel&gt;" in shown and "https://evil.example/a_(b)" in shown


@pytest.mark.parametrize("scopes", [("app_mentions:read", "chat:write", "channels:history", "files:write")],
                         ids=["no-agent-features"])
async def test_without_streaming_the_edited_status_and_turns_ping_no_one(model_server, slack_config, start_bot, scopes):
    async with FakeSlack(scopes=scopes) as narrow:
        await start_bot(with_changes(slack_config, slack={"api_url": narrow.api_url}), fake=narrow)
        script_team(model_server, planner=[f"{HOSTILE}\n{s.PLAN}"], optimizer=[f"{HOSTILE}\nVERDICT: APPROVE"])
        message, _ = await mention(narrow, "find all intf keys", user="UANN")
        await finished(narrow, "C1", message.ts)
        assert narrow.called("chat.update") and pings(narrow, allowed="UANN") == []


@pytest.mark.parametrize(("markdown", "target"), [
    ("[github.com](https://evil.example/a_(b))", "https://evil.example/a_(b)"),  # parentheses in the target
    ('[github.com](https://evil.example "GitHub")', "https://evil.example"),  # a title
    ("[github.com](<https://evil.example/a b>)", "https://evil.example/a%20b"),  # a <...> target
    ("[github.com][1]\n\n[1]: https://evil.example", "https://evil.example"),  # reference-style
    ("[github.com][]\n\n[github.com]: <https://evil.example>", "https://evil.example"),
    ("[docs](https://evil.example|https://github.com)", None),  # a | would start Slack's shown text
])
def test_every_spelling_of_a_link_shows_slack_its_real_target(markdown, target):
    shown = to_mrkdwn(markdown)
    assert not re.search(r"<[^>|]*\|[^>]*github\.com", shown), shown
    if target:
        assert f"(<{target}>)" in shown
    else:
        assert "%7C" in shown


def test_only_the_person_answered_may_be_mentioned():
    assert neutral("<@UANN> <@UBOB> <!channel> <https://x.test|x>", "UANN") == (
        "<@UANN> &lt;@UBOB&gt; &lt;!channel&gt; <https://x.test|x>")
    assert neutral("<@UBOB> <!here>", allowed_user=None) == "<@UBOB> &lt;!here&gt;"  # ephemeral: no one is notified


async def test_a_workspace_without_the_streaming_methods_is_asked_once(model_server, slack_config, start_bot):
    unknown = frozenset({"chat.startStream", "chat.appendStream", "chat.stopStream", "assistant.threads.setStatus"})
    async with FakeSlack(unknown=unknown) as old:
        await start_bot(with_changes(slack_config, slack={"api_url": old.api_url}), fake=old)
        for text in ("find all intf keys", "and again"):
            script_team(model_server)
            message, _ = await mention(old, text)
            thread = await finished(old, "C1", message.ts)
            assert thread[0].text.startswith("✅ *Passed*")
        assert len(old.called("chat.startStream")) == 1 and len(old.called("assistant.threads.setStatus")) == 1
