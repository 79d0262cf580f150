"""``codegen-chat web``: the web chat alone, on this machine by default (http://127.0.0.1:8000).

It is ``serve`` with only the web chat enabled, so the same service, limits and shutdown apply; under
``codegen-chat serve`` the web chat runs beside Slack and Discord when ``[web] enabled = true``.
"""

from __future__ import annotations

import argparse
import dataclasses

from bot.config.sections import Config, Secrets, WebConfig, with_flags
from bot.config.settings import argument_for
from codegen_chat.platforms import only
from codegen_chat.serve import serve_platforms


def register(commands: argparse._SubParsersAction) -> None:
    web = commands.add_parser("web", help="serve the web chat (http://127.0.0.1:8000 unless [web] says otherwise)")
    web.add_argument("--host", type=argument_for(WebConfig, "host"),
                     help="the address to listen on (default: web.host); any but loopback needs "
                          "CODEGEN_WEB_TOKEN or web.user_header")
    web.add_argument("--port", type=argument_for(WebConfig, "port"), help="the port to listen on (default: web.port)")
    web.set_defaults(handler=_web)


async def _web(args: argparse.Namespace, config: Config, secrets: Secrets) -> int:
    alone = only_web(config, args.host, args.port)
    from adapters.web.access import check_binding  # the web server's package, only for this command

    check_binding(alone.web, secrets.codegen_web_token)  # refused before anything starts
    return await serve_platforms(alone, secrets)


def only_web(config: Config, host: str | None = None, port: int | None = None) -> Config:
    """``config`` with the web chat enabled (at ``host``:``port`` when given) and the other chat platforms off."""
    given = {"host": host, "port": port}
    web = with_flags(config.web, **{f"--{name}": (name, value) for name, value in given.items() if value is not None})
    return only(dataclasses.replace(config, web=web), "web")
