"""Parsing of model replies, by what they mean. The formats are documented in ``prompts/FORMATS.md``.

The templates ask for a strict form; models, small local ones most of all, drift from it. So each
reader takes the documented form first and then what the reply says in its own words: a review with
no verdict line is read from its words (and counts as approval when they say nothing either way: the
tests decide), a triage with no decision line from its words (fixing the code when they say nothing).
Only a reply that gives nothing to work with raises ``ReplyFormatError``; the model is then shown its
own reply in the expected form once (``ReplyFormatError.example``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from agents.file_replies import FileContext, FileReply, ReplyFormatError, parse_files
from agents.paths import UnsafePath, project_path

__all__ = [
    "Action", "FileContext", "FileReply", "ReplyFormatError", "Review", "Triage", "parse_files", "parse_plan",
    "parse_readme", "parse_review", "parse_triage", "safe_path", "without_language_line",
]


def safe_path(path: str) -> str:
    """A relative, normalised path the team may write (see ``agents.paths``), or ``ReplyFormatError``."""
    try:
        return project_path(path)
    except UnsafePath as error:
        raise ReplyFormatError(str(error)) from None


# -- the review -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Review:
    approved: bool
    notes: str
    notice: str = ""  # how the verdict was read when the reply had no verdict line


_VERDICT = re.compile(r"^[\s>*_#-]*verdict[\s*_]*[:=\-][\s*_`]*(?P<word>[a-z _\-]+?)[\s*_`.!]*$", re.I | re.M)
_APPROVE = {"approve", "approved", "accept", "accepted", "lgtm", "pass", "ok", "yes", "ship it"}
_CHANGES = {"changes", "changes requested", "request changes", "reject", "rejected", "needs changes", "needs work",
            "revise", "no", "fail"}
_ECHOED_CHOICE = re.compile(r"verdict\W+approve\W+or\W+verdict\W+changes", re.I)
_NO_PROBLEM = re.compile(
    r"\b(?:no|not any|without|zero|nothing (?:to|that needs? to be)) (?:real |obvious |major |significant )?"
    r"(?:bugs?|issues?|problems?|defects?|errors?|changes?(?: are)? (?:needed|required)|fix(?:es)?)\b"
    r"|\bnothing to (?:fix|change)\b|\bno need to\b|\bdoes not need\b|\bdoesn't need\b", re.I)
_APPROVE_WORDS = re.compile(
    r"\b(?:approve[ds]?|lgtm|looks? (?:good|correct|fine|great|solid)|is correct|are correct|works (?:correctly|as expected)"
    r"|correctly (?:handles|implements|returns)|well[- ]written|ship it|ready to (?:merge|ship)"
    r"|no (?:bugs?|issues?|problems?))\b", re.I)
_CHANGE_WORDS = re.compile(
    r"\b(?:bugs?|incorrect(?:ly)?|wrong|broken|crash(?:es)?|fails? to|missing|must|should (?:be )?(?:fix|chang|handl|us|add|"
    r"check|return|rais|validat|replac|remov)\w*|needs? to|does(?:n't| not) (?:handle|work|return|check)|not handled"
    r"|off[- ]by[- ]one|vulnerab\w*|request(?:ing)? changes|changes (?:are )?(?:needed|required))\b", re.I)


def parse_review(text: str, after_inferred_changes: bool = False) -> Review:
    """The Optimizer's verdict: its ``VERDICT:`` line, else its words, else approval (the tests decide).

    ``after_inferred_changes``: the previous review was also read as changes from its words; a second one
    is taken as approval, so a reviewer that never says a verdict cannot keep the code from its tests."""
    cleaned = _ECHOED_CHOICE.sub("", text)  # a reply that repeats the instruction's two choices chose neither
    matches = list(_VERDICT.finditer(cleaned))
    notes = _VERDICT.sub("", cleaned).strip()
    if matches:
        word = re.sub(r"[\s_\-]+", " ", matches[-1].group("word").strip().lower())
        if word in _APPROVE:
            return Review(True, notes)
        if word in _CHANGES and not notes:  # nothing named to change: the Programmer could only guess
            return Review(True, "", "The review asked for changes without naming any; the code goes on to its "
                                    "tests, which decide.")
        if word in _CHANGES:
            return Review(False, notes)
    approve, changes = _approval_words(notes)
    if changes > approve and not after_inferred_changes:
        return Review(False, notes, "The review had no verdict line; its words ask for changes.")
    if approve and approve >= changes:
        return Review(True, notes, "The review had no verdict line; its words approve the code.")
    return Review(True, notes, "The review gave no verdict; the code goes on to its tests, which decide.")


def _approval_words(text: str) -> tuple[int, int]:
    """How many phrases approve, and how many ask for changes ("no bugs" approves, it does not ask)."""
    approve = len(_APPROVE_WORDS.findall(text)) + len(_NO_PROBLEM.findall(text))
    changes = len(_CHANGE_WORDS.findall(_NO_PROBLEM.sub(" ", text)))
    return approve, changes


# -- the triage -----------------------------------------------------------------------------------


class Action(StrEnum):
    FIX_CODE = "fix_code"
    FIX_TESTS = "fix_tests"
    REPLAN = "replan"


@dataclass(frozen=True)
class Triage:
    action: Action
    reason: str
    notice: str = ""  # how the decision was read when the reply had no decision line
    written: bool = False  # by the Manager's model, from the failing output (not one of the workflow's sentences)


_DECISION = re.compile(r"^[\s>*_#-]*decision[\s*_]*[:=\-][\s*_`]*(?P<word>[a-z _\-]+?)[\s*_`.!]*$", re.I | re.M)
_ACTIONS = {
    Action.FIX_CODE: {"fix code", "code", "fix the code", "programmer"},
    Action.FIX_TESTS: {"fix tests", "fix test", "tests", "test", "fix the tests", "fix the test", "tester"},
    Action.REPLAN: {"replan", "re plan", "plan", "planner", "new plan"},
}
_TESTS_WRONG = re.compile(
    r"\b(?:fix(?:ing)? (?:the |a |this |that )?tests?|tests? (?:is|are|was|were) (?:wrong|incorrect|broken|invalid|buggy)"
    r"|(?:wrong|incorrect|bad|buggy|broken) (?:test|expectation|assertion)s?|the tester should|fix_tests"
    r"|test(?:s)? (?:expects?|assumes?) (?:the )?wrong)\b", re.I)
_REPLAN = re.compile(r"\b(?:re-?plan|new plan|different approach|start over|rethink the (?:approach|design))\b", re.I)


def parse_triage(text: str) -> Triage:
    """The Manager's decision after failing tests: its ``DECISION:`` line, else its words, else fix the code."""
    matches = list(_DECISION.finditer(text))  # the last one decides, as with the review verdict
    reason = _DECISION.sub("", text).strip()
    if matches:
        word = matches[-1].group("word").strip().lower().replace("_", " ").replace("-", " ")
        for action, words in _ACTIONS.items():
            if word in words:
                return Triage(action, reason, written=True)
    if _REPLAN.search(text) and not _TESTS_WRONG.search(text):
        return Triage(Action.REPLAN, reason, "The triage had no decision line; its words ask for a new plan.",
                      written=True)
    if _TESTS_WRONG.search(text):
        return Triage(Action.FIX_TESTS, reason, "The triage had no decision line; its words say a test is wrong.",
                      written=True)
    return Triage(Action.FIX_CODE, reason, "The triage had no decision line; the code gets fixed.", written=True)


