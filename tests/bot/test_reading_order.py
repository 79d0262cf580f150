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


async def test_files_attached_to_a_thread_keep_their_content_exact_and_show_their_names_escaped():
    # The names are read in the thread; the files are what the person downloads, byte for byte.
    from bot.chat.renderer import RunRenderer
    from bot.safety.redact import Redactor
    from tests.checkin.support import publication
    from tests.fakes.chat_thread import RecordingThread, platform

    thread = RecordingThread()
    renderer = RunRenderer(thread, platform(), Redactor(()))
    await renderer.open("run-1")
    result = await renderer.publish(publication({NAME: CODE + "\n", "test_it.py": "def test_it():\n    pass\n"}))
    assert result.kind == "attachments"
    files = {name: content for message in thread.messages for name, content in message.files.items()}
    assert "invoice\\u202eyp.exe" in files and NAME not in files
    assert files["invoice\\u202eyp.exe"] == CODE + "\n"
    comments = " ".join(message.text for message in thread.messages)
    assert "\u202e" not in comments


def test_slack_s_streamed_plan_and_thread_status_show_them_escaped():
    from adapters.slack.thread import _plain

    assert _plain(f"Testing `{NAME}`") == "Testing invoice\\u202eyp.exe"
