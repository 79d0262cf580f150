"""``codegen-chat doctor`` checks for the check-in: is a GitHub token set, valid, and allowed to write Gists?"""

from __future__ import annotations

import asyncio

import requests
from github import Github
from github.GithubException import GithubException

from bot.checkin.faults import SCOPE_HINT
from bot.checkin.gist import github_client
from bot.config.doctor_types import CheckResult
from bot.config.sections import Config, Secrets
from bot.safety.redact import Redactor

NAME = "GitHub Gist check-in"
SCOPE_NAME = "GitHub token scope"
NEW_TOKEN_FIX = "create a token with the gist scope (or Gists: read and write) and export it as GITHUB_TOKEN"


async def checkin_checks(config: Config, secrets: Secrets) -> list[CheckResult]:
    token = secrets.github_token
    if not token:
        return [_no_token()]
    url = config.checkin.github_api_url
    client = github_client(config.checkin, token)
    try:
        login, scopes = await asyncio.to_thread(_whoami, client)
    except GithubException as error:
        return [CheckResult(NAME, False, Redactor([token])(_refusal(error, url)), NEW_TOKEN_FIX)]
    except requests.RequestException as error:
        detail = f"cannot reach GitHub at {url} ({type(error).__name__})"
        return [CheckResult(NAME, False, detail, "check checkin.github_api_url and the network")]
    valid = CheckResult(NAME, True, f"GITHUB_TOKEN is valid: Gists are published as {login} via {url}")
    return [valid, _scope(scopes)]


def _whoami(client: Github) -> tuple[str, list[str] | None]:
    """GET /user: the token's login and, for a classic token, its scopes (``None`` when not listed)."""
    login = client.get_user().login
    scopes = client.oauth_scopes
    return login, None if scopes is None else [s.strip() for s in scopes if s.strip()]


def _scope(scopes: list[str] | None) -> CheckResult:
    if scopes is None:
        return CheckResult(SCOPE_NAME, True, "a fine-grained or app token: GitHub does not list its permissions, "
                           "so make sure it has Gists: read and write")
    if "gist" in scopes:
        return CheckResult(SCOPE_NAME, True, "the token has the gist scope")
    listed = ", ".join(scopes) or "none"
    return CheckResult(SCOPE_NAME, False, f"the token lacks the gist scope (its scopes: {listed})", NEW_TOKEN_FIX)


def _no_token() -> CheckResult:
    return CheckResult(
        NAME, False,
        "GITHUB_TOKEN is not set: results are saved to the output folder (terminal) "
        "or attached to the thread (Slack, Discord) instead of a Gist",
        "to publish Gists, export GITHUB_TOKEN with a token that has the gist scope",
        required=False,
    )


def _refusal(error: GithubException, url: str) -> str:
    if error.status == 401:
        return f"GitHub at {url} rejected GITHUB_TOKEN as bad credentials (wrong, expired or revoked); {SCOPE_HINT}"
    message = error.data.get("message", "") if isinstance(error.data, dict) else ""
    return f"GitHub at {url} answered {error.status} {message}".rstrip()
