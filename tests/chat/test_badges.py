"""The Check-In's two lines in the thread: the README's title and whole sentences of its first paragraph."""

import pytest

from bot.chat.badges import SUMMARY_LINE_CHARS, readme_summary


@pytest.mark.parametrize(("readme", "shown"), [
    # a paragraph wrapped over lines, as most READMEs are: read as one, not cut at the line's end
    ("# slugify\n\nTurns any title into a URL slug: lower case,\nwords joined by hyphens. Accents are dropped.\n",
     "slugify\nTurns any title into a URL slug: lower case, words joined by hyphens. Accents are dropped."),
    # the sentences that fit, whole; the next one left out rather than cut
    ("# p\n\n" + "A first sentence that is long enough to matter here. " * 4 + "A last one.",
     "p\n" + " ".join(["A first sentence that is long enough to matter here."] * 3)),
    # fenced code, a badge line and a table are not prose
    ("# tool\n\n```bash\npip install tool\n```\n\n| a | b |\n\nIt does the thing (v1.2, e.g. fast). Really.\n",
     "tool\nIt does the thing (v1.2, e.g. fast). Really."),
    ("Title without a heading mark\nFirst line of prose? Yes.\n", "Title without a heading mark\nFirst line of prose? Yes."),
    ("", ""),
    ("# only a title\n", "only a title"),
])
def test_the_check_in_line_shows_whole_sentences(readme, shown):
    assert readme_summary(readme) == shown


def test_a_first_sentence_longer_than_the_line_is_cut_at_a_word():
    sentence = " ".join(f"word{i}" for i in range(80)) + "."
    _, prose = readme_summary(f"# t\n\n{sentence} Next.").split("\n")
    assert len(prose) <= SUMMARY_LINE_CHARS and prose.endswith("…")
    assert prose[:-1] in sentence and sentence[len(prose) - 1] == " "  # the cut falls between words
