"""Children of the bot that must not outlive it: the embedded server, and pip fetching the model.

On Linux the kernel sends such a child SIGTERM when the bot dies in any way, SIGKILL included
(``PR_SET_PDEATHSIG``, set in the child before it runs its program). The signal follows the thread that
started the child, not the process: start it from a thread that lives as long as it must (the event loop's,
or a worker thread that waits for the child to end).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable

PR_SET_PDEATHSIG = 1


def dies_with_bot() -> Callable[[], None]:
    """A ``preexec_fn``: in the child, be sent SIGTERM when the bot dies (Linux), or end now if it has."""
    parent = os.getpid()

    def prepare() -> None:
        if sys.platform.startswith("linux"):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # the bot died before the line above took effect
            os._exit(1)
    return prepare
