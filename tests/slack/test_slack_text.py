"""Markdown from the models as Slack shows it; the live view; code blocks swapped for file notes."""

from __future__ import annotations

import re

from adapters.slack_text import live_view, pieces, to_mrkdwn, without_blocks


def test_markdown_becomes_mrkdwn_outside_code_only():
    text = "# Plan\n**Bold** and [docs](https://x.test/a?b=1&c=2) for a < b\n```python path=a.py\nx = a ** 2 < 3\n```"
    assert to_mrkdwn(text) == (
        "*Plan*\n*Bold* and <https://x.test/a?b=1&c=2|docs> for a &lt; b\n```\nx = a ** 2 &lt; 3\n```"
    )


def test_slack_control_characters_are_escaped():
    assert to_mrkdwn("<!channel> & <@U123>") == "&lt;!channel&gt; &amp; &lt;@U123&gt;"


def test_the_live_view_shows_the_newest_text_with_its_code_block_closed():
    text = "intro\n```python\n" + "".join(f"line {i}\n" for i in range(500))
    view = live_view(text, 400)
    assert len(view) <= 400 and view.startswith("…\n```") and view.rstrip().endswith("```")
    assert "line 499" in view


def test_pieces_fit_and_stay_balanced():
    text = "```python\n" + "x = 1\n" * 2000 + "```\n"
    parts = pieces(text, 500)
    assert all(len(p) <= 500 and len(re.findall(r"^```", p, re.M)) % 2 == 0 for p in parts)


def test_a_block_whose_file_is_uploaded_becomes_a_note():
    code = "print('hi')\n" * 3
    text = f"Here:\n```python path=app.py\n{code}```\nand a small one:\n```python path=b.py\nb = 1\n```\n"
    result = without_blocks(text, {"app.py": code})
    assert "print('hi')" not in result and "_`app.py` (3 lines) is attached below as a file._" in result
    assert "b = 1" in result
