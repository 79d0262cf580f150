"""The one rule for long code in chat: over the platform's limit, a block becomes an attached file."""

from __future__ import annotations

import pytest

from agents.language import BUILT_IN, Language
from bot.chat.long_code import inline_or_attach


def test_short_code_stays_inline_and_long_code_becomes_the_turns_own_file():
    long_body = "x = 1\n" * 300
    text = f"Intro\n```python path=a.py\nprint(1)\n```\n```python path=pkg/big.py\n{long_body}```\nOutro\n"
    result = inline_or_attach(text, 100, {"a.py": "print(1)\n", "pkg/big.py": long_body})
    assert result.text == "Intro\n```python path=a.py\nprint(1)\n```\n📎 `pkg/big.py` (300 lines) is attached below.\nOutro\n"
    assert result.files == {"pkg__big.py": long_body}


def test_a_block_that_opens_with_a_file_marker_still_attaches_the_whole_file():
    code = "print('hi')\n" * 30
    text = f"Here:\n```python path=app.py\n# file: app.py\n{code}```\nand a small one:\n```python path=b.py\nb = 1\n```\n"
    result = inline_or_attach(text, 100, {"app.py": code, "b.py": "b = 1\n"})
    assert "print('hi')" not in result.text and "📎 `app.py` (31 lines) is attached below." in result.text
    assert result.files == {"app.py": code} and "b = 1" in result.text


def test_a_long_block_without_a_path_is_attached_as_a_snippet_and_tildes_count_as_fences():
    text = "~~~rust\n" + "let x = 1;\n" * 50 + "~~~\n```\nunterminated " + "y" * 200
    result = inline_or_attach(text, 100)
    assert list(result.files) == ["snippet-1.rs", "snippet-2.txt"]
    assert result.files["snippet-2.txt"].startswith("unterminated") and "📎 `snippet-1.rs` (50 lines)" in result.text


def test_two_blocks_whose_flat_names_meet_get_distinct_names():
    body = "v = 1\n" * 40
    text = f"```python path=a/b.py\n{body}```\n```python path=a__b.py\n{body}```\n"
    assert list(inline_or_attach(text, 10).files) == ["a__b.py", "a__b-2.py"]


@pytest.mark.parametrize("language, name", [("py", "snippet-1.py"), ("shell", "snippet-1.sh"), ("c++", "snippet-1.cpp"),
                                            ("json", "snippet-1.json"), ("brainfuck", "snippet-1.txt")])
def test_a_snippets_extension_follows_its_language(language, name):
    result = inline_or_attach(f"```{language}\n" + "x\n" * 200 + "```\n", 100)
    assert list(result.files) == [name]


def test_a_snippet_in_a_language_the_config_adds_gets_that_languages_extension():
    with_lua = BUILT_IN.laid_over([Language(name="lua", extensions=(".lua",), aliases=("luajit",))])
    for word in ("lua", "luajit"):
        result = inline_or_attach(f"```{word}\n" + "x\n" * 200 + "```\n", 100, languages=with_lua)
        assert list(result.files) == ["snippet-1.lua"]


def test_nothing_changes_when_every_block_fits():
    text = "a\n```python path=a.py\nx = 1\n```\n"
    assert inline_or_attach(text, 1000).text == text and inline_or_attach(text, 1000).files == {}
