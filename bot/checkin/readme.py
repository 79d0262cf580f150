"""The words around the published files: the Gist's description and its README.

The Check-In agent writes the README; this module only makes sure a reader of the Gist alone can always
tell whether the tests passed and where each file came from, even when that README is empty or silent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from agents.excerpts import failure_excerpt
from agents.types import Publication, RunStatus, TestReport
from bot.checkin.files import Skipped

MAX_DESCRIPTION_TASK_CHARS = 120
MAX_README_OUTPUT_CHARS = 3000

# Shown in capitals in front of the task so a run that did not pass stands out in a list of Gists.
_NOT_PASSED = {
    RunStatus.FAILED: "FAILING TESTS",
    RunStatus.STOPPED: "STOPPED",
    RunStatus.ERROR: "ERROR",
    RunStatus.INTERRUPTED: "INTERRUPTED",
    RunStatus.RUNNING: "UNFINISHED",
}

_WHY = {
    RunStatus.FAILED: "the tests did not pass; this is the team's best attempt",
    RunStatus.STOPPED: ("the run stopped (a budget ran out) before the tests passed and the review approved; "
                        "this is its best attempt"),
    RunStatus.ERROR: "the run ended with an error; these are the files it had",
    RunStatus.INTERRUPTED: "the run was interrupted; these are the files it had",
    RunStatus.RUNNING: "the run had not finished when this was published",
}


def description(publication: Publication) -> str:
    """One line naming the conversation and its latest status, e.g. ``[FAILING TESTS] Parse CSV (3 passed,
    1 failed)``: the first request names it, whatever later follow-ups asked."""
    task = title(publication)
    result = f" ({publication.report.summary()})" if publication.report else ""
    label = _NOT_PASSED.get(publication.status)
    return f"[{label}] {task}{result}" if label else f"{task}: passed{result}"


def compose_readme(
    publication: Publication, renamed: Mapping[str, str] = {}, skipped: Iterable[Skipped] = ()
) -> str:
    """The agent's README (or a generated one), a status banner when not passed, and notes on the files."""
    body = publication.readme.strip() or _generated(publication)
    parts = [_banner(publication), body, _history_section(publication), _renamed_section(renamed),
             _skipped_section(skipped)]
    return "\n\n".join(p for p in parts if p) + "\n"


def _banner(publication: Publication) -> str:
    label = _NOT_PASSED.get(publication.status)
    if not label:
        return ""
    result = f" ({publication.report.summary()})" if publication.report else ""
    return f"> **Status: {label}**{result}: {_WHY[publication.status]}."


def _generated(publication: Publication) -> str:
    """A short README for when the Check-In agent gave none: the task and the test result."""
    lines = [f"# {_first_line(publication.task, MAX_DESCRIPTION_TASK_CHARS)}", "", "## Task", "",
             publication.task.strip(), "", "## Test result", "", _result_line(publication)]
    if publication.report and not publication.report.ok and publication.report.output().strip():
        lines += ["", _fenced(failure_excerpt(publication.report, MAX_README_OUTPUT_CHARS))]
    return "\n".join(lines)


def _result_line(publication: Publication) -> str:
    report: TestReport | None = publication.report
    if report is None:
        return f"Run status: {publication.status}; no tests were run."
    return f"Run status: {publication.status}; {report.summary()}."


def _renamed_section(renamed: Mapping[str, str]) -> str:
    if not renamed:
        return ""
    rows = "\n".join(f"| `{name}` | `{path}` |" for name, path in renamed.items())
    return (
        "## File names in this Gist\n\nA Gist cannot hold folders, so these files were renamed "
        "(`__` stands for `/`); put them back at their paths to run the project:\n\n"
        f"| file here | path in the project |\n| --- | --- |\n{rows}"
    )


def _skipped_section(skipped: Iterable[Skipped]) -> str:
    items = "\n".join(f"- `{s.path}`: {s.reason}" for s in skipped)
    return f"## Files not included\n\n{items}" if items else ""


def title(publication: Publication) -> str:
    """The conversation's title: the first line of its first request, without a closing full stop (the
    description goes on after it)."""
    first = publication.earlier_tasks[0] if publication.earlier_tasks else publication.task
    return _first_line(first, MAX_DESCRIPTION_TASK_CHARS).rstrip(" .:;,!?") or "(no task)"


def _history_section(publication: Publication) -> str:
    """Every request of the conversation, oldest first, when a follow-up made it more than one."""
    if not publication.earlier_tasks:
        return ""
    requests = [*publication.earlier_tasks, publication.task]
    lines = [f"{number}. {_first_line(task, MAX_DESCRIPTION_TASK_CHARS)}" for number, task in enumerate(requests, 1)]
    return "## History\n\n" + "\n".join(lines) + f"\n\nThis revision answers request {len(requests)}."


def _first_line(text: str, limit: int) -> str:
    line = next((raw.strip() for raw in text.splitlines() if raw.strip()), "(no task)")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _fenced(text: str) -> str:
    """A code block whose fence is longer than any run of backticks inside, so output cannot break out."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text.rstrip()}\n{fence}"
