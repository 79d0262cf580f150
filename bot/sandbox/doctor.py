"""``codegen-chat doctor`` checks for the sandbox: is Docker reachable, which images are present."""

from __future__ import annotations

import asyncio

import docker

from agents.errors import SandboxError
from bot.config.doctor_types import CheckResult
from bot.config.sections import Config, SandboxConfig, Secrets
from bot.sandbox.client import ENGINE_ERRORS, check_runtime, engine_failed, open_checked
from bot.sandbox.images import present_image
from bot.sandbox.languages import image_candidates, languages

DOCTOR_TIMEOUT_S = 10.0


async def sandbox_checks(config: Config, secrets: Secrets) -> list[CheckResult]:
    """One check for the engine, then one per language image (missing images warn, not fail)."""
    del secrets  # the sandbox needs none, and never sees any
    sandbox = config.sandbox
    if not sandbox.enabled:
        return [CheckResult("sandbox", True, "disabled in config ([sandbox] enabled = false)", required=False)]
    if sandbox.backend == "kubernetes":
        return [await _kubernetes_check(sandbox)]
    try:
        client = await open_checked(sandbox, DOCTOR_TIMEOUT_S)
    except SandboxError as error:
        return [CheckResult("docker", False, str(error),
                            fix="start dockerd (or Docker Desktop), or point [sandbox] docker_host at an engine")]
    try:
        return await _engine_and_images(client, sandbox)
    except ENGINE_ERRORS as error:
        return [CheckResult("docker", False, str(engine_failed(error, "the checks")),
                            fix="start dockerd (or Docker Desktop), or point [sandbox] docker_host at an engine")]
    finally:
        await asyncio.to_thread(client.close)


async def _kubernetes_check(sandbox: SandboxConfig) -> CheckResult:
    """The cluster answers, and the bot may list Pods in the sandbox's namespace."""
    namespace = sandbox.kubernetes.namespace
    fix = "set [sandbox.kubernetes] kubeconfig/namespace, and apply deploy/k8s/ (docs/kubernetes.md)"
    try:
        from bot.sandbox.kubernetes.api import CLUSTER_ERRORS, open_cluster, refusal

        cluster = await open_cluster(sandbox.kubernetes)
    except (SandboxError, ImportError) as error:
        return CheckResult("kubernetes", False, str(error), fix=fix)
    try:
        await asyncio.wait_for(cluster.core.list_namespaced_pod(namespace, limit=1), DOCTOR_TIMEOUT_S)
    except CLUSTER_ERRORS as error:
        from kubernetes_asyncio.client.exceptions import ApiException

        detail = str(refusal(error, namespace, "listing Pods")) if isinstance(error, ApiException) else str(error)
        return CheckResult("kubernetes", False, f"{cluster.host}: {detail}"[:400], fix=fix)
    finally:
        await cluster.close()
    return CheckResult("kubernetes", True, f"{cluster.host} answers; test Pods go to namespace {namespace}")


async def _engine_and_images(client: docker.DockerClient, sandbox: SandboxConfig) -> list[CheckResult]:
    version = await asyncio.to_thread(client.version)
    results = [CheckResult("docker", True, f"engine {version.get('Version', '?')} reachable")]
    if sandbox.runtime:
        try:
            await asyncio.to_thread(check_runtime, client, sandbox)
            results.append(CheckResult("sandbox runtime", True, f"{sandbox.runtime} registered with the engine"))
        except SandboxError as error:
            results.append(CheckResult("sandbox runtime", False, str(error).partition(": register")[0],
                                       fix=f"register {sandbox.runtime} with the engine (docs/sandbox.md), or set "
                                           "[sandbox] runtime = \"\""))
    for name, language in sorted(languages(sandbox).items()):
        image = await asyncio.to_thread(present_image, client, language, sandbox)
        detail = f"{image} present" if image else f"missing ({' or '.join(image_candidates(language, sandbox))})"
        results.append(CheckResult(f"sandbox image: {name}", image is not None, detail,
                                   fix=f"codegen-chat sandbox build --language {name}", required=False))
    return results
