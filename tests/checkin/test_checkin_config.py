"""The ``[checkin]`` table: read from config.toml, each bad value named with its key."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config.sections import CheckinConfig, ConfigError, load_config

BLOCK = """
[checkin]
publish_failed = false
public = true
github_api_url = "https://github.example.com/api/v3"
timeout_s = 10
max_retries = 5
max_file_bytes = 500000
backoff_s = 2.0
max_wait_s = 30
write_interval_s = 1.5
"""


def test_the_documented_block_loads(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(BLOCK)

    checkin = load_config(path).checkin

    assert checkin == CheckinConfig(
        publish_failed=False, public=True, github_api_url="https://github.example.com/api/v3", timeout_s=10,
        max_retries=5, max_file_bytes=500_000, backoff_s=2.0, max_wait_s=30, write_interval_s=1.5,
    )


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ('github_api_url = "api.github.com"', "checkin.github_api_url"),
        ("timeout_s = 0", "checkin.timeout_s"),
        ("max_retries = -1", "checkin.max_retries"),
        ("max_wait_s = -5", "checkin.max_wait_s"),
        ("public = \"yes\"", "checkin.public"),
    ],
)
def test_a_bad_value_names_its_key(tmp_path: Path, line: str, key: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f"[checkin]\n{line}\n")

    with pytest.raises(ConfigError, match=key):
        load_config(path)
