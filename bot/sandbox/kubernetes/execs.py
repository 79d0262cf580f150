"""One command in a Pod's container, through ``pods/exec`` over the ``v4.channel.k8s.io`` websocket protocol.

Every message is one channel byte and its data: 0 stdin (what we send), 1 stdout, 2 stderr, 3 the command's end as
a ``Status`` (``Success``, or ``NonZeroExitCode`` with the code among its causes). ``v4`` cannot close stdin alone, so
what goes in on stdin is read by a command that knows its length (``head -c N``), never up to an end of file.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp
from kubernetes_asyncio.client import CoreV1Api
from kubernetes_asyncio.stream import WsApiClient

from agents.errors import SandboxError
from bot.sandbox.output import SplitOutput

STDIN, STDOUT, STDERR, STATUS = 0, 1, 2, 3
STDIN_CHUNK = 64 * 1024


async def run(ws: WsApiClient, namespace: str, pod: str, container: str, argv: list[str], output: SplitOutput,
              stdin: bytes = b"") -> int | None:
    """Run ``argv`` to its end, its output into ``output``; its exit code (None when the stream ended without
    saying: the container or the Pod went away)."""
    api = CoreV1Api(api_client=ws)
    # With _preload_content=False the websocket client hands back the connection, not the text (typed as str).
    connecting: Any = await api.connect_get_namespaced_pod_exec(
        pod, namespace, command=argv, container=container, stdin=bool(stdin), stdout=True,  # type: ignore[arg-type]
        stderr=True, tty=False, _preload_content=False)
    status: dict[str, Any] | None = None
    try:
        socket = await connecting.__aenter__()
    except aiohttp.WSServerHandshakeError as error:
        if error.status in (401, 403):  # not the Pod's end: the bot may not exec at all
            raise SandboxError(f"Kubernetes refused pods/exec in namespace {namespace!r} ({error.status} "
                               f"{error.message}): the bot's service account needs create and get on pods/exec "
                               "there (deploy/k8s/rbac.yaml)") from None
        raise
    async with socket:
        for start in range(0, len(stdin), STDIN_CHUNK):
            await socket.send_bytes(bytes([STDIN]) + stdin[start:start + STDIN_CHUNK])
        async for message in socket:
            if message.type not in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT):
                break
            data = message.data if isinstance(message.data, bytes) else message.data.encode("utf-8")
            if not data:
                continue
            channel, payload = data[0], data[1:]
            if channel == STDOUT:
                output.add(payload, None)
            elif channel == STDERR:
                output.add(None, payload)
            elif channel == STATUS and payload:
                status = json.loads(payload)
    return exit_code(status)


def exit_code(status: dict[str, Any] | None) -> int | None:
    """The exit code a ``Status`` on the status channel gives (None for none, or an end that names none)."""
    if status is None:
        return None
    if status.get("status") == "Success":
        return 0
    for cause in (status.get("details") or {}).get("causes") or []:
        if cause.get("reason") == "ExitCode" and str(cause.get("message", "")).isdigit():
            return int(cause["message"])
    return None
