"""``codegen-chat serve`` as a real process for the replica tests and benchmark, with the scripted sandbox in
place of Docker (the runs' tests are judged by their files, as ``ScriptedSandbox`` does): everything else (the
config, the store, the platforms, the job queue, signals) is the command's own.

    python -m tests.fakes.replica --config PATH

CODEGEN_SANDBOX_DELAY_S: seconds per test run. CODEGEN_REPLICA_HOST: the host name the process gives itself, so
replicas on this one machine stand for replicas on separate hosts: a dead one is then noticed only by its stopped
heartbeat, as across hosts (on one host its ended pid gives it away at once).
"""

from __future__ import annotations

import os
import socket
import sys

import codegen_chat.build as build
from codegen_chat.cli import main
from tests.fakes.team_script import ScriptedSandbox

if __name__ == "__main__":
    delay = float(os.environ.get("CODEGEN_SANDBOX_DELAY_S", "0"))
    build.build_sandbox = lambda *_, **__: ScriptedSandbox(delay=delay)  # what serve's running_service calls
    host = os.environ.get("CODEGEN_REPLICA_HOST")
    if host:
        socket.gethostname = lambda: host  # read by bot.store.owners for each run's owner
    sys.exit(main([*sys.argv[1:], "serve"]))  # --config PATH comes before the command
