"""A Kubernetes cluster on loopback: kmock's API emulator, a ``pods/exec`` websocket of ours, and a kubelet that runs
each Pod's containers as real Docker containers of the sandbox image.

    client (kubernetes-asyncio) --HTTP--> front server --+--> kmock's KubernetesEmulator (objects, list, delete)
                                                         +--> exec: websocket, subprotocol v4.channel.k8s.io,
                                                              `docker exec -i` in the Pod's container

The kubelet turns a created Pod into Docker containers from its spec (the user of each container's
securityContext, readOnlyRootFilesystem, dropped capabilities, no privilege escalation, its memory and CPU limits,
one host folder per emptyDir with subPath mounts, working dir, env, command; no network, as the namespace's
default-deny NetworkPolicy leaves it), after running its init containers, and reports the Pod Running. What a real
kubelet would report is reported the same way: a container the kernel OOM-killed in is killed whole (cgroup v2's
memory.oom.group, as kubelet sets it) and shown terminated with reason OOMKilled; ``expire`` does what the kubelet
does at a Pod's activeDeadlineSeconds (kill it, phase Failed, reason DeadlineExceeded). A ResourceQuota on
``limits.memory`` refuses a create past it with the API server's 403 ``exceeded quota`` Status.

kmock ignores label selectors: a list returns every Pod of the namespace, whatever the selector said.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import kmock
from aiohttp import web

PODS = kmock.resource("", "v1", "pods")
FAKE_LABEL = "codegen-chat.k8s-fake"
CHANNEL = "v4.channel.k8s.io"


@dataclass
class FakePod:
    name: str
    namespace: str
    folder: Path
    containers: dict[str, str] = field(default_factory=dict)  # container name -> docker id
    started: float = field(default_factory=time.monotonic)
    gone: bool = False


class LoopbackCluster:
    """``async with LoopbackCluster() as cluster``: ``cluster.url`` is the API server; ``kubeconfig`` writes a file."""

    def __init__(self, memory_quota_mb: int | None = None) -> None:
        self.memory_quota_mb = memory_quota_mb
        self.emulator = kmock.KubernetesEmulator()
        self.pods: dict[tuple[str, str], FakePod] = {}
        self.created: list[dict[str, Any]] = []  # every Pod body the API accepted, as received
        self.refused: list[dict[str, Any]] = []
        self.execs: list[tuple[str, str, list[str]]] = []  # (pod, container, command) of every exec
        # Called as an exec arrives (its Pod's name, its query): what a test has the cluster do at that moment.
        self.on_exec: Callable[[str, Mapping[str, str]], Awaitable[None]] | None = None
        # Whether to cut an exec's stream before its command runs (given the command): what a broken connection or
        # a runtime that failed to start the command looks like on the wire, a websocket closed with no status.
        self.cut: Callable[[list[str]], bool] | None = None
        self._folder = Path(tempfile.mkdtemp(prefix="k8s-fake-"))
        self._server: kmock.Server | None = None
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self._kubelet: asyncio.Task[None] | None = None
        self._admission = asyncio.Lock()
        self.url = ""

    async def __aenter__(self) -> LoopbackCluster:
        await self.emulator.__aenter__()
        self._server = kmock.Server(self.emulator)
        await self._server.__aenter__()
        self.emulator.resources["v1/pods"] = {"kind": "Pod", "namespaced": True,
                                              "verbs": ["create", "get", "list", "delete", "watch"]}
        self._session = aiohttp.ClientSession()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("GET", "/api/v1/namespaces/{namespace}/pods/{name}/exec", self._exec)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        self._kubelet = asyncio.get_running_loop().create_task(self._run_kubelet())
        return self

    async def __aexit__(self, *_exc: object) -> None:
        if self._kubelet is not None:
            self._kubelet.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._kubelet
        for pod in list(self.pods.values()):
            await self._stop(pod)
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()
        if self._server is not None:
            await self._server.__aexit__(None, None, None)
        await self.emulator.__aexit__(None, None, None)
        await asyncio.to_thread(shutil.rmtree, self._folder, True)

    def kubeconfig(self, path: Path, namespace: str = "default") -> Path:
        path.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "loopback",
            "clusters": [{"name": "loopback", "cluster": {"server": self.url}}],
            "users": [{"name": "bot", "user": {"token": "loopback-token"}}],
            "contexts": [{"name": "loopback", "context": {"cluster": "loopback", "user": "bot",
                                                          "namespace": namespace}}],
        }), encoding="utf-8")
        return path

    # -- what the API holds ------------------------------------------------------------------------------------

    def stored(self, namespace: str) -> dict[str, dict[str, Any]]:
        """The Pods the emulator holds in ``namespace`` (not deleted), by name."""
        found = {}
        for (resource, ns, name), obj in self.emulator.objects.items():
            if resource == PODS and ns == namespace and not obj.deleted:
                found[name] = obj.raw
        return found

    def add_pod(self, namespace: str, name: str, labels: dict[str, str], phase: str = "Running") -> None:
        """A Pod some other process made (another replica's, or nobody's), known to the API only."""
        self.emulator.objects[PODS, namespace, name] = {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"containers": [{"name": "tests", "image": "none"}]}, "status": {"phase": phase}}

    def _patch(self, pod: FakePod, status: dict[str, Any]) -> None:
        key = (PODS, pod.namespace, pod.name)
        if key in self.emulator.objects and not self.emulator.objects[key].deleted:
            self.emulator.objects[key].patch({"status": status})

    # -- the API server in front -------------------------------------------------------------------------------

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        if request.method == "POST" and request.path.endswith("/pods"):
            async with self._admission:  # one create at a time, as the quota's own update serializes them
                refused = self._quota_refusal(request.match_info["tail"], json.loads(body))
                return refused if refused is not None else await self._pass_on(request, body)
        return await self._pass_on(request, body)

    async def _pass_on(self, request: web.Request, body: bytes) -> web.StreamResponse:
        assert self._server is not None and self._session is not None
        async with self._session.request(request.method, str(self._server.url).rstrip("/") + request.path_qs,
                                         data=body, headers={"Content-Type": request.content_type}) as answer:
            data = await answer.read()
            if request.method == "POST" and request.path.endswith("/pods") and answer.status < 300:
                self.created.append(json.loads(body))
            return web.Response(status=answer.status, body=data, content_type="application/json")

    def _quota_refusal(self, path: str, body: dict[str, Any]) -> web.Response | None:
        if self.memory_quota_mb is None:
            return None
        namespace = path.split("/")[3]
        used = sum(_memory_mb(pod) for pod in self.stored(namespace).values()
                   if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"))
        wanted = _memory_mb(body)
        if used + wanted <= self.memory_quota_mb:
            return None
        self.refused.append(body)
        name = body["metadata"]["name"]
        message = (f'pods "{name}" is forbidden: exceeded quota: sandbox-quota, requested: limits.memory={wanted}Mi, '
                   f"used: limits.memory={used}Mi, limited: limits.memory={self.memory_quota_mb}Mi")
        return web.json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                  "message": message, "reason": "Forbidden",
                                  "details": {"name": name, "kind": "pods"}, "code": 403}, status=403)

    # -- pods/exec ---------------------------------------------------------------------------------------------

    async def _exec(self, request: web.Request) -> web.StreamResponse:
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        if self.on_exec is not None:
            await self.on_exec(name, request.query)
        container = request.query.get("container", "")
        command = request.query.getall("command", [])
        pod = self.pods.get((namespace, name))
        if pod is None or container not in pod.containers or pod.gone:
            return web.json_response({"kind": "Status", "status": "Failure", "code": 404, "reason": "NotFound",
                                      "message": f'pods "{name}" not found or has no running {container!r}'},
                                     status=404)
        socket = web.WebSocketResponse(protocols=[CHANNEL])
        await socket.prepare(request)
        assert socket.ws_protocol == CHANNEL, "the client must ask for the channel protocol"
        self.execs.append((name, container, command))
        if self.cut is not None and self.cut(command):
            await socket.close()
            return socket
        wants_stdin = request.query.get("stdin", "false").lower() == "true"
        process = await asyncio.create_subprocess_exec(
            "docker", "exec", *(["-i"] if wants_stdin else []), pod.containers[container], *command,
            stdin=asyncio.subprocess.PIPE if wants_stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        pumps = [asyncio.ensure_future(_pump(process.stdout, socket, 1)),
                 asyncio.ensure_future(_pump(process.stderr, socket, 2))]
        feeding = asyncio.ensure_future(_feed(socket, process)) if wants_stdin else None
        try:
            code = await process.wait()
            await asyncio.gather(*pumps)
        finally:
            if feeding is not None:
                feeding.cancel()
            if process.returncode is None:
                process.kill()
        if await self._after_exec(pod, container, code):
            await socket.send_bytes(b"\x03" + json.dumps(_status(code)).encode())
        await socket.close()
        return socket

    async def _after_exec(self, pod: FakePod, container: str, code: int) -> bool:
        """What the kubelet notices once a command ended: an OOM kill in the container ends it whole. Whether the
        container still runs (then the exec's end is reported; else the stream is just cut, as a real one is)."""
        state = await _inspect(pod.containers[container])
        if (state.get("OOMKilled") or await asyncio.to_thread(_oom_kills, pod.containers[container])) and not pod.gone:
            await _docker("kill", pod.containers[container])
            self._terminated(pod, container, "OOMKilled", 137)
            return False
        return bool(state.get("Running")) and not pod.gone

    # -- the kubelet -------------------------------------------------------------------------------------------

    async def _run_kubelet(self) -> None:
        while True:
            for (resource, namespace, name), obj in list(self.emulator.objects.items()):
                if resource != PODS:
                    continue
                key = (namespace, name)
                if obj.deleted and key in self.pods:
                    await self._stop(self.pods.pop(key))
                elif not obj.deleted and key not in self.pods and (obj.raw.get("status") or {}).get("phase") is None:
                    self.pods[key] = FakePod(name, namespace, self._folder / name)
                    await self._start(self.pods[key], obj.raw)
            await asyncio.sleep(0.05)

    async def _start(self, pod: FakePod, manifest: dict[str, Any]) -> None:
        spec = manifest["spec"]
        pod.folder.mkdir(mode=0o777)
        pod.folder.chmod(0o777)  # an emptyDir: open to every user
        self._patch(pod, {"phase": "Pending"})
        for init in spec.get("initContainers", []):
            code = await _docker("run", "--rm", *_run_options(pod, spec, init), init["image"], *init["command"])
            if code != 0:
                self._patch(pod, {"phase": "Failed", "reason": "InitFailed"})
                return
        for container in spec["containers"]:
            args = ["run", "-d", "--label", f"{FAKE_LABEL}={pod.name}", *_run_options(pod, spec, container),
                    container["image"], *container["command"]]
            pod.containers[container["name"]] = (await _docker_out(*args)).strip()
        self._patch(pod, {"phase": "Running", "startTime": _now(), "containerStatuses": [
            {"name": c["name"], "ready": True, "restartCount": 0, "image": c["image"], "imageID": "",
             "state": {"running": {"startedAt": _now()}}} for c in spec["containers"]]})

    def _terminated(self, pod: FakePod, container: str, reason: str, code: int) -> None:
        key = (PODS, pod.namespace, pod.name)
        statuses = self.emulator.objects[key].raw["status"]["containerStatuses"]
        for status in statuses:
            if status["name"] == container:
                status["ready"] = False
                status["state"] = {"terminated": {"reason": reason, "exitCode": code, "finishedAt": _now()}}
        self._patch(pod, {"containerStatuses": statuses})

    async def expire(self, namespace: str, name: str) -> None:
        """What the kubelet does at the Pod's activeDeadlineSeconds: kill it, phase Failed, DeadlineExceeded."""
        pod = self.pods[(namespace, name)]
        pod.gone = True
        for docker_id in pod.containers.values():
            await _docker("kill", docker_id)
        self._patch(pod, {"phase": "Failed", "reason": "DeadlineExceeded",
                          "message": "Pod was active on the node longer than the specified deadline"})

    async def _stop(self, pod: FakePod) -> None:
        pod.gone = True
        if pod.containers:
            await _docker("rm", "-f", *pod.containers.values())
        await asyncio.to_thread(shutil.rmtree, pod.folder, True)


def _run_options(pod: FakePod, spec: dict[str, Any], container: dict[str, Any]) -> list[str]:
    """``docker run`` options for a container of the Pod, from its spec."""
    context = {**(spec.get("securityContext") or {}), **(container.get("securityContext") or {})}
    options = ["--network", "none", "--user", f"{context['runAsUser']}:{context.get('runAsGroup', context['runAsUser'])}"]
    if context.get("readOnlyRootFilesystem"):
        options.append("--read-only")
    if "ALL" in ((context.get("capabilities") or {}).get("drop") or []):
        options += ["--cap-drop", "ALL"]
    if context.get("allowPrivilegeEscalation") is False:
        options += ["--security-opt", "no-new-privileges"]
    limits = (container.get("resources") or {}).get("limits") or {}
    if "memory" in limits:
        memory = f"{_mebibytes(limits['memory'])}m"
        options += ["--memory", memory, "--memory-swap", memory]
    if "cpu" in limits:
        options += ["--cpus", str(int(limits["cpu"].rstrip("m")) / 1000)]
    volumes = {volume["name"]: volume for volume in spec.get("volumes", [])}
    for mount in container.get("volumeMounts", []):
        assert "emptyDir" in volumes[mount["name"]], "the fake kubelet mounts emptyDirs only"
        host = pod.folder / mount.get("subPath", "")
        options += ["-v", f"{host}:{mount['mountPath']}"]
    if container.get("workingDir"):
        options += ["-w", container["workingDir"]]
    for variable in container.get("env", []):
        options += ["-e", f"{variable['name']}={variable['value']}"]
    return options


def _memory_mb(pod: dict[str, Any]) -> int:
    spec = pod.get("spec") or {}
    return sum(_mebibytes(((c.get("resources") or {}).get("limits") or {}).get("memory", "0Mi"))
               for c in spec.get("containers", []))


def _mebibytes(quantity: str) -> int:
    number, unit = re.fullmatch(r"(\d+)(Mi|Gi)?", quantity).groups()  # type: ignore[union-attr]
    return int(number) * (1024 if unit == "Gi" else 1)


def _status(code: int) -> dict[str, Any]:
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    return {"metadata": {}, "status": "Failure", "message": f"command terminated with non-zero exit code: {code}",
            "reason": "NonZeroExitCode", "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}


async def _pump(stream: asyncio.StreamReader | None, socket: web.WebSocketResponse, channel: int) -> None:
    assert stream is not None
    while chunk := await stream.read(64 * 1024):
        with contextlib.suppress(ConnectionResetError):
            await socket.send_bytes(bytes([channel]) + chunk)


async def _feed(socket: web.WebSocketResponse, process: asyncio.subprocess.Process) -> None:
    assert process.stdin is not None
    async for message in socket:
        if message.type == aiohttp.WSMsgType.BINARY and message.data[:1] == b"\x00":
            process.stdin.write(message.data[1:])
            with contextlib.suppress(ConnectionResetError, BrokenPipeError):
                await process.stdin.drain()


async def _docker(*args: str) -> int:
    process = await asyncio.create_subprocess_exec("docker", *args, stdout=asyncio.subprocess.DEVNULL,
                                                   stderr=asyncio.subprocess.DEVNULL)
    return await process.wait()


async def _docker_out(*args: str) -> str:
    process = await asyncio.create_subprocess_exec("docker", *args, stdout=asyncio.subprocess.PIPE,
                                                   stderr=asyncio.subprocess.PIPE)
    out, err = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"docker {args[0]} failed: {err.decode()[-500:]}")
    return out.decode()


async def _inspect(docker_id: str) -> dict[str, Any]:
    try:
        state: dict[str, Any] = json.loads(await _docker_out("inspect", "--format", "{{json .State}}", docker_id))
        return state
    except RuntimeError:
        return {}


def _oom_kills(docker_id: str) -> int:
    """How many processes the kernel OOM-killed in the container's memory cgroup (v1 or v2, either driver)."""
    for path in (f"/sys/fs/cgroup/memory/docker/{docker_id}/memory.oom_control",
                 f"/sys/fs/cgroup/system.slice/docker-{docker_id}.scope/memory.events",
                 f"/sys/fs/cgroup/docker/{docker_id}/memory.events"):
        with contextlib.suppress(OSError):
            for line in Path(path).read_text(encoding="ascii").splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
    return 0


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
