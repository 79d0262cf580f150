"""How ``codegen-chat run`` ends, as an exit status a script or a CI step can branch on. These numbers are
part of the command's interface: they do not change between releases.

    0    the tests ran and passed, and the review approved
    1    the tests failed (the budget ran out with failing tests)
    2    bad input or config: nothing was run
    3    something the run needs failed: the model endpoint, the sandbox, the store, the check-in
    4    a limit stopped the run before it passed: its rounds, tokens or wall time
    130  stopped with Ctrl-C (SIGTERM and SIGHUP, a supervisor's stop, exit 0: the run can be continued)
"""

from __future__ import annotations

from agents.types import RunStatus

PASSED = 0
TESTS_FAILED = 1
BAD_INPUT = 2
BROKE = 3
LIMIT = 4
CTRL_C = 130
SHUT_DOWN = 0  # SIGTERM or SIGHUP: the machine stopped the run as asked, and `--continue` picks it up

BY_STATUS = {RunStatus.PASSED: PASSED, RunStatus.FAILED: TESTS_FAILED, RunStatus.ERROR: BROKE,
             RunStatus.STOPPED: LIMIT, RunStatus.INTERRUPTED: BROKE, RunStatus.RUNNING: BROKE}


def of_run(status: RunStatus, interrupted: bool, shut_down: bool = False) -> int:
    """A run's exit status; ``interrupted``: a signal stopped it, Ctrl-C unless ``shut_down`` (SIGTERM, SIGHUP)."""
    if status is RunStatus.PASSED:
        return PASSED
    if interrupted:
        return SHUT_DOWN if shut_down else CTRL_C
    return BY_STATUS[status]
