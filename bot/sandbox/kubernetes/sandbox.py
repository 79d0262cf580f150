"""``KubernetesSandbox``: a job's tests in a Pod, by the same steps as in a Docker container.

The run's sequence (the user's tests first, sealed reports, the dependency setup, the deadline kept inside, output
capped as it streams, the counts from the runner's report) is the Docker sandbox's (``bot.sandbox.sandbox``); only
the engine's operations differ: a Pod is created (``pods``) and waited for, each command runs through ``pods/exec``
(``execs``) in the judge container (the sandbox's own user) or the tests container (the commands' user), the files
go in as a tar on the exec's stdin, and a step the time limit ends deletes the Pod. What Kubernetes says about a
Pod it ended (``OOMKilled``, ``DeadlineExceeded``, an eviction) becomes the step's sentence, and a create the
namespace's quota refuses is said as such (``api.refusal``).

The dependency setup has no network here: the namespace denies all egress (``deploy/k8s/networkpolicy.yaml``), so
only what the image holds is found. There is no warm pool either: a Pod's ``activeDeadlineSeconds`` runs from its
start, so it is made when its job comes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from kubernetes_asyncio.client.exceptions import ApiException

from agents.errors import SandboxError
from agents.types import TestJob, TestReport, TestStatus
from bot.config.sections import LanguageConfig, SandboxConfig
from bot.process.logs import current_context
from bot.sandbox.files import UNPACK_EXIT, UNPACK_FAILED, pack
from bot.sandbox.hardening import BETWEEN_STEPS_S, DEADLINE_GRACE_S, DEADLINE_UNSET
from bot.sandbox.kubernetes import execs, pods
from bot.sandbox.kubernetes.api import CLUSTER_ERRORS, Cluster, cluster_failed, open_cluster, quota_full, refusal
from bot.sandbox.kubernetes.sweep import RunIsRunning, delete, sweep
from bot.sandbox.output import SplitOutput
from bot.sandbox.reports import KILLED, StepResult
from bot.sandbox.sandbox import DockerSandbox

POLL_S = 0.25  # how often a starting Pod is looked at
STATUS_WAIT_S = 5.0  # how long the kubelet may take to report why a container ended
SWEEP_INTERVAL_S = 300.0  # while the bot runs, Pods a crashed replica left go within this long
QUOTA_RETRY_S, QUOTA_RETRY_MAX_S = 0.5, 5.0  # a create a full quota refused is tried again, less and less often
START_FAILURES = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError",
                  "CreateContainerError", "RunContainerError")
log = logging.getLogger(__name__)


@dataclass(eq=False)
class Pod:
    """One job's Pod; ``ended`` says how it was ended, once it was (nothing more runs in it then), ``by_deadline``
    whether by a time limit (the run is then a timeout)."""

    name: str
    ended: str = ""
    by_deadline: bool = False


class _PodEnded(Exception):
    """Kubernetes ended the Pod between the steps that report (while files went in, say): the run's report."""

    def __init__(self, pod: Pod) -> None:
        super().__init__(pod.ended)
        self.pod = pod


