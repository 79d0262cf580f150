"""deploy/compose.yaml keeps its safety promises: only the host-socket profile hands the bot a Docker
socket; the proxy is reachable by the bot alone; the bot gets time to stop its runs before Docker kills it."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
SERVICES = COMPOSE["services"]
BOTS = {name: service for name, service in SERVICES.items() if name.startswith("bot-")}


def mounts(service: dict) -> list[str]:
    return [str(volume) for volume in service.get("volumes", [])]


def test_each_profile_runs_one_bot():
    profiles = sorted(p for bot in BOTS.values() for p in bot["profiles"])
    assert profiles == ["host-socket", "proxy", "remote", "rootless"]


@pytest.mark.parametrize("name", sorted(set(BOTS) - {"bot-host-socket"}))
def test_no_bot_but_the_host_socket_one_gets_the_host_s_socket(name):
    assert not any("docker.sock:/var/run/docker.sock" in m for m in mounts(BOTS[name]))


def test_the_proxy_is_reachable_by_the_bot_only():
    proxy = SERVICES["docker-proxy"]
    assert "ports" not in proxy and proxy["networks"] == ["engine"]
    assert COMPOSE["networks"]["engine"]["internal"] is True
    on_engine = sorted(n for n, s in SERVICES.items() if "engine" in s.get("networks", []))
    assert on_engine == ["bot-proxy", "docker-proxy"]
    assert BOTS["bot-proxy"]["environment"]["DOCKER_HOST"] == "tcp://docker-proxy:2375"


@pytest.mark.parametrize("name", sorted(BOTS))
def test_every_bot_is_locked_down_and_stops_in_time(name):
    bot = BOTS[name]
    grace = tomllib.loads((ROOT / "config.toml").read_text())["runtime"]["shutdown_grace_s"]
    assert float(bot["stop_grace_period"].rstrip("s")) > grace
    assert bot["read_only"] is True and bot["cap_drop"] == ["ALL"] and bot["init"] is True
    assert "no-new-privileges:true" in bot["security_opt"]
    assert any(m.startswith("codegen-data:/data") for m in mounts(bot))  # the store survives a restart
    secrets = {"OPENAI_API_KEY", "GITHUB_TOKEN", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET",
               "DISCORD_TOKEN"}
    assert secrets <= set(bot["environment"])
