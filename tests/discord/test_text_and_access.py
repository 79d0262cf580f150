"""The pure parts: thread names, mentions, and the allowlists as the core gets them."""

from __future__ import annotations

import pytest

from adapters.discord.platform import platform
from adapters.discord.text import thread_name, without_mention
from bot.chat.access import NO_DIRECT_MESSAGES, WRONG_CHANNEL, WRONG_ROLE, WRONG_SERVER, Place, refusal
from bot.config.sections import DiscordConfig
from bot.config.settings import SettingsError


def test_thread_names_are_the_first_line_within_discords_limit():
    assert thread_name("\n  write a CSV parser  \nwith tests") == "write a CSV parser"
    assert len(thread_name("x" * 300)) <= 100 and thread_name("x" * 300).endswith("…")
    words = "write a parser for the " + "very " * 30 + "long format"
    assert thread_name(words).endswith("very…") and len(thread_name(words)) <= 100  # cut at a word
    assert not thread_name("write a CSV parser, please. " * 5).endswith((" …", ",…", ".…"))
    assert thread_name("<@123> ") == "codegen run"


def test_the_bots_mentions_are_taken_out_of_the_task():
    assert without_mention("<@42> write it <@!42>", 42) == "write it"
    assert without_mention("<@&7> write it for <@43>", 42, role_id=7) == "write it for <@43>"


def place(server: int | None, channel: int, roles: tuple[int, ...] = ()) -> Place:
    """As ``adapters.discord.platform`` makes it: a thread's channel is its parent, no server is a DM."""
    return Place("1", str(channel), str(server or ""), frozenset(map(str, roles)), direct=server is None)


@pytest.mark.parametrize("config, where, expected", [
    (DiscordConfig(allowed_guilds=(5,)), place(None, 1), NO_DIRECT_MESSAGES),
    (DiscordConfig(allowed_guilds=(5,)), place(5, 1), None),
    (DiscordConfig(allowed_guilds=(6,)), place(5, 1), WRONG_SERVER),
    (DiscordConfig(), place(5, 1), WRONG_SERVER),  # a public bot added to anyone's server serves no one there
    (DiscordConfig(sync_guilds=(5,)), place(5, 1), None),  # the servers /code is synced to, when none is allowed
    (DiscordConfig(sync_guilds=(5,)), place(6, 1), WRONG_SERVER),
    (DiscordConfig(allowed_guilds=(6,), sync_guilds=(5,)), place(5, 1), WRONG_SERVER),
    (DiscordConfig(any_server=True), place(5, 1), None),
    (DiscordConfig(allowed_guilds=(5,), allowed_channels=(2,)), place(5, 1), WRONG_CHANNEL),
    (DiscordConfig(allowed_guilds=(5,), allowed_channels=(2,)), place(5, 2), None),
    (DiscordConfig(allowed_guilds=(5,), allowed_roles=(8,)), place(5, 1, (7,)), WRONG_ROLE),
    (DiscordConfig(allowed_guilds=(5,), allowed_roles=(8,)), place(5, 1, (7, 8)), None),
])
def test_the_allowlists_of_the_discord_section_are_the_cores_rules(config, where, expected):
    assert refusal(platform(config).access, where) == expected


@pytest.mark.parametrize("fields, key", [
    ({"api_url": "discord.example"}, "discord.api_url"),
    ({"api_url": "http://127.0.0.1:1/api/v10"}, "discord.api_url"),  # without gateway_url
    ({"max_message_chars": 2001}, "discord.max_message_chars"),
    ({"thread_archive_minutes": 30}, "discord.thread_archive_minutes"),
    ({"update_interval_s": -1.0}, "discord.update_interval_s"),
])
def test_bad_discord_settings_name_their_key(fields, key):
    with pytest.raises(SettingsError) as caught:
        DiscordConfig(**fields)
    assert caught.value.key == key


CONFIG_BLOCK = """
[discord]
enabled = true
message_content_intent = false
sync_guilds = [900000000000000010]
allowed_guilds = [900000000000000010]
allowed_channels = []
allowed_roles = [900000000000000030]
update_interval_s = 1.0
max_message_chars = 2000
inline_code_max_chars = 1500
max_attachment_bytes = 256000
thread_archive_minutes = 1440
"""


def test_the_documented_config_block_loads(tmp_path):
    from bot.config.sections import load_config

    path = tmp_path / "config.toml"
    path.write_text(CONFIG_BLOCK)
    discord = load_config(path).discord
    assert discord.enabled and discord.sync_guilds == (900000000000000010,) and discord.allowed_roles == (900000000000000030,)
