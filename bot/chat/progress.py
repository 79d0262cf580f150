"""Where a run is, at a glance: the steps the status message at the top of its thread shows and keeps
current (plan, code, review, tests of each round with their counts, triage, fix, check-in, and the pushed
commit's CI, which goes on after the run).

``Progress`` is what a platform gets: the steps as data (Slack draws them as tasks in its plan display)
and ``progress_text`` as Markdown lines (every other platform, and Slack where its workspace or thread
does not allow the plan display).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from agents.events import (
    CheckedIn,
    CiChecked,
    Event,
    Notice,
    RunFinished,
    RunStarted,
    TestReported,
    TextDelta,
    TurnFinished,
    TurnStarted,
    Waiting,
)
from agents.types import Role, RunStatus
from bot.chat.badges import read_turn
from bot.chat.words import STATUS_EMOJI, status_word

ACTIVE, DONE, FAILED, HALTED = "active", "done", "failed", "halted"
STATE_MARKS = {ACTIVE: "⏳", DONE: "✅", FAILED: "❌", HALTED: "⏹️"}  # halted: the run stopped before the step ended


@dataclass(frozen=True)
class Step:
    key: str  # stable for the run ("code-2"): a platform that keeps tasks updates them by it
    title: str  # "Fix · round 2"
    state: str = ACTIVE
    detail: str = ""  # "approves", "1 passed, 1 failed", "waiting for the model (12 s)", "writing"


@dataclass(frozen=True)
class Progress:
    run_id: str
    headline: str  # Markdown: what the run is doing, or how it ended
    steps: tuple[Step, ...] = ()
    note: str = ""  # the latest notice (a queue place, a retry), until the next step
    finished: RunStatus | None = None
    read: str = ""  # what was read of the thread the run was asked in ("read 14 earlier messages, 2 files")


def progress_text(progress: Progress, folded: int = 0) -> str:
    """The status message as Markdown: the headline, a line per step, the latest notice. ``folded``: how many of
    the oldest steps are said in one line instead (a long run's steps outgrow one message)."""
    lines = [progress.headline] + ([f"📖 {_capital(progress.read)}"] if progress.read else [])
    folded = min(folded, len(progress.steps))
    lines += [f"… {folded} earlier step{'s' if folded > 1 else ''}"] if folded else []
    lines += [f"{STATE_MARKS[s.state]} {s.title}" + (f" — {s.detail}" if s.detail else "")
              for s in progress.steps[folded:]]
    return "\n".join(lines + ([f"ℹ️ {progress.note}"] if progress.note else []))


@dataclass
class ProgressTracker:
    """Reads a run's events into its ``Progress``; ``observe`` says whether the picture changed."""

    run_id: str
    follows: str | None = None
    follow_up: int = 0
    steps: list[Step] = field(default_factory=list)
    note: str = ""
    read: str = ""
    finished: RunFinished | None = None
    waiting: set[str] = field(default_factory=set)  # the keys of steps whose model is silent

    def observe(self, event: Event) -> bool:
        before = self.snapshot()
        if isinstance(event, RunStarted):
            self.follow_up, self.read = event.follow_up, event.context
        elif isinstance(event, TurnStarted):
            self._start(_key(event.agent, event.round), _title(event.agent, event.round))
        elif isinstance(event, TurnFinished):
            self._finish_turn(event)
        elif isinstance(event, Waiting):
            self._waiting(event.agent, f"waiting for the model ({event.seconds:.0f} s)")
        elif isinstance(event, TextDelta) and self.waiting:
            self._waiting(event.agent, "")
        elif isinstance(event, TestReported):
            key = f"tests-{event.round}"
            if not self._has(key):
                self._start(key, f"Tests · round {event.round}")
            self._end(key, DONE if event.report.ok else FAILED, event.report.summary())
        elif isinstance(event, CheckedIn):
            self._end("checkin", DONE, event.result.location)
        elif isinstance(event, Notice):
            self.note = event.text
        elif isinstance(event, CiChecked):
            self._ci(event)
        elif isinstance(event, RunFinished):
            self.finished, self.note = event, ""
            state = {RunStatus.PASSED: DONE, RunStatus.STOPPED: HALTED, RunStatus.INTERRUPTED: HALTED}.get(
                event.status, FAILED)
            # A step the run's end cut short loses what it was doing ("running the tests", "waiting for the
            # model"): that is over; its mark says how.
            self.steps = [replace(s, state=state, detail="") if s.state == ACTIVE else s for s in self.steps]
            self.waiting.clear()
        return self.snapshot() != before

    def snapshot(self) -> Progress:
        return Progress(self.run_id, self._headline(), tuple(self.steps), self.note,
                        self.finished.status if self.finished else None, self.read)

    def _headline(self) -> str:
        run = f"run `{self.run_id}`" + (f", follow-up {self.follow_up}" if self.follow_up else "")
        if self.finished is not None:
            status = self.finished.status
            return f"{STATUS_EMOJI.get(status, '')} **{status_word(status)}** · {run}".strip()
        if not self.steps and self.follows:
            return f"⏳ **Waiting for run `{self.follows}`** in this thread · {run}"
        return f"🛠️ **{'Working' if self.steps else 'Starting'}** · {run}"

    def _finish_turn(self, event: TurnFinished) -> None:
        key = _key(event.agent, event.round)
        if not self._has(key):  # a stored run drawn again: its turns come without their starts
            self._start(key, _title(event.agent, event.round))
        if event.cut_short:  # the run's end stopped it: the final event marks the step as the run ended
            return
        if event.agent == Role.TESTER:  # its step ends with the test run it leads to
            self._set_detail("running the tests", key)
            return
        badge = _words(read_turn(event).badge) if event.agent != Role.CHECKIN else "publishing"
        if event.agent == Role.CHECKIN:
            self._set_detail(badge, key)
        else:
            self._end(key, DONE, badge)

    def _ci(self, event: CiChecked) -> None:
        """The pushed commit's CI, one step after the check-in: it stays after the run, as CI goes on."""
        if not self._has("ci"):
            self.steps.append(Step("ci", "CI"))
        detail = " · ".join(part for part in (event.detail, event.url) if part)
        self._replace("ci", state=_CI_STATES.get(event.state, ACTIVE), detail=detail)

    def _waiting(self, agent: str, detail: str) -> None:
        """The model of ``agent``'s step is silent (``detail`` says how long), or writes again (no detail):
        the step says so; several agents may be at work at once, so it is the step of that agent."""
        kind = _KINDS.get(agent, agent)
        key = next((s.key for s in reversed(self.steps) if s.state == ACTIVE and _kind(s.key) == kind), "")
        if not key or (not detail and key not in self.waiting):
            return
        if detail:
            self.waiting.add(key)
        else:
            self.waiting.discard(key)
        self._replace(key, detail=detail or WRITING)

    def _start(self, key: str, title: str) -> None:
        self.note = ""
        if self._has(key):  # the same turn again (a reply asked for once more)
            self._set_detail("", key)
            self._replace(key, state=ACTIVE)
        else:
            self.steps.append(Step(key, title))

    def _end(self, key: str, state: str, detail: str) -> None:
        self.waiting.discard(key)
        if self._has(key):
            self._replace(key, state=state, detail=detail)

    def _set_detail(self, detail: str, key: str) -> None:
        self.waiting.discard(key)
        self._replace(key, detail=detail)

    def _has(self, key: str) -> bool:
        return any(s.key == key for s in self.steps)

    def _replace(self, key: str, **changes: str) -> None:
        self.steps = [replace(s, **changes) if s.key == key else s for s in self.steps]


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _words(badge: str) -> str:
    """A badge without its leading emoji: the step's mark says already how it went."""
    first, _, rest = badge.partition(" ")
    return rest if rest and not any(ch.isalnum() for ch in first) else badge


_CI_STATES = {"passed": DONE, "failed": FAILED, "ended": HALTED}  # "pending": active
WRITING = "writing"  # the detail of a step whose model writes again after a silence

_KINDS: dict[str, str] = {Role.PLANNER: "plan", Role.PROGRAMMER: "code", Role.OPTIMIZER: "review", Role.TESTER: "tests",
          Role.MANAGER: "triage", Role.CHECKIN: "checkin"}


def _key(agent: str, round_: int) -> str:
    """A step per agent and round (the Check-In's is one): a turn asked for again stays in its step."""
    kind = _KINDS.get(agent, agent)
    return kind if kind == "checkin" else f"{kind}-{round_}"


def _kind(key: str) -> str:
    return key.partition("-")[0]


def _title(agent: str, round_: int) -> str:
    kind = _KINDS.get(agent, agent)
    if kind == "plan":
        return "Plan" if round_ == 0 else f"Re-plan · round {round_}"
    if kind == "checkin":
        return "Check-in"
    if kind == "code":
        return f"{'Code' if round_ <= 1 else 'Fix'} · round {round_}"
    return f"{kind.capitalize()} · round {round_}"