# -- plan and README ------------------------------------------------------------------------------


_LANGUAGE = re.compile(r"^[\s>*_#-]*language[\s*_]*[:=][\s*_`]*(?P<name>[\w+#]+)", re.I | re.M)
_LANGUAGE_LINE = re.compile(r"^[\s>*_#-]*language[\s*_]*[:=][\s*_`]*[\w+#]+[^\n]*\n?", re.I | re.M)


def parse_plan(text: str) -> tuple[str, str]:
    """The Planner's plan and its ``LANGUAGE:`` line (empty when missing)."""
    plan = text.strip()
    if not plan:
        raise ReplyFormatError("the plan was empty")
    match = _LANGUAGE.search(plan)
    return plan, (match.group("name") if match else "")


def without_language_line(plan: str) -> str:
    """The plan as people read it: without the ``LANGUAGE:`` line the workflow reads."""
    return _LANGUAGE_LINE.sub("", plan)


def parse_readme(text: str) -> str:
    """The Check-In's README: the reply itself, unwrapped if the model fenced it whole."""
    body = text.strip()
    whole = re.fullmatch(r"(`{3,}|~{3,})(?:markdown|md)?\s*\n(.*)\n\1", body, re.DOTALL | re.I)
    if whole:
        body = whole.group(2).strip()
    if not body:
        raise ReplyFormatError("the README was empty")
    return body + "\n"
