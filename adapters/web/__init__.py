"""The web chat: the team in a browser, drawn by the same run renderer as every chat platform.

``serve`` runs the ASGI app under uvicorn until cancelled (``codegen-chat web``, or ``serve`` with
``[web] enabled = true``); ``doctor_checks`` reports its settings. The pieces:

    platform      the web chat as the core sees it: Markdown as it is, how a thread is drawn
    conversation  one conversation's messages (the renderer's ChatThread) and the pages watching it
    hub           the conversations in memory, drawn again from the store on demand; keeping pages current
    history       what is read back from the store; a stored conversation drawn again
    panel         the side panel: files, test rounds, status, tokens and cost, the result
    tasks         a task as the page sends it, files included, checked like every attachment
    access        who may use it (loopback, CODEGEN_WEB_TOKEN, a sign-in proxy's header); security headers
    routes        the page, its assets, the JSON API and the live stream (server-sent events)
    server        uvicorn in the bot's event loop; doctor checks
    static/       the page: index.html, app.js, app.css, and vendor/ (marked, DOMPurify, highlight.js)
"""

from adapters.web.server import doctor_checks, serve
from bot.config.sections import Config
from bot.runs.plugin import PlatformPlugin


def _address(config: Config) -> tuple[str, int]:
    return config.web.host, config.web.port


# Its settings are reported by `codegen-chat web`'s checks whether or not `serve` runs it.
PLATFORM = PlatformPlugin("web", serve, doctor_checks, secrets=("CODEGEN_WEB_TOKEN",), health_address=_address,
                          doctor_even_when_off=True)

__all__ = ["PLATFORM", "doctor_checks", "serve"]
