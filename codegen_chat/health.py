"""``codegen-chat health``: asks a running bot whether it is ready (exit 0) or not (1); a container's HEALTHCHECK
runs it. It dials where this config's bot answers the probes: the HTTP server of the platform that carries
them (``codegen_chat.platforms.health_carrier``), else the bot's own health server. It asks from this machine
(and to the web chat, with its token), so it is told what is wrong with a part that is not ready."""

from __future__ import annotations

import argparse
import asyncio
import urllib.error
import urllib.request

from bot.config.sections import Config, ConfigError, Secrets
from bot.health.checks import PROBE_TIMEOUT_S
from codegen_chat.platforms import health_carrier


def register(commands: argparse._SubParsersAction) -> None:
    health = commands.add_parser("health", help="ask the running bot whether it is ready (exit 0) or not (1)")
    health.add_argument("--alive", action="store_true", help="only whether it is alive (/healthz)")
    health.set_defaults(handler=_health_command)


def health_url(config: Config, path: str = "/readyz") -> str:
    """Where this config's bot serves its health endpoints."""
    carrier = health_carrier(config)
    if carrier is not None:
        _, host, port = carrier
        return f"http://{_reachable(host)}:{port}{path}"
    runtime = config.runtime
    if not runtime.health_port:
        raise ConfigError("runtime.health_port is 0: this bot serves no health endpoints of its own")
    return f"http://{_reachable(runtime.health_host)}:{runtime.health_port}{path}"


def _reachable(host: str) -> str:
    """A listening address as a client on the same machine dials it (any address: loopback)."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


async def _health_command(args: argparse.Namespace, config: Config, secrets: Secrets) -> int:
    url = health_url(config, "/healthz" if args.alive else "/readyz")
    status, body = await asyncio.to_thread(_get, url, _credentials(config, secrets))
    print(body if body else f"{url}: {status}")
    return 0 if status == 200 else 1


def _credentials(config: Config, secrets: Secrets) -> dict[str, str]:
    """The web chat tells what is wrong with a part only to someone it lets in: this command shows the token."""
    carrier = health_carrier(config)
    if carrier is not None and carrier[0] == "web" and secrets.codegen_web_token:
        return {"Authorization": f"Bearer {secrets.codegen_web_token}"}
    return {}


def _get(url: str, headers: dict[str, str]) -> tuple[int | str, str]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                    timeout=PROBE_TIMEOUT_S * 2) as response:
            return response.status, response.read(64_000).decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read(64_000).decode("utf-8", "replace")
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        return "no answer", f"{url}: no answer ({reason}); is the bot running?"
