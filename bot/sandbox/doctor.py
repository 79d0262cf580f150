"""``codegen-chat doctor`` checks for the sandbox: is Docker reachable, which images are present."""

from __future__ import annotations

import asyncio

import docker

from agents.errors import SandboxError
from bot.config.doctor_types import CheckResult
from bot.config.sections import Config, SandboxConfig, Secrets
from bot.sandbox.client import ENGINE_ERRORS, engine_failed, open_checked
from bot.sandbox.images import present_image
from bot.sandbox.languages import image_candidates, languages

DOCTOR_TIMEOUT_S = 10.0


async def sandbox_checks(config: Config, secrets: Secrets) -> list[CheckResult]:
    """One check for the engine, then one per language image (missing images warn, not fail)."""
    del secrets  # the sandbox needs none, and never sees any
    sandbox = config.sandbox
    if not sandbox.enabled:
        return [CheckResult("sandbox", True, "disabled in config ([sandbox] enabled = false)", required=False)]
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


async def _engine_and_images(client: docker.DockerClient, sandbox: SandboxConfig) -> list[CheckResult]:
    version = await asyncio.to_thread(client.version)
    results = [CheckResult("docker", True, f"engine {version.get('Version', '?')} reachable")]
    for name, language in sorted(languages(sandbox).items()):
        image = await asyncio.to_thread(present_image, client, language, sandbox)
        detail = f"{image} present" if image else f"missing ({' or '.join(image_candidates(language, sandbox))})"
        results.append(CheckResult(f"sandbox image: {name}", image is not None, detail,
                                   fix=f"codegen-chat sandbox build --language {name}", required=False))
    return results
