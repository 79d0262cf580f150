"""Every platform's markup shows a character that reorders text (a bidi override or isolate) escaped, wherever it
comes from: a file name of a repository, a model's code, a test's output. Text written right to left keeps its
marks."""

from __future__ import annotations

import pytest

from adapters.discord.thread import DiscordMarkup
from adapters.github.markup import GitHubMarkup
from adapters.slack.markup import SlackMarkup
from adapters.web.platform import WebMarkup
from bot.repos.github_markdown import quiet

NAME = "invoice\u202eyp.exe"  # shown by a browser as "invoiceexe.py"
CODE = 'access = "user\u2067 # admin\u2069"'
HEBREW = "\u05e9\u05dc\u05d5\u05dd\u200f!"  # a right-to-left word and its mark


@pytest.mark.parametrize("markup", [SlackMarkup(), DiscordMarkup(), GitHubMarkup(), WebMarkup()],
                         ids=["slack", "discord", "github", "web"])
def test_a_reordering_character_is_shown_escaped_in_prose_and_code(markup):
    shown = markup.text(f"Wrote `{NAME}` for {HEBREW}\n\n```python\n{CODE}\n```\n")
    assert not {"\u202e", "\u2067", "\u2069"} & set(shown), shown
    assert "invoice\\u202eyp.exe" in shown and "\\u2067" in shown and "\\u2069" in shown
    assert HEBREW in shown


def test_a_pull_request_s_description_shows_them_escaped_too():
    assert quiet(f"Changed {NAME}") == "Changed invoice\\u202eyp.exe"


def test_the_web_chat_s_panel_shows_a_file_s_name_and_code_escaped_and_its_secrets_masked():
    from adapters.web.panel import build_panel
    from agents.types import FileSet, Usage
    from bot.store.records import RunRecord, RunSummary

    summary = RunSummary("r1", f"fix {NAME}", "passed", "", 0.0, 1.0, Usage(), 0.0, "web", "t1", None)
    record = RunRecord(summary, [], [], FileSet({NAME: f"{CODE}\nKEY = 'sk-secret'\n"}), FileSet(), None, "", "python")
    panel = build_panel("web:t1", [record], lambda text: text.replace("sk-secret", "[masked]"))
    (shown,) = panel["files"]
    assert shown["name"] == "invoice\\u202eyp.exe" and panel["runs"][0]["task"] == "fix invoice\\u202eyp.exe"
    assert "\\u2067" in shown["content"] and "\u2067" not in shown["content"] and "[masked]" in shown["content"]
