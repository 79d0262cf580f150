"""The words a chat thread shows for a run: agents' names, turn headers, test results, the final summary,
and the files a thread gets when the run's files are attached there instead of to a Gist. Markdown; each
platform's markup formatter turns it into what that platform shows."""

from __future__ import annotations

from collections.abc import Mapping

from agents.events import RunFinished, TestReported
from agents.excerpts import failure_excerpt
from agents.fences import inert
from agents.types import CheckInResult, Publication, Role, RunStatus, TestReport, Usage
from bot.checkin.files import README_NAME, gist_layout
from bot.checkin.readme import compose_readme
from bot.process.lifecycle import SHUTDOWN_REASON

AGENT_TITLES: dict[str, str] = {
    Role.PLANNER: "Planner", Role.PROGRAMMER: "Programmer", Role.OPTIMIZER: "Optimizer (review)",
    Role.TESTER: "Tester", Role.MANAGER: "Manager (triage)", Role.CHECKIN: "Check-In",
}
STATUS_WORDS = {
    RunStatus.PASSED: "Passed", RunStatus.FAILED: "Failed", RunStatus.STOPPED: "Stopped",
    RunStatus.ERROR: "Error", RunStatus.INTERRUPTED: "Interrupted", RunStatus.RUNNING: "Running",
}
STATUS_EMOJI = {
    RunStatus.PASSED: "✅", RunStatus.FAILED: "❌", RunStatus.STOPPED: "⏹️", RunStatus.ERROR: "⚠️",
    RunStatus.INTERRUPTED: "⏸️",
}
MAX_ATTACHED_FILE_BYTES = 8 * 1024 * 1024  # under Discord's upload limit; a larger file is left out with a note
FAILING_OUTPUT_CHARS = 1500


def agent_title(agent: str) -> str:
    return AGENT_TITLES.get(agent, agent.title())


def turn_header(agent: str, round_: int, follow_up: int = 0, badge: str = "") -> str:
    """The first line of a turn's message: the agent, the follow-up it belongs to (the first request in a
    thread is none), the round (0 is the planning before the first round of code), and its decision."""
    where = [f"follow-up {follow_up}"] if follow_up else []
    where += [f"round {round_}"] if round_ else []
    return f"**{agent_title(agent)}**" + "".join(f" · {part}" for part in where) + (f" — {badge}" if badge else "")


def working_text(agent: str, waiting_s: float = 0.0) -> str:
    """Who is at work right now, for a platform's passing status."""
    if waiting_s:
        return f"{agent_title(agent)} is waiting for the model ({waiting_s:.0f} s)…"
    return f"{agent_title(agent)} is writing…"


def status_word(status: RunStatus, emoji: bool = False) -> str:
    return STATUS_EMOJI.get(status, "") if emoji else STATUS_WORDS.get(status, str(status))


def notice_text(text: str) -> str:
    return f"ℹ️ {text}"


def report_text(event: TestReported, follow_up: int = 0) -> str:
    """A test run as the thread shows it: the result, then the failures and the end of the output."""
    report = event.report
    where = "".join(f" · {part}" for part in ([f"follow-up {follow_up}"] if follow_up else []) + [f"round {event.round}"])
    text = f"🧪 **Tests** ({event.language}){where}: {report.summary()} in {report.duration_s:.1f}s"
    if not report.ok:  # output nobody controls: it must not close the block it is shown in
        text += f"\n```\n{inert(failure_excerpt(report, FAILING_OUTPUT_CHARS))}\n```"
    return text


def final_text(event: RunFinished, by_agent: Mapping[str, tuple[Usage, float]] = {}) -> str:
    """The run's last message: the summary, then tokens, cost and time per agent."""
    lines = [f"{status_word(event.status, emoji=True)} {final_summary(event)}".strip()]
    lines += [f"· {agent_title(agent)}: {usage.tokens_text()}" + (f", ${usage.cost_usd:.4f}" if usage.cost_usd else "")
              + f" · {seconds:.1f}s" for agent, (usage, seconds) in by_agent.items()]
    return "\n".join(lines)


def report_line(report: TestReport) -> str:
    return f"Tests: {report.summary()} ({report.duration_s:.1f}s)"


CONTINUE_HINT = "Reply in this thread to continue from where it stopped."


CHECKIN_WORDS = {"pull_request": "Pull request", "branch": "Branch"}


def where_text(result: CheckInResult) -> str:
    """Where the work went, and why there: "Pull request: URL", "Branch: ...", or just the Gist's link."""
    word = CHECKIN_WORDS.get(result.kind)
    return (f"{word}: " if word else "") + result.location + (f" ({result.note})" if result.note else "")


def checkin_line(result: CheckInResult) -> str:
    """The final reply's line: a repository's words, else "Result: ..." (a Gist, a folder)."""
    return where_text(result) if result.kind in CHECKIN_WORDS else f"Result: {where_text(result)}"


def final_summary(event: RunFinished) -> str:
    """The last message of a run: status, why, the test result, where the result is, tokens and cost."""
    reason = event.reason.rstrip(".")  # some reasons are whole sentences already; one full stop either way
    lines = [f"{STATUS_WORDS.get(event.status, event.status)}: {reason}." + (
        f" {CONTINUE_HINT}" if ended_by_the_bot(event) else "")]
    if event.report:
        lines.append(report_line(event.report))
    if event.checkin:
        lines.append(checkin_line(event.checkin))
    usage = f"Tokens: {event.usage.tokens_text()}"
    lines.append(usage + (f" (about ${event.usage.cost_usd:.4f})" if event.usage.cost_usd else ""))
    return "\n".join(lines)


def ended_by_the_bot(event: RunFinished) -> bool:
    """The run ended because the bot went away (shut down, or died), not because of the work or a person."""
    return event.status is RunStatus.INTERRUPTED or (event.status is RunStatus.STOPPED and
                                                     event.reason == SHUTDOWN_REASON)


def attached_files(publication: Publication) -> dict[str, str]:
    """What a chat fallback attaches to the thread, by file name: the README first, as the Gist would have
    it (a banner when the tests did not pass, notes on renamed and left-out files), then the files under
    the Gist's flat, distinct names (``a/b.py`` as ``a__b.py``, which ``a_b.py`` cannot collide with)."""
    layout = gist_layout(publication.files, MAX_ATTACHED_FILE_BYTES)
    return {README_NAME: compose_readme(publication, layout.renamed, layout.skipped), **layout.files}
