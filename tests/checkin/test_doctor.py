"""checkin_checks: what ``codegen-chat doctor`` says about the GitHub token."""

from __future__ import annotations

import socket

from bot.checkin import checkin_checks
from bot.config.sections import CheckinConfig, Config, Secrets
from tests.checkin.support import TOKEN
from tests.fakes.github_server import FakeGitHub


def config_for(url: str) -> Config:
    return Config(checkin=CheckinConfig(github_api_url=url, write_interval_s=0))


async def test_no_token_is_a_warning_that_names_the_fallback() -> None:
    (check,) = await checkin_checks(Config(), Secrets())

    assert not check.ok and not check.required
    assert "GITHUB_TOKEN is not set" in check.detail
    assert "output folder" in check.detail and "attached to the thread" in check.detail
    assert "gist scope" in check.fix


async def test_a_valid_token_with_the_gist_scope(github: FakeGitHub) -> None:
    checks = await checkin_checks(config_for(github.url), Secrets(github_token=TOKEN))

    assert [c.ok for c in checks] == [True, True]
    assert "octocat" in checks[0].detail and github.url in checks[0].detail
    assert checks[1].detail == "the token has the gist scope"
    assert github.calls() == [("GET", "/user")]


async def test_a_token_without_the_gist_scope_fails(github: FakeGitHub) -> None:
    github.scopes = "repo, read:org"

    checks = await checkin_checks(config_for(github.url), Secrets(github_token=TOKEN))

    assert checks[0].ok
    assert not checks[1].ok and checks[1].required
    assert "lacks the gist scope (its scopes: repo, read:org)" in checks[1].detail


async def test_a_fine_grained_token_lists_no_scopes_and_passes_with_advice(github: FakeGitHub) -> None:
    github.scopes = None

    checks = await checkin_checks(config_for(github.url), Secrets(github_token=TOKEN))

    assert checks[1].ok
    assert "Gists: read and write" in checks[1].detail


async def test_a_bad_token_fails_without_showing_it(github: FakeGitHub) -> None:
    (check,) = await checkin_checks(config_for(github.url), Secrets(github_token="ghp_not_the_right_one"))

    assert not check.ok and check.required
    assert "bad credentials" in check.detail
    assert "ghp_not_the_right_one" not in check.detail + check.fix


async def test_unreachable_github_fails_with_the_url() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"

    (check,) = await checkin_checks(config_for(url), Secrets(github_token=TOKEN))

    assert not check.ok
    assert f"cannot reach GitHub at {url}" in check.detail
