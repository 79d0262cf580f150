"""Gateway payloads a user's actions produce: a /code command, a button press, a message."""

from __future__ import annotations

from typing import Any

from tests.fakes.discord_api import APP_ID, BOT_ID, CHANNEL_ID, GUILD_ID, FakeDiscord, member, user

ANN = 800_000_000_000_000_001
BOB = 800_000_000_000_000_002


def _channel(fake: FakeDiscord, channel_id: int) -> dict[str, Any]:
    return fake.threads.get(channel_id) or fake.text_channel(channel_id, "general")


def _interaction(fake: FakeDiscord, kind: int, data: dict[str, Any], channel_id: int, user_id: int,
                 roles: tuple[int, ...]) -> dict[str, Any]:
    interaction_id = fake.next_id()
    token = f"interaction-token-{interaction_id}"
    fake.interaction_channel(token, channel_id)
    return {"id": str(interaction_id), "application_id": str(APP_ID), "type": kind, "token": token, "version": 1,
            "guild_id": str(GUILD_ID), "channel_id": str(channel_id), "channel": _channel(fake, channel_id),
            "member": member(user_id, "ann" if user_id == ANN else "bob", roles), "data": data,
            "app_permissions": "2248473465835073", "locale": "en-US", "guild_locale": "en-US", "entitlements": [],
            "authorizing_integration_owners": {"0": str(GUILD_ID)}, "context": 0,
            "attachment_size_limit": 10 * 1024 * 1024}


def slash_code(fake: FakeDiscord, task: str, *, user_id: int = ANN, roles: tuple[int, ...] = (),
               channel_id: int = CHANNEL_ID, file: dict[str, Any] | None = None) -> dict[str, Any]:
    """INTERACTION_CREATE for ``/code task:... [file:...]``; ``file`` is an attachment from ``fake.add_file``."""
    options: list[dict[str, Any]] = [{"name": "task", "type": 3, "value": task}]
    data: dict[str, Any] = {"id": str(fake.next_id()), "name": "code", "type": 1, "options": options}
    if file:
        options.append({"name": "file", "type": 11, "value": file["id"]})
        data["resolved"] = {"attachments": {file["id"]: file}}
    return _interaction(fake, 2, data, channel_id, user_id, roles)


def button_press(fake: FakeDiscord, message_id: int, *, user_id: int = ANN, roles: tuple[int, ...] = ()) -> dict[str, Any]:
    """INTERACTION_CREATE for a press of the first button on ``message_id``."""
    message = fake.messages[message_id]
    custom_id = message.payload["components"][0]["components"][0]["custom_id"]
    payload = _interaction(fake, 3, {"custom_id": custom_id, "component_type": 2}, message.channel_id, user_id, roles)
    payload["message"] = {k: v for k, v in message.payload.items() if not k.startswith("_")}
    fake.component_message(payload["token"], message_id)
    return payload


def message(fake: FakeDiscord, channel_id: int, content: str, *, user_id: int = ANN, roles: tuple[int, ...] = (),
            mention_bot: bool = False, mention_role: int | None = None,
            attachments: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """MESSAGE_CREATE as a user's message arrives (content empty when the bot lacks the intent to read it)."""
    text = f"<@{BOT_ID}> {content}" if mention_bot else f"<@&{mention_role}> {content}" if mention_role else content
    author = member(user_id, "ann" if user_id == ANN else "bob", roles)
    return {"id": str(fake.next_id()), "channel_id": str(channel_id), "guild_id": str(GUILD_ID),
            "author": author["user"], "member": {k: v for k, v in author.items() if k != "user"}, "content": text,
            "timestamp": "2026-01-01T00:00:00+00:00", "edited_timestamp": None, "tts": False,
            "mention_everyone": False, "mentions": [user(BOT_ID, "codegen", bot=True)] if mention_bot else [],
            "mention_roles": [str(mention_role)] if mention_role else [], "attachments": attachments or [],
            "embeds": [], "pinned": False, "type": 0,
            "flags": 0, "components": []}
