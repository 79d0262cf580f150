"""The Pod each test job runs in: what it may use, and everything it is denied.

Pure functions of the config, so the hardening can be read (and tested) in one place, as ``hardening`` is for a
Docker container. The three users of a Docker container (``docs/sandbox.md``) become two containers of one Pod,
since ``pods/exec`` runs a command as its container's user and cannot choose another:

    judge   the sandbox's own user (the keeper's): its first process keeps the deadline, it unpacks the user's
            tests and reads the runners' sealed reports
    tests   the commands' user: the setup, the build and the tests run here

Both see the same ``/work`` and ``/tmp``: two folders of one emptyDir that an init container makes as the keeper's
user, sticky (mode 1777), as the Docker sandbox's tmpfs mounts are. The keeper also holds a FIFO open
(``ALIVE_FIFO``); the tests container's first process waits on it and, when the keeper ends (its deadline, or the
judge container stopping), kills every process of the commands' user and exits, so the job stops in both.
Kubernetes' ``activeDeadlineSeconds`` ends the whole Pod should all of that fail and the bot be gone.
"""

from __future__ import annotations

import math
import re
import secrets
from typing import Any

from agents.errors import SandboxError
from bot.config.sections import LanguageConfig, SandboxConfig
from bot.sandbox.hardening import BETWEEN_STEPS_S, DEADLINE_GRACE_S, KEEPER, keeper_user

LABEL = "codegen-chat.sandbox"  # every Pod we create carries it: the sweep finds them by it
LABEL_RUN = "codegen-chat.run"  # the run the job belongs to (absent for `sandbox run` and eval)
LABEL_LANGUAGE = "codegen-chat.language"
MANAGED_BY = {"app.kubernetes.io/managed-by": "codegen-chat", "app.kubernetes.io/component": "sandbox"}
JUDGE, TESTS, PREPARE = "judge", "tests", "prepare"  # the Pod's containers
SCRATCH = "scratch"  # the emptyDir holding /work and /tmp
ALIVE_FIFO = "/tmp/.alive"
# The judge container's first process holds ALIVE_FIFO open and runs the Docker keeper as its child: pid 1 of a
# container ignores a SIGKILL sent from inside it, so the keeper, ending itself at its deadline, must not be pid 1
# (in Docker, the engine's init is). When the keeper ends, so does its parent, closing the FIFO.
JUDGE_COMMAND = ["sh", "-c", f'mkfifo -m 644 {ALIVE_FIFO} && exec 5<> {ALIVE_FIFO} && sh -c "$0"; exit 0', KEEPER[2]]
# The tests container's first process (pid 1: `kill -9 -1` of the commands' user spares it). `read` is a builtin,
# so no child of its own can be killed from under it; it returns when the keeper's end closes the FIFO.
TESTS_COMMAND = ["sh", "-c", f"until [ -p {ALIVE_FIFO} ]; do sleep 0.1; done; read -r _ < {ALIVE_FIFO}; "
                 "kill -9 -1; exit 0"]
JUDGE_MEMORY_MB = 64  # unpacking the user's tests, reading reports of at most a few MB
JUDGE_CPU = "100m"
_LABEL_VALUE = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")


def pod_name(language: str) -> str:
    """A fresh name: the language (as DNS allows it) and random hex."""
    cleaned = re.sub(r"[^a-z0-9-]", "-", language.lower()).strip("-")[:20] or "job"
    return f"codegen-sandbox-{cleaned}-{secrets.token_hex(5)}"


def labels(language: str, run_id: str) -> dict[str, str]:
    """Which run the Pod serves, so the sweep can delete it once that run is not running any more."""
    found = {LABEL: "1", **MANAGED_BY}
    if _LABEL_VALUE.fullmatch(language):
        found[LABEL_LANGUAGE] = language
    if _LABEL_VALUE.fullmatch(run_id):
        found[LABEL_RUN] = run_id
    return found


def active_deadline_s(config: SandboxConfig) -> int:
    """The Pod's whole life: a setup, the user's pass and the team's, and the steps between them. Each step has
    its own, shorter deadline inside the Pod (the keeper's); this one holds should the bot and the keeper fail."""
    return math.ceil(config.setup_timeout_s + 2 * config.timeout_s + 4 * (BETWEEN_STEPS_S + DEADLINE_GRACE_S))


def numeric_user(user: str) -> tuple[int, int]:
    """``uid:gid`` as numbers: Kubernetes checks ``runAsNonRoot`` against a number, never a name."""
    uid, _, gid = user.partition(":")
    if not uid.isdigit() or not (gid or uid).isdigit():
        raise SandboxError(f"[sandbox] user must be numeric (uid:gid, like 65534:65534) for the kubernetes backend, "
                           f"got {user!r}")
    if int(uid) == 0:
        raise SandboxError("[sandbox] user must not be root (uid 0): test Pods run as non-root")
    return int(uid), int(gid or uid)


