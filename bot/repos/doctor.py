"""``codegen-chat doctor`` checks for repository work: for each allow-listed repository, can the bot's token
(or GitHub App) see it and push to it, and does its base branch exist?"""

from __future__ import annotations

from agents.errors import CheckInError
from bot.config.doctor_types import CheckResult
from bot.config.sections import Config, Secrets
from bot.repos.desk import AppCredentials

NAME = "Repository"
FIX = ("give the token Contents and Pull requests read and write on it (fine-grained), or install the GitHub App "
       "there; or remove its [repos.\"OWNER/NAME\"] table")


async def repo_checks(config: Config, secrets: Secrets) -> list[CheckResult]:
    if not config.repos.allowed:
        return []
    from bot.repos.github import GitHubApp, GitHubRepos  # PyGithub: only when there is something to check

    app = AppCredentials.from_secrets(secrets)
    token = secrets.github_token
    if app is not None:
        try:
            token = await GitHubApp(app.app_id, app.private_key, app.installation_id).installation_token(config.checkin)
        except CheckInError as error:
            return [CheckResult(f"{NAME}s", False, f"the GitHub App could not get an installation token: {error}",
                                "check GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY and GITHUB_APP_INSTALLATION_ID")]
    if not token:
        return [CheckResult(f"{NAME}s", False, "[repos] lists repositories but neither GITHUB_TOKEN nor a GitHub App "
                            "is set: the work can be fetched only from public ones and never pushed",
                            "export GITHUB_TOKEN, or GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY and GITHUB_APP_INSTALLATION_ID")]
    github = GitHubRepos.with_token(config.checkin, token)
    results = []
    for full_name, settings in config.repos.allowed.items():
        try:
            facts = await github.facts(full_name)
        except CheckInError as error:
            results.append(CheckResult(f"{NAME} {full_name}", False, str(error), FIX))
            continue
        base = settings.base or facts.default_branch
        if not facts.can_push:
            results.append(CheckResult(f"{NAME} {full_name}", False, "the token may read it but not push to it", FIX))
        else:
            results.append(CheckResult(f"{NAME} {full_name}", True, f"readable and writable; work starts from {base}"))
    return results