class KubernetesSandbox(DockerSandbox):
    """``agents.protocols.Sandbox`` on a Kubernetes namespace. ``running`` tells the sweep which runs are running
    (the store's answer); without it the sweep deletes only finished Pods. Use ``async with`` (or ``close()``)."""

    engine_errors: ClassVar[tuple[type[Exception], ...]] = CLUSTER_ERRORS

    def __init__(self, config: SandboxConfig, running: RunIsRunning | None = None,
                 cluster: Cluster | None = None) -> None:
        super().__init__(config)
        self._running = running
        self._cluster = cluster
        self._namespace = config.kubernetes.namespace
        self._pods: set[str] = set()  # the Pods this process uses now: never swept
        self._sweeper: asyncio.Task[None] | None = None

    async def _connect(self) -> None:
        pods.numeric_user(self._config.user)  # a name cannot be checked against runAsNonRoot: said at the start
        if self._cluster is None:
            self._cluster = await open_cluster(self._config.kubernetes)
        try:
            await self.sweep()
        except CLUSTER_ERRORS as error:
            host = self._cluster.host
            await self._cluster.close()  # a sandbox that did not start is not closed: its clients go now
            self._cluster = None
            if isinstance(error, ApiException):
                raise refusal(error, self._namespace, "listing its Pods") from None
            raise cluster_failed(error, host, "the start") from None
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep_now_and_then())

    async def sweep(self) -> list[str]:
        """Delete the namespace's sandbox Pods no run needs (``sweep``); the names deleted."""
        return await sweep(self._cluster_().core, self._namespace, self._running, in_use=set(self._pods))

    async def _sweep_now_and_then(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_INTERVAL_S)
            try:
                await self.sweep()
            except CLUSTER_ERRORS as error:
                log.warning("the sandbox Pod sweep failed: %s", error)

    async def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        await super().close()
        if self._cluster is not None:
            await self._cluster.close()

    async def run(self, job: TestJob) -> TestReport:
        try:
            return await super().run(job)
        except _PodEnded as ended:
            status = TestStatus.TIMEOUT if ended.pod.by_deadline else TestStatus.ERROR
            return TestReport(status=status, stderr=f"[sandbox] {ended.pod.ended}")

    def prepare(self, language: str) -> None:
        """No Pod is made ahead of its job (its deadline would run meanwhile)."""

    def warm(self, language: str) -> None:
        """No warm pool on Kubernetes (see ``prepare``)."""

    def _engine_failed(self, error: BaseException) -> SandboxError:
        if isinstance(error, ApiException) and error.status in (403, 404):
            return refusal(error, self._namespace, "a test Pod")
        return cluster_failed(error, self._cluster.host if self._cluster else "?")

    def _setup_has_network(self) -> bool:
        return False  # the namespace denies egress: setup finds what the image holds

    async def _listed_images(self) -> frozenset[str] | None:
        return None  # the cluster pulls each Pod's image itself: nothing to look up beforehand

    async def _image(self, name: str, language: LanguageConfig, listed: frozenset[str] | None = None) -> str:
        image = self._config.kubernetes.images.get(name) or language.image
        if not image:
            raise SandboxError(f"no image for {name} test Pods: set [sandbox.kubernetes] images.{name} to an image "
                               "the cluster can pull (docs/kubernetes.md)")
        return image

    # -- the Pod's life ----------------------------------------------------------------------------------------

    async def _start(self, name: str, language: LanguageConfig, network: str | None) -> Pod:
        image = await self._image(name, language)
        pod = Pod(pods.pod_name(name))
        manifest = pods.pod_manifest(self._config, pod.name, name, language, image,
                                     current_context().get("run_id", ""))
        self._pods.add(pod.name)
        try:
            await asyncio.shield(self._create(manifest))
            await self._until_running(pod, name)
        except BaseException:
            # However the start ends early (refused, failed, cancelled), no Pod of it stays behind (else the sweep).
            with contextlib.suppress(Exception):
                await asyncio.shield(self._remove(pod))
            raise
        return pod

    async def _create(self, manifest: dict[str, Any]) -> None:
        """Create the Pod. A full quota (other jobs', maybe other replicas') is waited out, as the concurrency cap
        is, for up to ``pod_start_timeout_s``; then, and for any other refusal, one sentence."""
        started = time.monotonic()
        pause = QUOTA_RETRY_S
        while True:
            try:
                await self._cluster_().core.create_namespaced_pod(self._namespace, manifest)  # type: ignore[arg-type]
                return
            except ApiException as error:
                waited = time.monotonic() - started
                if not quota_full(error) or waited + pause > self._config.kubernetes.pod_start_timeout_s:
                    raise refusal(error, self._namespace, "a test Pod", waited) from None
            await asyncio.sleep(pause)
            pause = min(pause * 2, QUOTA_RETRY_MAX_S)

    async def _until_running(self, pod: Pod, language: str) -> None:
        deadline = time.monotonic() + self._config.kubernetes.pod_start_timeout_s
        waiting = "it was not scheduled yet"
        while time.monotonic() < deadline:
            found = await self._cluster_().core.read_namespaced_pod(pod.name, self._namespace)
            status = found.status
            phase = status.phase if status else None
            statuses = {s.name: s for s in (status.container_statuses or [])} if status else {}
            if phase == "Running" and all(statuses.get(c) and statuses[c].state.running
                                          for c in (pods.JUDGE, pods.TESTS)):
                return
            if phase in ("Failed", "Succeeded"):
                raise SandboxError(f"the {language} test Pod ended before its tests began ({_pod_reason(found)})")
            for container in [*(status.init_container_statuses or []), *statuses.values()] if status else []:
                state = container.state.waiting if container.state else None
                if state is not None and state.reason in START_FAILURES:
                    raise SandboxError(f"the cluster could not start the {language} test Pod: {state.reason} "
                                       f"({(state.message or '')[:300]}); check [sandbox.kubernetes] images")
                if state is not None and state.reason:
                    waiting = f"{container.name}: {state.reason}"
            for condition in (status.conditions or []) if status else []:
                if condition.type == "PodScheduled" and condition.status == "False" and condition.message:
                    waiting = condition.message[:300]
            await asyncio.sleep(POLL_S)
        raise SandboxError(f"the {language} test Pod did not start within "
                           f"{self._config.kubernetes.pod_start_timeout_s:.0f}s ({waiting}): "
                           "[sandbox.kubernetes] pod_start_timeout_s")

    async def _remove(self, container: Pod) -> None:
        try:
            await delete(self._cluster_().core, self._namespace, container.name)
        finally:
            self._pods.discard(container.name)

    # -- commands in it ----------------------------------------------------------------------------------------

    def _container_of(self, user: str) -> str:
        return pods.JUDGE if user == self._judge_user else pods.TESTS

    async def _quiet(self, container: Pod, argv: list[str], user: str, workdir: str,
                     limit: int = 64 * 1024, exit_code: bool = True, stdin: bytes = b"") -> tuple[int | None, str]:
        # ``exit_code`` asks for nothing here: the exec's status comes with its stream.
        if container.ended:  # after a step that reported how: what follows it reads nothing
            return None, ""
        output = SplitOutput(limit)
        code = None
        with contextlib.suppress(*CLUSTER_ERRORS):  # a stream the Pod's end cut: its status says why
            code = await execs.run(self._cluster_().ws, self._namespace, container.name, self._container_of(user),
                                   pods.in_container(argv, workdir, None, self._config), output, stdin)
        if code is None:
            await self._ended_by_kubernetes(container, None)
            if container.ended:
                raise _PodEnded(container)
        out, err = output.texts()
        return code, out + err

    async def _read_sealed(self, container: Pod, path: str) -> str:
        try:
            return await super()._read_sealed(container, path)
        except SandboxError:
            if container.ended:  # Kubernetes ended the Pod before its report could be read: that is the report
                raise _PodEnded(container) from None
            raise

    async def _arm(self, container: Pod, seconds: float, seal: Sequence[str] = (), judged: str = "") -> None:
        if not container.ended:
            await super()._arm(container, seconds, seal, judged)

    async def _stage(self, container: Pod, files: Mapping[str, str], language: LanguageConfig,
                     first: str, before: str = "", as_judge: bool = False) -> list[str]:
        """Unpack the files (a tar on the exec's stdin, ``head -c`` its length) after the shell ``before``; the
        command that runs ``first``."""
        archive = pack(files)
        limit = self._config.max_upload_bytes
        if len(archive) > limit:
            raise SandboxError(f"the files to test are {len(archive)} bytes, over the sandbox limit of {limit}")
        if container.ended:
            return ["sh", "-c", first]
        if not as_judge:  # the judge's ``before`` arms the deadline itself; the commands' user cannot
            await self._arm(container, BETWEEN_STEPS_S)
        script = (before + f"head -c {len(archive)} | tar -x -m -f - -C {language.workdir} "
                  f'|| {{ echo "{UNPACK_FAILED}" >&2; exit {UNPACK_EXIT}; }}')
        user = self._judge_user if as_judge else self._config.user
        code, text = await self._quiet(container, ["sh", "-c", script], user, "/", stdin=archive)
        if code == UNPACK_EXIT and DEADLINE_UNSET in text:
            raise self._keeper_gone()
        if code != 0:
            raise SandboxError(f"could not copy the files into the sandbox (exit {code}): {text[:500]}")
        return ["sh", "-c", first]

    async def _step(self, container: Pod, argv: list[str], workdir: str, limit_s: float,
                    env: dict[str, str] | None = None, output_limit: int | None = None,
                    seal: Sequence[str] = (), judged: str = "") -> StepResult:
        """Run one command in the tests container, killed (its Pod deleted) after ``limit_s``, and from inside a
        little later should this process die meanwhile (the keeper's deadline)."""
        if container.ended:
            return StepResult(None, container.by_deadline, 0.0, "", "", False, ended=container.ended)
        await self._arm(container, limit_s + DEADLINE_GRACE_S, seal, judged)
        output = SplitOutput(output_limit or self._config.max_output_bytes)
        started = time.monotonic()
        running = asyncio.ensure_future(execs.run(
            self._cluster_().ws, self._namespace, container.name, pods.TESTS,
            pods.in_container(argv, workdir, env, self._config), output))
        done, _ = await asyncio.wait({running}, timeout=limit_s)
        timed_out = not done
        code: int | None = None
        if timed_out:
            running.cancel()
            await self._remove(container)  # the whole Pod: nothing in it can outlive or ignore that
            container.ended = f"killed after the {limit_s:.0f}s time limit (its Pod deleted)"
            container.by_deadline = True
        else:
            with contextlib.suppress(*CLUSTER_ERRORS):  # a stream the Pod's end cut: its status says why
                code = running.result()
        duration = time.monotonic() - started
        if not timed_out and code != 0:
            timed_out, code = await self._ended_by_kubernetes(container, code)
        stdout, stderr = output.texts()
        return StepResult(code, timed_out, duration, stdout, stderr, output.truncated, ended=container.ended)

    async def _ended_by_kubernetes(self, pod: Pod, code: int | None) -> tuple[bool, int | None]:
        """Whether Kubernetes ended the Pod's tests (said on ``pod``): (by its deadline, the exit code). A command
        that exited by itself leaves a running container (one look); a cut stream waits for the kubelet's word."""
        deadline = time.monotonic() + (STATUS_WAIT_S if code is None or code == KILLED else 0.0)
        while True:
            found = await self._cluster_().core.read_namespaced_pod(pod.name, self._namespace)
            status = found.status
            tests = next((s for s in (status.container_statuses or []) if s.name == pods.TESTS), None)
            terminated = tests.state.terminated if tests is not None and tests.state else None
            if status.reason == "DeadlineExceeded":
                pod.ended = (f"Kubernetes stopped the test Pod at its deadline (activeDeadlineSeconds "
                             f"{found.spec.active_deadline_seconds}s)")
                pod.by_deadline = True
                return True, code
            if terminated is not None and terminated.reason == "OOMKilled":
                pod.ended = (f"killed for going over the {self._config.memory_mb} MB memory limit "
                             "(Kubernetes: OOMKilled)")
                return False, terminated.exit_code if code is None else code
            if status.phase == "Failed" or terminated is not None:
                pod.ended = f"Kubernetes ended the test Pod ({_pod_reason(found)})"
                return False, code
            if time.monotonic() >= deadline:
                return False, code
            await asyncio.sleep(POLL_S)

    def _cluster_(self) -> Cluster:
        if self._cluster is None:
            raise SandboxError("the sandbox was used before it started")
        return self._cluster


def _pod_reason(pod: Any) -> str:
    status = pod.status
    parts = [part for part in (status.reason, (status.message or "")[:200]) if part] if status else []
    for container in (status.container_statuses or []) if status else []:
        terminated = container.state.terminated if container.state else None
        if terminated is not None:
            parts.append(f"{container.name}: {terminated.reason or 'exit'} {terminated.exit_code}")
    return "; ".join(parts) or (status.phase if status else "no status")
