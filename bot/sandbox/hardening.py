"""The container every run gets: what it may use, and everything it is denied.

Pure functions of the config, so the hardening can be read (and unit tested) in one place.
"""

from __future__ import annotations

import math
import os
import socket
from typing import Any

from docker.types import Ulimit

from bot.config.sections import LanguageConfig, SandboxConfig
from bot.process import liveness as processes
from bot.sandbox.files import UNPACK_EXIT
from bot.sandbox.judge import JUDGE_DIR

LABEL = "codegen-chat.sandbox"  # every container we start carries it: cleanup finds them by it
LABEL_HOST = "codegen-chat.host"
LABEL_PID = "codegen-chat.pid"
LABEL_STARTED = "codegen-chat.started"  # with the pid, tells a restarted bot from the one that died
# Which pid namespace (on which boot) the pid belongs to: a bot in a container with host networking has
# the host's name but its own pids, and only a process that sees the same pids can tell if the owner lives.
LABEL_PIDNS = "codegen-chat.pidns"
LABEL_LANGUAGE = "codegen-chat.language"
MB = 1024 * 1024
# The container's first process keeps it alive (tests run beside it with `docker exec`) and ends it at its
# deadline. It waits, using no CPU, until the sandbox writes a number of seconds into DEADLINE_FIFO, then counts
# them down and kills itself: init exits with it, and every process in the container dies. Each write starts
# the count again: before each step the sandbox writes that step's limit and a little grace, after it a short
# time for reading its report, so a container whose bot was killed (kill -9, a crash) mid-test ends by itself
# within its step's limit. Only the keeper's user may write the FIFO (mode 0600; the sandbox writes it as that
# user), so the team's code can neither stop the countdown nor move it; the commands' user can neither remove
# the FIFO (sticky /tmp) nor signal the keeper.
# It also makes the folder only it may write, where the runners' reports are sealed, and makes its work dir
# (its cwd) sticky again: Docker resets a working dir's mode to 0755 (``judge``).
DEADLINE_FIFO = "/tmp/.deadline"
KEEPER = ["sh", "-c", f"trap 'exit 0' TERM; chmod 1777 . 2>/dev/null; mkdir -m 755 {JUDGE_DIR} && "
          f"mkfifo -m 600 {DEADLINE_FIFO} && exec 3<> {DEADLINE_FIFO} || exit 1; t=; "
          "while read s <&3; do case $s in ''|*[!0-9]*) s=1;; esac; [ -z \"$t\" ] || kill $t 2>/dev/null; "
          "( trap 'kill $! 2>/dev/null; exit 0' TERM; sleep \"$s\" & wait $!; kill -9 $$ ) & t=$!; done"]
DEADLINE_UNSET = "[sandbox] the container's deadline could not be set"
# The keeper runs as a user of its own, so the commands (another user) can neither kill it nor be kept
# alive by it: `kill -9 -1` as the command user stops everything the team's code left running.
KEEPER_UID = 65533
# Beyond a step's own limit, how long its container may live without the bot (a busy engine's slow exec).
DEADLINE_GRACE_S = 5.0
# Between steps (staging, reading a report, the next step's files), with the bot there to go on.
BETWEEN_STEPS_S = 30.0
# Under a runtime with a kernel of its own (gVisor's runsc), the container's pids cgroup on the host counts that
# kernel's own threads too (the Sentry's, the Gofer's, the ptrace platform's stubs): at 64 Debian's runsc 20221219
# fails to make one and ends the container (status 2) at the first exec that lasts. The host's limit gets this
# much room; the tests' own processes are held to ``pids_limit`` inside, per user, by RLIMIT_NPROC, which that
# kernel counts for its sandbox alone (on runc it would count the whole host's processes of the user).
RUNTIME_PIDS_ROOM = 512


def labels(language: str) -> dict[str, str]:
    """Who started the container, so a later start of the bot can reap what a crash left behind."""
    pid, started = processes.this_process()
    return {LABEL: "1", LABEL_HOST: socket.gethostname(), LABEL_PID: pid, LABEL_STARTED: started,
            LABEL_PIDNS: pid_namespace(), LABEL_LANGUAGE: language}