def pod_manifest(config: SandboxConfig, name: str, language_name: str, language: LanguageConfig, image: str,
                 run_id: str = "") -> dict[str, Any]:
    """The Pod for one job: no network (the namespace's NetworkPolicy), no token, non-root, read-only root, every
    capability dropped, seccomp's runtime default, requests equal to limits, and a deadline."""
    uid, gid = numeric_user(config.user)
    keeper = int(keeper_user(config).partition(":")[0])
    workdir = language.workdir
    env = [{"name": key, "value": value} for key, value in language.env.items()]  # only the language's
    mounts = [{"name": SCRATCH, "mountPath": workdir, "subPath": "work"},
              {"name": SCRATCH, "mountPath": "/tmp", "subPath": "tmp"}]
    scratch_mb = config.workdir_size_mb + config.tmp_size_mb
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "activeDeadlineSeconds": active_deadline_s(config),
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,  # no environment naming the cluster's services
        "hostNetwork": False, "hostPID": False, "hostIPC": False,
        "shareProcessNamespace": False,
        "terminationGracePeriodSeconds": 1,
        "dnsPolicy": "None", "dnsConfig": {"nameservers": ["127.0.0.1"]},  # resolves nothing, even if let out
        "securityContext": {"runAsNonRoot": True, "runAsUser": uid, "runAsGroup": gid,
                            "seccompProfile": {"type": "RuntimeDefault"}},
        "initContainers": [_container(PREPARE, image, ["sh", "-c", "mkdir -m 1777 /scratch/work /scratch/tmp"],
                                      keeper, keeper, [{"name": SCRATCH, "mountPath": "/scratch"}], [], "/",
                                      JUDGE_MEMORY_MB, JUDGE_CPU, 1, config)],
        "containers": [
            _container(JUDGE, image, JUDGE_COMMAND, keeper, keeper, mounts, env, workdir, JUDGE_MEMORY_MB, JUDGE_CPU,
                       1, config),
            _container(TESTS, image, TESTS_COMMAND, uid, gid, mounts, env, workdir, config.memory_mb,
                       _cpu(config.cpus), scratch_mb, config),
        ],
        "volumes": [{"name": SCRATCH, "emptyDir": {"sizeLimit": f"{scratch_mb}Mi"}}],
    }
    if config.kubernetes.runtime_class:
        spec["runtimeClassName"] = config.kubernetes.runtime_class  # gVisor: a kernel of its own
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": config.kubernetes.namespace,
                         "labels": labels(language_name, run_id)},
            "spec": spec}


def _container(name: str, image: str, command: list[str], uid: int, gid: int, mounts: list[dict[str, Any]],
               env: list[dict[str, str]], workdir: str, memory_mb: int, cpu: str, storage_mb: int,
               config: SandboxConfig) -> dict[str, Any]:
    limits = {"cpu": cpu, "memory": f"{memory_mb}Mi", "ephemeral-storage": f"{storage_mb}Mi"}
    return {
        "name": name, "image": image, "imagePullPolicy": config.kubernetes.image_pull_policy,
        "command": command, "workingDir": workdir, "env": env, "volumeMounts": mounts,
        "resources": {"requests": dict(limits), "limits": limits},  # equal: a Guaranteed Pod, never overcommitted
        "securityContext": {
            "runAsNonRoot": True, "runAsUser": uid, "runAsGroup": gid,
            "readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False, "privileged": False,
            "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"},
        },
        "stdin": False, "tty": False,
    }


def _cpu(cpus: float) -> str:
    return f"{max(1, round(cpus * 1000))}m"


def in_container(argv: list[str], workdir: str, env: dict[str, str] | None, config: SandboxConfig) -> list[str]:
    """``argv`` as ``pods/exec`` runs it: an exec has no working directory, environment or rlimits of its own, so a
    shell sets them (the Docker sandbox's open-file, file-size and core limits) and then becomes the command."""
    blocks = config.file_size_mb * 1024 * 2  # sh's ulimit -f counts 512-byte blocks
    assignments = [f"{key}={value}" for key, value in (env or {}).items()]
    script = (f"ulimit -n {config.nofile_limit}; ulimit -f {blocks}; ulimit -c 0; cd \"$0\" || exit 125; "
              + ('exec env "$@"' if assignments else 'exec "$@"'))
    return ["sh", "-c", script, workdir, *assignments, *argv]
