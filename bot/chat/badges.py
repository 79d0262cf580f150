"""A turn as a person reads it: what the turn decided (``TurnFinished.meaning``: the verdict, the triage, the
plan's language, as the workflow read them) becomes a short badge beside the agent's name, and the Check-In's
README, already in the Gist, is told in two lines. Nothing here reads a model's reply: a turn whose reply could
not be read carries no meaning and is shown as written."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.events import Decided, Planned, Reviewed, TurnFinished
from agents.replies import Action

BADGE_NOTE_CHARS = 80  # of the first note in "asks for changes: ..."
SUMMARY_LINE_CHARS = 200
TRIAGE_BADGES = {Action.FIX_CODE: "🔧 fix the code", Action.FIX_TESTS: "🧪 fix the tests", Action.REPLAN: "🗺️ re-plan"}
_HEADING_MARKS = re.compile(r"^\s*#+\s*|\s*#+\s*$")


@dataclass(frozen=True)
class Reading:
    """What a finished turn shows: a badge for its decision (may be empty) and its prose."""

    badge: str
    text: str


def read_turn(event: TurnFinished) -> Reading:
    meaning = event.meaning
    if isinstance(meaning, Reviewed):
        badge = "✅ approves" if meaning.approved else f"✍️ asks for changes: {first_words(meaning.notes)}"
        return Reading(badge.rstrip(": "), meaning.notes)
    if isinstance(meaning, Decided):
        return Reading(TRIAGE_BADGES[meaning.action], meaning.reason)
    if isinstance(meaning, Planned):
        return Reading(f"language: {meaning.language}" if meaning.language else "", meaning.prose)
    return Reading("", event.text)


def first_words(text: str, limit: int = BADGE_NOTE_CHARS) -> str:
    """The first line of ``text`` that says something, cut at a word within ``limit`` characters."""
    line = next((_HEADING_MARKS.sub("", raw).strip(" -*") for raw in text.splitlines() if raw.strip(" -*#")), "")
    return cut_at_word(line, limit)


def cut_at_word(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, cut at a word boundary with an ellipsis when it is longer."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:.-") + "…"


def readme_summary(readme: str) -> str:
    """Two lines for the Check-In's turn: the README's title, and the whole sentences of its first paragraph of
    prose that fit (a paragraph wrapped over several lines read as one; a first sentence too long for the line is
    cut at a word, never mid-word)."""
    paragraphs = _paragraphs(readme)
    if not paragraphs:
        return ""
    (title, *under_title), rest = paragraphs[0], paragraphs[1:]
    title = _HEADING_MARKS.sub("", title)
    prose = next((" ".join(p) for p in [under_title, *rest] if p and not p[0].startswith(("#", "|", ">", "<!--"))), "")
    return "\n".join(line for line in (cut_at_word(title, SUMMARY_LINE_CHARS), _sentences(prose)) if line)


def _paragraphs(markdown: str) -> list[list[str]]:
    """Blocks of stripped lines between blank lines, headings standing alone, fenced code left out."""
    paragraphs: list[list[str]] = [[]]
    fenced = False
    for raw in markdown.splitlines():
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            fenced = not fenced
            paragraphs.append([])
        elif fenced or not line:
            if paragraphs[-1]:
                paragraphs.append([])
        elif line.startswith("#"):
            paragraphs += [[line], []]
        else:
            paragraphs[-1].append(line)
    return [p for p in paragraphs if p]


# A sentence ends at . ! or ? (with any closing quote, bracket or emphasis) before a space and a capital.
_SENTENCE_END = re.compile(r"(?<=[.!?])([\"')\]*_]*)\s+(?=[A-Z0-9\"'(\[`*_])")


def _sentences(prose: str) -> str:
    """The leading whole sentences of ``prose`` within the line's length; the first alone cut at a word."""
    shown = ""
    for end in [m.end(1) for m in _SENTENCE_END.finditer(prose)] + [len(prose)]:
        if end > SUMMARY_LINE_CHARS:
            break
        shown = prose[:end]
    return shown.rstrip() or cut_at_word(prose, SUMMARY_LINE_CHARS)
