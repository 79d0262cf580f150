"""Discord: ``/code`` and mentions open a thread where the team works. Translation only:

    app        serve: the discord.py client, the /code command, intents, command sync
    handlers   /code, messages and Stop presses in, calls to the service out
    platform   Discord as the core sees it: markup, thread style, allowlists, where a request comes from
    thread     the ChatThread: messages, the Stop button (a persistent component), attached files
    text       thread names and the bot's mention
    endpoints  Discord itself, or a Discord-compatible server the config names
    doctor     token, invite link and intent checks
"""

from adapters.discord.app import CodegenBot, make_bot, serve
from adapters.discord.doctor import doctor_checks
from adapters.discord.endpoints import endpoints
from bot.runs.plugin import PlatformPlugin

PLATFORM = PlatformPlugin("discord", serve, doctor_checks, secrets=("DISCORD_TOKEN",))

__all__ = ["PLATFORM", "CodegenBot", "doctor_checks", "endpoints", "make_bot", "serve"]
