"""The health endpoints ride on the web chat's server when it runs: one port to expose, and probes need no
sign-in even where the page does."""

from __future__ import annotations

import dataclasses
import json

from agents.errors import ModelError
from bot.health.checks import Health
from tests.conftest import with_changes

TOKEN = "t" * 40


async def test_healthz_and_readyz_answer_on_the_web_chat_s_port_without_signing_in(start_web, web_config, secrets,
                                                                                  store):
    config = with_changes(web_config, web={"enabled": True})
    health = Health(store, config.sandbox, carrier="web")  # what `serve` decides for this config (test_health.py)
    health.expect("web")
    bot = await start_web(config, secrets_=dataclasses.replace(secrets, codegen_web_token=TOKEN), health=health)

    status, _, _ = await bot.get("/api/conversations")
    assert status == 401  # the page and its API still need the token
    status, body, _ = await bot.get("/healthz")
    assert (status, body) == (200, {"alive": True})
    status, body, _ = await bot.get("/readyz")
    assert body["parts"]["web"]["ok"] is True  # the web chat counts as connected once it serves
    assert body["parts"]["store"]["ok"] is True
    assert status == (200 if body["ready"] else 503)


async def test_readyz_tells_what_is_wrong_only_to_someone_the_chat_lets_in(start_web, web_config, secrets, store):
    config = with_changes(web_config, web={"enabled": True})
    health = Health(store, config.sandbox, carrier="web")
    health.expect("web")
    health.model.failed(ModelError("The model endpoint http://10.1.2.3:8001/v1 refused the request (HTTP 500)"))
    bot = await start_web(config, secrets_=dataclasses.replace(secrets, codegen_web_token=TOKEN), health=health)

    status, body, _ = await bot.get("/readyz")
    assert status in (200, 503) and body["parts"]["model"] == {"ok": False, "required": False}
    assert "10.1.2.3" not in json.dumps(body)
    _, body, _ = await bot.get("/readyz", headers={"Authorization": f"Bearer {TOKEN}"})
    assert "10.1.2.3" in body["parts"]["model"]["detail"]


async def test_without_the_web_chat_enabled_its_server_carries_no_health_endpoints(start_web, web_config, store):
    # `serve` then gives them a server of their own (or Slack's): the web chat's port does not answer for them.
    bot = await start_web(web_config, health=Health(store, web_config.sandbox))
    status, _, _ = await bot.get("/healthz")
    assert status == 404
