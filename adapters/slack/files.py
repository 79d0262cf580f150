"""Files a user shares with a task: read from Slack with the bot token, kept only when they are text."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from agents.errors import UserInputError
from agents.types import Attachment
from bot.runs.attachments import check_size, to_attachment

log = logging.getLogger(__name__)

# The bot token goes only to Slack's own file hosts (or to the configured API host: an on-premise
# gateway, the tests' loopback fake), never to a URL that merely appears in an event.
SLACK_FILE_DOMAINS = ("slack.com", "slack-gov.com", "slack-edge.com")


async def read_shared_files(files: list[dict[str, Any]], client: AsyncWebClient, session: aiohttp.ClientSession,
                            api_url: str, max_bytes: int) -> tuple[Attachment, ...]:
    """The files of a message as attachments; ``UserInputError`` names the first one refused."""
    return tuple([await _read_one(file, client, session, api_url, max_bytes) for file in files])


async def _read_one(file: dict[str, Any], client: AsyncWebClient, session: aiohttp.ClientSession,
                    api_url: str, max_bytes: int) -> Attachment:
    if file.get("file_access") == "check_file_info" or not file.get("url_private"):
        file = await _file_info(client, str(file.get("id", "")))  # Slack Connect events leave the details out
    name = str(file.get("name") or file.get("title") or file.get("id"))
    size = int(file.get("size") or 0)
    check_size(name, size, max_bytes)
    url = str(file.get("url_private_download") or file.get("url_private") or "")
    if not _trusted(url, api_url):
        raise UserInputError(f"{name} is not stored on Slack, so the bot cannot read it; paste it into the message.")
    data = await _download(session, url, str(client.token or ""), name, max_bytes)
    return to_attachment(name, data, max_bytes)


async def _file_info(client: AsyncWebClient, file_id: str) -> dict[str, Any]:
    try:
        response = await client.files_info(file=file_id)
    except SlackApiError as error:
        log.warning("files.info %s failed: %s", file_id, error.response.get("error"))
        raise UserInputError("An attached file could not be read from Slack (is the files:read scope granted?).") from None
    return dict(response.get("file") or {})


async def _download(session: aiohttp.ClientSession, url: str, token: str, name: str, max_bytes: int) -> bytes:
    try:
        async with session.get(url, headers={"Authorization": f"Bearer {token}"}) as response:
            # Without access Slack answers 200 with its sign-in page, so an HTML reply is a refusal too.
            if response.status != 200 or response.content_type == "text/html":
                log.warning("downloading %s: HTTP %s (%s)", name, response.status, response.content_type)
                raise UserInputError(f"{name} could not be downloaded from Slack (is the files:read scope granted?).")
            return await _read_capped(response, max_bytes)
    except aiohttp.ClientError as error:
        log.warning("downloading %s failed: %s", name, error)
        raise UserInputError(f"{name} could not be downloaded from Slack; try again.") from None


async def _read_capped(response: aiohttp.ClientResponse, max_bytes: int) -> bytes:
    """At most one byte more than ``max_bytes``: enough for ``to_attachment`` to say it is too large."""
    data = bytearray()
    async for chunk in response.content.iter_chunked(64 * 1024):
        data += chunk
        if len(data) > max_bytes:
            break
    return bytes(data[: max_bytes + 1])


def _trusted(url: str, api_url: str) -> bool:
    parts, api = urlsplit(url), urlsplit(api_url)
    if parts.scheme == api.scheme and parts.netloc == api.netloc:
        return True
    host = parts.hostname or ""
    return parts.scheme == "https" and any(host == d or host.endswith("." + d) for d in SLACK_FILE_DOMAINS)
