"""What each role's template is given, as one frozen value per role, and the one place each is built.

A context names its template (``role``) and holds exactly the variables the template reads; ``PromptBook.render``
takes it whole. The builders below make each role's context from the run's values (``agents.run_state``): the
Manager calls them for every turn, and the eval's single attempt calls ``for_programmer`` (and
``for_reading_files``) too, so a one-call Programmer is shown, and read, as the team's Programmer is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from agents import diffs, python_files
from agents.failures import failing_source, failing_tests
from agents.file_replies import FileContext
from agents.language import Languages
from agents.protocols import Workspace
from agents.run_request import RunRequest
from agents.run_state import Standing, Work
from agents.task_examples import without_examples
from agents.types import Attachment, Role, RunStatus, TestReport, ThreadContext

DEFAULT_OUTPUT_LIMIT = 340  # characters of failing test output shown to a model (agents.failures says which)
FOLLOW_UP_TESTS = "The user asked for a change (the task above); update the tests to match it."

Files = Mapping[str, str]


def _no_files() -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class PlannerPrompt:
    role: ClassVar[Role] = Role.PLANNER
    task: str
    attachments: tuple[Attachment, ...] = ()
    thread: ThreadContext | None = None
    prior_tasks: tuple[str, ...] = ()
    files: Files = field(default_factory=_no_files)
    user_tests: Sequence[str] = ()  # their paths: the Planner is told they exist and are authoritative
    previous_plan: str = ""
    replan_reason: str = ""
    repo_map: str = ""
    repository: str = ""


@dataclass(frozen=True)
class ProgrammerPrompt:
    role: ClassVar[Role] = Role.PROGRAMMER
    task: str
    plan: str = ""
    language: str = ""
    files: Files = field(default_factory=_no_files)
    user_tests: Files = field(default_factory=_no_files)  # whole: they say what the code must do
    review_notes: str = ""
    report: TestReport | None = None
    triage_reason: str = ""
    fix_as_diff: bool = False
    reply_notes: tuple[str, ...] = ()
    repo_map: str = ""
    repository: str = ""
    limit: int = DEFAULT_OUTPUT_LIMIT


@dataclass(frozen=True)
class OptimizerPrompt:
    role: ClassVar[Role] = Role.OPTIMIZER
    task: str
    files: Files = field(default_factory=_no_files)
    changes: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # agents.diffs.changes
    previous_review: str = ""
    report: TestReport | None = None
    triage_reason: str = ""
    limit: int = DEFAULT_OUTPUT_LIMIT


@dataclass(frozen=True)
class TesterPrompt:
    role: ClassVar[Role] = Role.TESTER
    task: str
    plan: str = ""
    language: str = ""
    files: Files = field(default_factory=_no_files)
    user_tests: Sequence[str] = ()
    tests: Files = field(default_factory=_no_files)
    report: TestReport | None = None
    triage_reason: str = ""
    reply_notes: tuple[str, ...] = ()
    runner_note: str = ""
    example: str = ""  # the first lines of a test file for the code shown (agents.file_names.test_skeleton)
    limit: int = DEFAULT_OUTPUT_LIMIT


@dataclass(frozen=True)
class TriagePrompt:
    """The Manager agent's: who acts on failing tests."""

    role: ClassVar[Role] = Role.MANAGER
    task: str
    tests: Files = field(default_factory=_no_files)
    failing_source: Files = field(default_factory=_no_files)
    user_tests: Sequence[str] = ()
    report: TestReport | None = None
    can_fix_tests: bool = True
    can_replan: bool = True
    limit: int = DEFAULT_OUTPUT_LIMIT


@dataclass(frozen=True)
class CheckInPrompt:
    role: ClassVar[Role] = Role.CHECKIN
    task: str
    language: str = ""
    files: Files = field(default_factory=_no_files)
    tests: Sequence[str] = ()
    status: str = ""
    report: TestReport | None = None
    outlined: bool = False  # Python files are shown by their interface (``python_files.outline``)


PromptContext = PlannerPrompt | ProgrammerPrompt | OptimizerPrompt | TesterPrompt | TriagePrompt | CheckInPrompt


# -- the builders ---------------------------------------------------------------------------------


def for_planner(request: RunRequest, work: Work, previous_plan: str = "", replan_reason: str = "",
                workspace: Workspace | None = None) -> PlannerPrompt:
    return PlannerPrompt(
        task=request.task, attachments=request.attachments, thread=request.context,
        prior_tasks=request.prior.tasks if request.prior else (), files=work.files.as_dict(),
        user_tests=list(work.user_tests), previous_plan=previous_plan, replan_reason=replan_reason,
        repo_map=_repo_map(workspace), repository=_repository(workspace),
    )


