"""The words a chat thread shows for a run: agents' names, turn headers, test results, the final summary,
and the files a thread gets when the run's files are attached there instead of to a Gist. Markdown; each
platform's markup formatter turns it into what that platform shows."""

from __future__ import annotations

from agents.events import RunFinished
from agents.types import Publication, RunStatus, TestReport
from bot.checkin.files import README_NAME, gist_layout
from bot.checkin.readme import compose_readme

AGENT_TITLES = {
    "planner": "Planner", "programmer": "Programmer", "optimizer": "Optimizer (review)",
    "tester": "Tester", "manager": "Manager (triage)", "checkin": "Check-In",
}
STATUS_WORDS = {
    RunStatus.PASSED: "Passed", RunStatus.FAILED: "Failed", RunStatus.STOPPED: "Stopped",
    RunStatus.ERROR: "Error", RunStatus.INTERRUPTED: "Interrupted", RunStatus.RUNNING: "Running",
}
MAX_ATTACHED_FILE_BYTES = 8 * 1024 * 1024  # under Discord's upload limit; a larger file is left out with a note


def agent_title(agent: str) -> str:
    return AGENT_TITLES.get(agent, agent.title())


def turn_header(agent: str, round_: int) -> str:
    """The first line of a turn's message. Round 0 is the planning before the first round of code."""
    return f"**{agent_title(agent)}**" + (f" · round {round_}" if round_ else "")


def report_line(report: TestReport) -> str:
    return f"Tests: {report.summary()} ({report.duration_s:.1f}s)"


def final_summary(event: RunFinished) -> str:
    """The last message of a run: status, why, the test result, tokens and cost, where the result is."""
    reason = event.reason.rstrip(".")  # some reasons are whole sentences already; one full stop either way
    lines = [f"{STATUS_WORDS.get(event.status, event.status)}: {reason}."]
    if event.report:
        lines.append(report_line(event.report))
    usage = f"Tokens: {event.usage.prompt_tokens:,} in / {event.usage.completion_tokens:,} out"
    lines.append(usage + (f" (about ${event.usage.cost_usd:.4f})" if event.usage.cost_usd else ""))
    if event.checkin:
        lines.append(f"Result: {event.checkin.location}" + (f" ({event.checkin.note})" if event.checkin.note else ""))
    return "\n".join(lines)


def attached_files(publication: Publication) -> dict[str, str]:
    """What a chat fallback attaches to the thread, by file name: the README first, as the Gist would have
    it (a banner when the tests did not pass, notes on renamed and left-out files), then the files under
    the Gist's flat, distinct names (``a/b.py`` as ``a__b.py``, which ``a_b.py`` cannot collide with)."""
    layout = gist_layout(publication.files, MAX_ATTACHED_FILE_BYTES)
    return {README_NAME: compose_readme(publication, layout.renamed, layout.skipped), **layout.files}
