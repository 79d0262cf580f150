"""Fenced code blocks: one reading for every place that finds, splits, shows or attaches code."""

from __future__ import annotations

import pytest

from agents.fences import ZERO_WIDTH_SPACE, Block, Fence, inert, info_path, segments


def blocks(text: str) -> list[Block]:
    return [s for s in segments(text) if isinstance(s, Block)]


@pytest.mark.parametrize("text", [
    "prose only\nno code\n",
    "intro\n```python path=a.py\nx = 1\n```\noutro",
    "~~~\n```\nnot a close\n```\n~~~\n",
    "````md\n```python\ninner\n```\n````\nafter\n",
    "```\nunterminated at the end",
    "   ```js\nindented three\n   ```\n",
    "",
    "\ufeff```python path=a.py\nx = 1\n```\n",
])
def test_segments_give_the_text_back_whole(text):
    assert "".join(s if isinstance(s, str) else s.source for s in segments(text)) == text


def test_a_longer_fence_holds_shorter_ones_and_tildes_hold_backticks():
    [outer] = blocks("````md\n```python\ninner\n```\n````\n")
    assert outer.body == "```python\ninner\n```\n" and outer.closed
    [tilde] = blocks("~~~\n```\nx\n```\n~~~\n")
    assert tilde.body == "```\nx\n```\n" and tilde.fence.marker == "~~~"


def test_a_closing_line_needs_the_same_character_at_least_as_long_and_no_info():
    [block] = blocks("````\na\n```\nb\n~~~~\nc\n```` trailing\nd\n`````\n")
    assert block.body == "a\n```\nb\n~~~~\nc\n```` trailing\nd\n"


def test_an_unterminated_block_runs_to_the_end():
    [block] = blocks("text\n```rust\nfn main() {}\n")
    assert not block.closed and block.body == "fn main() {}\n" and block.line_count == 1


@pytest.mark.parametrize("text, body", [
    ("1. Code:\n   ```python\n   def f():\n       return 1\n   ```\n", "def f():\n    return 1\n"),
    ("- a.py:\n  ```python\n  def f():\n      return 1\n  ```\n", "def f():\n    return 1\n"),
    ("\t```python\n\tdef f():\n\t    return 1\n\t```\n", "def f():\n    return 1\n"),
    ("  ```\n\tx\n y\nz\n  ```\n", "  x\ny\nz\n"),
])
def test_an_indented_fence_takes_its_own_indentation_off_each_line_of_its_body(text, body):
    [block] = blocks(text)
    assert block.body == body
    assert "".join(s if isinstance(s, str) else s.source for s in segments(text)) == text


def test_a_byte_order_mark_before_a_fence_leaves_it_a_fence():
    [block] = blocks("\ufeff```python path=a.py\nx = 1\n\ufeff```\nafter\n")
    assert block.closed and block.body == "x = 1\n" and block.fence.path == "a.py"


def test_four_spaces_of_indent_is_no_fence_and_backticks_in_a_backtick_info_string_are_inline_code():
    assert blocks("    ```\n    code\n    ```\n") == []
    assert blocks("```a ` b```\ntext\n") == []


@pytest.mark.parametrize("info, path", [
    ("python path=src/app.py", "src/app.py"),
    ('rust title="src/lib.rs"', "src/lib.rs"),
    ("go main.go", "main.go"),
    ("js:index.js", "index.js"),
    ("make Makefile", "Makefile"),
    ("python", ""),
    ("", ""),
])
def test_the_path_an_info_string_names(info, path):
    assert info_path(info) == path
    assert Fence.parse(f"```{info}").path == path


@pytest.mark.parametrize("info, language", [("python path=a.py", "python"), ("js:index.js", "js"), ("", ""),
                                            ("path=a.py", "")])
def test_the_language_is_the_first_word(info, language):
    assert Fence.parse(f"~~~{info}").language == language


@pytest.mark.parametrize("hostile", [
    "```",  # a bare close
    "E   assert '```' == x",  # mid-line: chat platforms close a block here too
    "``````python",  # a long run: stays a run after one break
    "  ~~~~",  # a tilde fence, indented
    "\t```js\nmore\n```",
    "\ufeff~~~\n\ufeff```",  # behind a byte-order mark
])
def test_inert_text_neither_opens_nor_closes_a_block_and_reads_the_same(hostile):
    wrapped = f"```\n{inert(hostile)}\n```\nafter\n"
    [block] = blocks(wrapped)
    assert block.closed and block.body == inert(hostile) + "\n"  # the block ends where we closed it
    assert "```" not in inert(hostile) and "~~~" not in inert(hostile)
    assert inert(hostile).replace(ZERO_WIDTH_SPACE, "") == hostile


def test_inert_leaves_ordinary_text_alone():
    text = "FAILED test_a.py::test_x - assert 1 == 2\n`inline` and ``two``\n~~ strike ~~"
    assert inert(text) == text