NOTHING_SAID = Standing()  # no review, no test run yet


def for_programmer(task: str, work: Work, standing: Standing = NOTHING_SAID, plan: str = "", language: str = "",
                   fix_as_diff: bool = False, reply_notes: tuple[str, ...] = (),
                   workspace: Workspace | None = None) -> ProgrammerPrompt:
    """It sees the user's tests (they say what the code must do; the task's examples are in the code already) and,
    for the team's, what failed: the team's tests are written apart from the code."""
    failing, reason = standing.failure()
    return ProgrammerPrompt(
        task=task, plan=plan, language=language, files=work.files.as_dict(),
        user_tests=without_examples(work.user_tests).as_dict(), review_notes=standing.changes_asked(),
        report=failing, triage_reason=reason, fix_as_diff=fix_as_diff, reply_notes=reply_notes,
        repo_map=_repo_map(workspace), repository=_repository(workspace),
    )


def for_optimizer(task: str, work: Work, standing: Standing) -> OptimizerPrompt:
    """Once it has reviewed a version (``standing.reviewed``), it is shown what changed since, and after failing
    tests what the change was to fix, so it does not approve code that fails the same way again: the Manager's
    own reading of the failure when it wrote one (the tests run again on the change, so their output, which the
    reading was made from, would say the same twice), else what the tests printed, with the workflow's reason."""
    failing, reason = standing.failure()
    reviewed = standing.reviewed
    read = bool(reason) and standing.triage is not None and standing.triage.written
    return OptimizerPrompt(
        task=task, files=work.files.as_dict() if reviewed is None else {},
        changes=diffs.changes(reviewed, work.files) if reviewed is not None else {},
        previous_review=standing.changes_asked(), report=None if read else failing, triage_reason=reason,
    )


def for_tester(task: str, work: Work, standing: Standing, plan: str = "", language: str = "",
               reply_notes: tuple[str, ...] = (), runner_note: str = "", example: str = "") -> TesterPrompt:
    """Its own tests, when it has any, with the last report and why they must change; ``example``: its reply's
    format, as a test file for the code shown."""
    fixing = bool(work.tests)
    triage = standing.triage
    return TesterPrompt(
        task=task, plan=plan, language=language, files=work.files.as_dict(), user_tests=list(work.user_tests),
        tests=work.tests.as_dict(), report=standing.report if fixing else None,
        triage_reason=(triage.reason if triage else FOLLOW_UP_TESTS) if fixing else "",
        reply_notes=reply_notes, runner_note=runner_note, example=example,
    )


def for_triage(task: str, work: Work, standing: Standing, can_fix_tests: bool, can_replan: bool) -> TriagePrompt:
    """The failing tests' own source when it can be found (else the team's tests whole), and the report."""
    failing, _ = standing.failure()
    excerpts = failing_source(work.tests, failing_tests(failing), work.user_tests) if failing else None
    return TriagePrompt(
        task=task, tests={} if excerpts else work.tests.as_dict(), failing_source=excerpts or {},
        user_tests=list(work.user_tests), report=failing, can_fix_tests=can_fix_tests, can_replan=can_replan,
    )


def for_check_in(task: str, language: str, work: Work, status: RunStatus, report: TestReport | None) -> CheckInPrompt:
    """A README says what the code offers and how to run it: Python files are shown by their interface (signatures,
    docstrings, the short statements such as a ``__main__`` block), not their bodies."""
    files = {path: python_files.outline(code) if path.endswith(".py") else code for path, code in work.files.items()}
    return CheckInPrompt(task=task, language=language, files=files, tests=list(work.all_tests()),
                         status=str(status), report=report, outlined=files != work.files.as_dict())


def for_reading_files(work: Work, language: str, task: str, plan: str, languages: Languages,
                      writes_tests: bool = False) -> FileContext:
    """What the team knows when it reads the Programmer's or the Tester's reply of files (``writes_tests``), to tell
    which file an unnamed block is: the counterpart of their prompts."""
    return FileContext(language=language, code=work.files.as_dict(), tests=work.all_tests().as_dict(),
                       user_tests=tuple(work.user_tests), mentioned=f"{task}\n{plan}", writes_tests=writes_tests,
                       languages=languages)


def _repo_map(workspace: Workspace | None) -> str:
    return workspace.map() if workspace else ""


def _repository(workspace: Workspace | None) -> str:
    return workspace.name if workspace else ""
