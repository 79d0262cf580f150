"""The cluster's clients, opened from ``[sandbox.kubernetes]``, and what it answers turned into one sentence each.

A kubeconfig named in the config wins; else the service account Kubernetes gives a Pod (the bot's own Deployment,
``deploy/k8s/``); else ``~/.kube/config``. Files are read in a worker thread: the event loop never waits on a disk.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import yaml
from kubernetes_asyncio.client import ApiClient, Configuration, CoreV1Api
from kubernetes_asyncio.client.exceptions import ApiException
from kubernetes_asyncio.config import ConfigException, load_incluster_config
from kubernetes_asyncio.config.kube_config import KubeConfigLoader
from kubernetes_asyncio.stream import WsApiClient

from agents.errors import SandboxError
from bot.config.sections import KubernetesConfig

# What talking to a cluster that failed or went away raises, from each layer.
CLUSTER_ERRORS: tuple[type[Exception], ...] = (ApiException, aiohttp.ClientError, asyncio.TimeoutError, OSError)
DEFAULT_KUBECONFIG = "~/.kube/config"
WS_HEARTBEAT_S = 30.0


@dataclass
class Cluster:
    """One cluster's clients: ``core`` for plain calls, ``ws`` for ``pods/exec`` (a websocket)."""

    core: CoreV1Api
    api: ApiClient
    ws: WsApiClient
    host: str

    async def close(self) -> None:
        await self.api.close()
        await self.ws.close()


async def open_cluster(config: KubernetesConfig) -> Cluster:
    """The clients for the configured cluster, or ``SandboxError`` saying which configuration could not be read."""
    configuration = Configuration()
    try:
        if config.kubeconfig or not os.environ.get("KUBERNETES_SERVICE_HOST"):
            await _load_kubeconfig(config.kubeconfig or DEFAULT_KUBECONFIG, config.context, configuration)
        else:
            await asyncio.to_thread(load_incluster_config, configuration)
    except (ConfigException, OSError, yaml.YAMLError) as error:
        where = config.kubeconfig or ("the service account" if os.environ.get("KUBERNETES_SERVICE_HOST")
                                      else DEFAULT_KUBECONFIG)
        raise SandboxError(f"the Kubernetes configuration in {where} could not be used ({_first_line(error)}): "
                           "set [sandbox.kubernetes] kubeconfig (and context), or run the bot in the cluster") from None
    api = ApiClient(configuration)
    # Pings keep a quiet test's exec open through proxies and load balancers that close idle connections.
    return Cluster(CoreV1Api(api), api, WsApiClient(configuration, heartbeat=WS_HEARTBEAT_S), str(configuration.host))


async def _load_kubeconfig(name: str, context: str, configuration: Configuration) -> None:
    path = await asyncio.to_thread(Path(name).expanduser)
    text = await asyncio.to_thread(path.read_text, encoding="utf-8")
    loader = KubeConfigLoader(config_dict=yaml.safe_load(text), config_base_path=str(path.parent),
                              active_context=context or None)
    await loader.load_and_set(configuration)


def quota_full(error: ApiException) -> bool:
    """Whether the API server refused a create because the namespace's ResourceQuota is used up."""
    return error.status == 403 and "exceeded quota" in api_message(error)


def refusal(error: ApiException, namespace: str, what: str, waited_s: float = 0.0) -> SandboxError:
    """The one sentence for a call the API server refused: a full quota, missing rights, no such namespace."""
    message = api_message(error)
    if quota_full(error):
        return SandboxError(f"the Kubernetes namespace {namespace!r} had no quota left for {what} for "
                            f"{waited_s:.0f}s ({message}): wait for other tests to finish, or raise its ResourceQuota "
                            "(deploy/k8s/quota.yaml)")
    if error.status == 403:
        return SandboxError(f"Kubernetes refused {what} in namespace {namespace!r} ({message}): give the bot's "
                            "service account the Role in deploy/k8s/rbac.yaml")
    if error.status == 404:
        return SandboxError(f"the Kubernetes namespace {namespace!r} was not found ({message}): apply "
                            "deploy/k8s/namespace.yaml or set [sandbox.kubernetes] namespace")
    return SandboxError(f"Kubernetes refused {what} ({error.status}: {message})")


def api_message(error: ApiException) -> str:
    """The ``message`` of the Status the API server sent, else its reason."""
    body = error.body.decode("utf-8", "replace") if isinstance(error.body, bytes) else str(error.body or "")
    try:
        status = json.loads(body)
    except ValueError:
        return (body or str(error.reason or ""))[:300]
    return str(status.get("message") or status.get("reason") or error.reason or "")[:300]


def cluster_failed(error: BaseException, host: str, during: str = "the test run") -> SandboxError:
    """The one sentence for a cluster that failed or went away mid-way."""
    detail = api_message(error) if isinstance(error, ApiException) else _first_line(error)
    return SandboxError(f"the Kubernetes API at {host} failed during {during} ({detail}); "
                        "`codegen-chat doctor` checks the sandbox")


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return text[:200]