def pid_namespace() -> str:
    """This process's pid namespace on this boot ('' where /proc cannot tell)."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as boot:
            return f"{boot.read().strip()}/{os.stat('/proc/self/ns/pid').st_ino}"
    except OSError:
        return ""


def set_deadline(seconds: float) -> str:
    """Shell run as the keeper's user (``keeper_user``): the container ends ``seconds`` from now, whatever
    becomes of the bot. Waits a moment for the keeper's FIFO (a container just started); without it, nothing
    runs."""
    return (f"i=0; until [ -p {DEADLINE_FIFO} ]; do i=$((i+1)); [ $i -le 100 ] || "
            f"{{ echo \"{DEADLINE_UNSET}\" >&2; exit {UNPACK_EXIT}; }}; sleep 0.05; done; "
            f"echo {max(math.ceil(seconds), 1)} > {DEADLINE_FIFO}; ")


def keeper_user(config: SandboxConfig) -> str:
    """A user id that is not the commands' one (``config.user``)."""
    uid = KEEPER_UID if config.user.partition(":")[0] != str(KEEPER_UID) else KEEPER_UID - 1
    return f"{uid}:{uid}"


def container_options(config: SandboxConfig, name: str, language: LanguageConfig, image: str,
                      network: str | None) -> dict[str, Any]:
    """Keyword arguments for ``containers.create``: locked down, no host mounts, no host environment.

    ``network`` is the setup's internal network, or None for none at all. On it the container gets
    no DNS server: registry names are resolved by the setup's proxy, so DNS carries nothing out.
    """
    return {
        **({"dns": ["127.0.0.1"]} if network else {}),
        **({"runtime": config.runtime} if config.runtime else {}),  # gVisor (runsc): a kernel of its own
        "image": image,
        "command": KEEPER,
        "labels": labels(name),
        "user": keeper_user(config),
        "working_dir": language.workdir,
        "environment": dict(language.env),  # only what the language names; nothing from the host
        "network_mode": network or "none",
        "read_only": True,
        "tmpfs": _tmpfs(config, language),
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "mem_limit": config.memory_mb * MB,
        "memswap_limit": config.memory_mb * MB,  # equal to the memory limit: no swap
        "nano_cpus": int(config.cpus * 1e9),
        "pids_limit": config.pids_limit + (RUNTIME_PIDS_ROOM if config.runtime else 0),
        "ulimits": [
            *([Ulimit(name="nproc", soft=config.pids_limit, hard=config.pids_limit)] if config.runtime else []),
            Ulimit(name="nofile", soft=config.nofile_limit, hard=config.nofile_limit),
            Ulimit(name="fsize", soft=config.file_size_mb * MB, hard=config.file_size_mb * MB),
            Ulimit(name="core", soft=0, hard=0),
        ],
        "init": True,  # reaps the zombies a fork bomb leaves
        "ipc_mode": "private",
        "hostname": "sandbox",
        "oom_score_adj": 1000,  # under host memory pressure the kernel kills tests before the bot
        "log_config": {"Type": "none", "Config": {}},  # output is streamed and capped, never stored
        "stdin_open": False,
        "tty": False,
        "detach": True,
    }


def _tmpfs(config: SandboxConfig, language: LanguageConfig) -> dict[str, str]:
    # The work dir belongs to the keeper's user and is sticky, as /tmp is: the commands' user may add files,
    # but not remove or rename the user's tests, which the keeper's user unpacks there (``judge``).
    uid = keeper_user(config).partition(":")[0]
    work = ",".join([f"size={config.workdir_size_mb}m", "mode=1777", f"uid={uid},gid={uid}", "exec", "nosuid",
                     "nodev"])
    tmp = f"size={config.tmp_size_mb}m,mode=1777,exec,nosuid,nodev"
    return {language.workdir: work, "/tmp": tmp}


def owner_gone(labels: dict[str, str]) -> bool:
    """Whether the process that started a labelled container or network has ended. Only a process in the
    owner's pid namespace can tell: for any other, the owner is taken to live."""
    if not judged_here(labels):
        return False
    return processes.gone(labels.get(LABEL_PID, ""), labels.get(LABEL_STARTED, ""))


def judged_here(labels: dict[str, str]) -> bool:
    """Whether this process sees the owner's pids (labels from before the namespace was recorded: yes)."""
    return labels.get(LABEL_PIDNS, pid_namespace()) == pid_namespace()
