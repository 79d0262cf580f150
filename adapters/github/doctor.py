"""``codegen-chat doctor`` for the pull-request platform: the webhook secret, the token, the repositories.
(Whether ``GITHUB_TOKEN`` is a workflow's own is checked for every command, in ``bot.repos.doctor``.)"""

from __future__ import annotations

from bot.config.doctor_types import CheckResult
from bot.config.sections import Config, Secrets


async def doctor_checks(config: Config, secrets: Secrets) -> list[CheckResult]:
    settings = config.github
    results = [CheckResult("github webhook", True, f"POST http://{settings.host}:{settings.port}{settings.path}; "
                           f"mentions of @{settings.bot_login} are taken")]
    if not secrets.github_webhook_secret:
        results.append(CheckResult("github webhook secret", False, "GITHUB_WEBHOOK_SECRET is not set: every delivery "
                                   "would be refused", "set a random secret on the webhook and export it as "
                                   "GITHUB_WEBHOOK_SECRET"))
    if not (secrets.github_token or secrets.github_app_id):
        results.append(CheckResult("github token", False, "neither GITHUB_TOKEN nor a GitHub App is set: the bot "
                                   "cannot answer on a pull request", "export GITHUB_TOKEN, or GITHUB_APP_ID, "
                                   "GITHUB_APP_PRIVATE_KEY and GITHUB_APP_INSTALLATION_ID"))
    if not config.repos.allowed:
        results.append(CheckResult("github repositories", False, "[repos] lists no repository: every request on a "
                                   "pull request would be refused", 'add a [repos."OWNER/NAME"] table for each',
                                   required=False))
    return results
