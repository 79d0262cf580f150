"""The pure parts: thread names, mentions, and the allowlist rules."""

from __future__ import annotations

import pytest

from adapters.discord_access import NO_DMS, WRONG_CHANNEL, WRONG_GUILD, WRONG_ROLE, place_of, refusal
from adapters.discord_text import thread_name, without_mention
from bot.config import DiscordConfig
from bot.settings import SettingsError


def test_thread_names_are_the_first_line_within_discords_limit():
    assert thread_name("\n  write a CSV parser  \nwith tests") == "write a CSV parser"
    assert len(thread_name("x" * 300)) == 100 and thread_name("x" * 300).endswith("…")
    assert thread_name("<@123> ") == "codegen run"


def test_the_bots_mentions_are_taken_out_of_the_task():
    assert without_mention("<@42> write it <@!42>", 42) == "write it"
    assert without_mention("<@&7> write it for <@43>", 42, role_id=7) == "write it for <@43>"


@pytest.mark.parametrize("config, place, expected", [
    (DiscordConfig(), place_of(None, 1, None, ()), NO_DMS),
    (DiscordConfig(), place_of(5, 1, None, ()), None),
    (DiscordConfig(allowed_guilds=(6,)), place_of(5, 1, None, ()), WRONG_GUILD),
    (DiscordConfig(allowed_channels=(2,)), place_of(5, 1, None, ()), WRONG_CHANNEL),
    (DiscordConfig(allowed_channels=(2,)), place_of(5, 99, 2, ()), None),  # a thread of an allowed channel
    (DiscordConfig(allowed_roles=(8,)), place_of(5, 1, None, (7,)), WRONG_ROLE),
    (DiscordConfig(allowed_roles=(8,)), place_of(5, 1, None, (7, 8)), None),
])
def test_allowlists(config, place, expected):
    assert refusal(config, place) == expected


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
    from bot.config import load_config

    path = tmp_path / "config.toml"
    path.write_text(CONFIG_BLOCK)
    discord = load_config(path).discord
    assert discord.enabled and discord.sync_guilds == (900000000000000010,) and discord.allowed_roles == (900000000000000030,)
