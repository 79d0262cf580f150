"""Links whose text reads like another address show where they go, in every platform's thread."""

from __future__ import annotations

import pytest

from adapters.discord.thread import DiscordMarkup
from adapters.slack.markup import SlackMarkup
from adapters.web.platform import WebMarkup
from bot.chat.links import unmasked
from bot.chat.renderer import RunRenderer
from bot.chat.thread import ChatPlatform
from bot.safety.redact import Redactor
from tests.chat.test_renderer import finished, turn
from tests.fakes.chat_thread import RecordingThread, platform


@pytest.mark.parametrize(("text", "shown"), [
    ("see [https://github.com/acme/app](https://evil.example/login)",
     "see https://github.com/acme/app (https://evil.example/login)"),
    ("[github.com](http://phish.io)", "github.com (http://phish.io)"),
    ("[www.google.com/search](https://g00gle.io/s)", "www.google.com/search (https://g00gle.io/s)"),
    ("[pypi.org/project/x](https://pypi.org.evil.io/x)", "pypi.org/project/x (https://pypi.org.evil.io/x)"),
    ("[docs: PYTHON.ORG](<https://evil.example>)", "docs: PYTHON.ORG (https://evil.example)"),
    ("[github.com](https://evil.example/a_(b))", "github.com (https://evil.example/a_(b))"),  # parentheses
    ('[github.com](https://evil.example "GitHub")', "github.com (https://evil.example)"),  # a title
    ("[github.com]( <https://evil.example/a b> 'x')", "github.com (https://evil.example/a b)"),  # <...>, spaces
    ("[github.com][1]\n\n[1]: https://evil.example", "github.com (https://evil.example)\n\n[1]: https://evil.example"),
    ("[GitHub.com][]\n[github.com]: <https://evil.example>",
     "GitHub.com (https://evil.example)\n[github.com]: <https://evil.example>"),  # collapsed, any case
    ("[pypi.org]\n\n> [pypi.org]: https://evil.example", "pypi.org (https://evil.example)\n\n> [pypi.org]: https://evil.example"),
    ("[see\ngithub.com](https://evil.example)", "see\ngithub.com (https://evil.example)"),  # text over two lines
    ("[[github.com](https://evil.example)](https://github.com)",  # a link in a link's text
     "github.com (https://evil.example) (https://github.com)"),
])
def test_a_link_whose_text_names_another_address_shows_its_target(text, shown):
    assert unmasked(text) == shown


@pytest.mark.parametrize("text", [
    "[the Gist](https://gist.github.com/abc)",  # words, not an address
    "[github.com/acme](https://github.com/acme)",  # names its own host
    "[python.org](https://docs.python.org/3/)",  # a host under the named domain
    "```markdown\n[https://github.com](https://evil.example)\n```\n",  # code is shown as written
    "no links at all [just brackets] (and parentheses)",
    "`[github.com](https://evil.example)` in a code span",
    "[github.com][nowhere] names no definition",
    "[github.com](https://evil.example with spaces)",  # not a link to any renderer: shown as written
])
def test_honest_links_and_code_are_left_as_they_are(text):
    assert unmasked(text) == text


@pytest.mark.parametrize("markup", [SlackMarkup(), DiscordMarkup(), WebMarkup()], ids=["slack", "discord", "web"])
async def test_every_platform_shows_the_real_target_of_a_deceptive_link(markup):
    text = "Docs: [https://docs.python.org/3/](https://evil.example/steal)\n"
    thread = RecordingThread()
    renderer = RunRenderer(thread, ChatPlatform("test", markup, platform().style), Redactor(()))
    await renderer.open("r1")
    for event in [*turn("planner", text), finished()]:
        await renderer(event)
    await renderer.done()
    seen = "\n".join(t for m in thread.messages for t in (m.text, *m.edits))
    assert "https://evil.example/steal" in seen
    assert "|https://docs.python.org/3/>" not in seen and "](https://evil.example/steal)" not in seen
