"""What a fix round is told of a red CI: the failing checks' output, fetched and reduced, and its task.

The output comes from where each CI keeps it: an Actions job's log (the check run's id is the job's), another
CI system's check run output (title, summary, text) with its details URL, a commit status's description and
target URL. It is cleaned (colour codes, Actions' timestamps, terminal controls, pasted secrets), cut by
failures with the team's own failure digest (``agents.failures``), and reaches the model as quoted material
(the fix run's thread context), never as the task's instructions. A check's name is the CI's text too (whoever
may set a commit status names it): it is shown only in that quoted material, never in the task.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from agents.errors import CheckInError
from agents.failures import digest
from agents.types import TestReport, TestStatus, ThreadContext, ThreadMessage
from bot.ci.checks import Check
from bot.ci.rest import CiRest
from bot.safety.inert import inert
from bot.safety.redact import mask_pasted_secrets

log = logging.getLogger(__name__)

MAX_CHECKS = 3  # a fix round reads at most this many failing checks' output
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_STAMP = re.compile(r"^\ufeff?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ", re.M)  # Actions' per-line timestamp


async def failure_context(rest: CiRest, full_name: str, failed: Sequence[Check], limit: int) -> ThreadContext:
    """The failing checks' output, each reduced to its share of ``limit`` characters, as quoted messages."""
    shown = list(failed)[:MAX_CHECKS]
    share = max(limit // max(len(shown), 1), 200)
    messages = []
    for check in shown:
        text = await _output(rest, full_name, check)
        report = TestReport(TestStatus.FAILED, stdout=clean(text))
        messages.append(ThreadMessage(f"CI check {check.shown}", digest(report, share) or "(no output)"))
    left = len(failed) - len(shown)
    notes = (f"{left} more failing check{'s' if left > 1 else ''} not read",) if left > 0 else ()
    return ThreadContext(messages=tuple(messages), summary=f"read the output of {len(shown)} failing CI check"
                         f"{'s' if len(shown) > 1 else ''}", notes=notes)


async def _output(rest: CiRest, full_name: str, check: Check) -> str:
    where = check.details_url or check.url
    if check.kind == "status":
        return "\n".join(p for p in (check.summary, where) if p)
    if check.app == "github-actions":
        try:
            text = await rest.job_log(full_name, check.id)
        except CheckInError as error:  # the token may lack Actions read: the check's own account, then
            log.warning("the log of job %s could not be read: %s", check.id, error)
            text = ""
        if text.strip():
            return text
    return "\n".join(p for p in (check.output or check.summary, where) if p)


def clean(text: str) -> str:
    """A CI log as plain text: no colour codes or Actions timestamps, controls shown inert, secrets masked."""
    masked, _ = mask_pasted_secrets(_STAMP.sub("", _ANSI.sub("", text)))
    return inert(masked)  # after the masking: a control shown as ^G would glue itself to a token after it


def fix_task(failed: Sequence[Check], sha: str, attempt: int, attempts: int) -> str:
    """The fix round's task: how many checks failed on which commit, and what a fix may not do. The checks are
    named only in the quoted material (``failure_context``): a name is the CI's text, not an instruction."""
    count = f"{len(failed)} check{'' if len(failed) == 1 else 's'}"
    return (f"CI fails on this pull request's head commit {sha[:12]}: {count} failed, named with their output in "
            f"the CI messages quoted with this request. Fix the code so these checks pass (fix round {attempt} of "
            f"{attempts}). The repository's own tests are authoritative: do not delete, skip or weaken any of them.")
