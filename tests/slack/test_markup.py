"""Markdown from the models as Slack shows it."""

from __future__ import annotations

import re

from adapters.slack.markup import to_mrkdwn


def test_markdown_becomes_mrkdwn_outside_code_only():
    text = "# Plan\n**Bold** and [docs](https://x.test/a?b=1&c=2) for a < b\n```python path=a.py\nx = a ** 2 < 3\n```"
    assert to_mrkdwn(text) == (
        "*Plan*\n*Bold* and <https://x.test/a?b=1&c=2|docs> for a &lt; b\n```\nx = a ** 2 &lt; 3\n```"
    )


def test_slack_control_characters_are_escaped():
    assert to_mrkdwn("<!channel> & <@U123>") == "&lt;!channel&gt; &amp; &lt;@U123&gt;"


def test_a_tilde_block_holding_backtick_fences_stays_one_slack_block():
    shown = to_mrkdwn("~~~markdown\n```python\nx = 1\n```\n~~~\nafter **this**")
    assert len(re.findall(r"```", shown)) == 2 and shown.endswith("```\nafter *this*")
    assert "x = 1" in shown


def test_an_unterminated_block_is_closed_for_slack():
    assert to_mrkdwn("intro\n```python path=a.py\nx = 1\n") == "intro\n```\nx = 1\n```"
