"""A commit's CI as the bot judges it: its checks (commit statuses and check runs alike), which of them count,
and the verdict (pending, passed, failed).

Which count: the base branch's required checks when GitHub shows them (branch protection, rulesets), else every
check on the commit. The bot's own status (``codegen-chat/tests``) never counts: it says what the bot's sandbox saw,
and reacting to it would be the bot answering itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from bot.repos.commit_status import OWN_CONTEXT  # the commit status the bot sets from its sandbox's result
from bot.safety.inert import inert

NAME_CHARS = 100  # of a check's name, as the bot shows it


class CheckState(StrEnum):
    PENDING = "pending"
    PASSED = "passed"
    FAILED = "failed"


# Check runs' conclusions (GitHub's words). "cancelled", "action_required" and "stale" fail the check, but no
# change to the code answers them: the bot says so instead of trying a fix.
PASSING = frozenset({"success", "neutral", "skipped"})
FIXABLE = frozenset({"failure", "timed_out", "startup_failure"})


@dataclass(frozen=True)
class Check:
    """One check on a commit: a check run (``kind="check_run"``, its id, the app that ran it) or a commit
    status (``kind="status"``, its context as the name)."""

    name: str
    state: CheckState
    kind: str = "check_run"
    url: str = ""  # where a person sees it (the check run's page, the status's target URL)
    conclusion: str = ""  # a check run's, or a status's state ("failure", "error")
    id: int = 0  # a check run's id: an Actions job's id too
    app: str = ""  # the check run's app ("github-actions") or empty for a status
    summary: str = ""  # what the check said of itself: a status's description, a check run's output title
    output: str = ""  # a check run's output (title, summary, text): another CI system's account of a failure
    details_url: str = ""  # a check run's page on the CI system that ran it

    @property
    def shown(self) -> str:
        """The name as the bot shows it (whoever may set a commit status chooses it): one line, controls inert,
        at most ``NAME_CHARS`` characters."""
        line = " ".join(inert(self.name).split())
        return line if len(line) <= NAME_CHARS else line[: NAME_CHARS - 1] + "…"

    @property
    def fixable(self) -> bool:
        return self.state is CheckState.FAILED and (self.kind == "status" or self.conclusion in FIXABLE)


@dataclass(frozen=True)
class Verdict:
    state: CheckState
    counted: tuple[Check, ...]  # the checks the verdict is over
    missing: tuple[str, ...] = ()  # required checks that have not appeared on the commit yet
    seen: int = 0  # checks of any kind on the commit (counted or not), the bot's own left out

    @property
    def failed(self) -> tuple[Check, ...]:
        return tuple(c for c in self.counted if c.state is CheckState.FAILED)

    @property
    def pending(self) -> int:
        return sum(c.state is CheckState.PENDING for c in self.counted) + len(self.missing)

    def detail(self) -> str:
        """A short line for the CI step: "2 of 3 checks done", "3 checks passed", "failed: tests, lint"."""
        total = len(self.counted) + len(self.missing)
        if self.state is CheckState.FAILED:
            return "failed: " + ", ".join(c.shown for c in self.failed)
        if self.state is CheckState.PASSED:
            return f"{total} check{'' if total == 1 else 's'} passed"
        if not total:
            return "waiting for checks to start"
        return f"{total - self.pending} of {total} checks done"


def latest(checks: Iterable[Check]) -> list[Check]:
    """One check per name: a re-run's newest (the highest id; statuses come one per context already)."""
    chosen: dict[str, Check] = {}
    for check in checks:
        kept = chosen.get(check.name)
        if kept is None or check.id >= kept.id:
            chosen[check.name] = check
    return list(chosen.values())


def judge(checks: Sequence[Check], required: frozenset[str] | None) -> Verdict:
    """The commit's verdict: failed once every counted check is done and one failed, passed when all passed,
    else pending. ``required``: the names that count (None or empty: every check but the bot's own)."""
    mine = [c for c in latest(checks) if c.name != OWN_CONTEXT]
    wanted = set(required or ()) - {OWN_CONTEXT}
    counted = tuple(c for c in mine if not wanted or c.name in wanted)
    missing = tuple(sorted(wanted - {c.name for c in mine}))
    if missing or not counted or any(c.state is CheckState.PENDING for c in counted):
        return Verdict(CheckState.PENDING, counted, missing, len(mine))
    if any(c.state is CheckState.FAILED for c in counted):
        return Verdict(CheckState.FAILED, counted, seen=len(mine))
    return Verdict(CheckState.PASSED, counted, seen=len(mine))


def run_state(status: str, conclusion: str | None) -> CheckState:
    """A check run's state from GitHub's ``status`` and ``conclusion``."""
    if status != "completed":
        return CheckState.PENDING
    return CheckState.PASSED if (conclusion or "") in PASSING else CheckState.FAILED


def status_state(state: str) -> CheckState:
    """A commit status's state ("pending", "success", "failure", "error")."""
    return {"success": CheckState.PASSED, "pending": CheckState.PENDING}.get(state, CheckState.FAILED)
