"""``codegen-chat doctor`` checks for repository work: for each allow-listed repository, can the bot's token
(or GitHub App) see it and push to it, and does its base branch exist? And in GitHub Actions, is the token the
workflow's own (a push made with it starts no workflow run, GitHub's rule against loops, so the bot's pull
requests would never get their CI)?"""

from __future__ import annotations

import os
from collections.abc import Mapping

from agents.errors import CheckInError
from bot.config.doctor_types import CheckResult
from bot.config.sections import Config, Secrets
from bot.repos.desk import AppCredentials

NAME = "Repository"
FIX = ("give the token Contents and Pull requests read and write on it (fine-grained), or install the GitHub App "
       "there; or remove its [repos.\"OWNER/NAME\"] table")


ACTIONS_FIX = ("give the step a GitHub App installation token (actions/create-github-app-token) or a fine-grained "
               "personal access token as GITHUB_TOKEN, so the bot's pushes start the pull request's workflows")
WORKFLOW_TOKEN_FLAG = "CODEGEN_CHAT_WORKFLOW_TOKEN"  # set by action.yml when the step was given github.token


def actions_token_warning(secrets: Secrets, env: Mapping[str, str]) -> list[CheckResult]:
    """A warning when GITHUB_TOKEN looks like the workflow's own: in GitHub Actions, the action says it is
    (``WORKFLOW_TOKEN_FLAG``), or it is an installation token (``ghs_``) with no GitHub App of the bot's set."""
    if env.get("GITHUB_ACTIONS") != "true" or not secrets.github_token:
        return []
    said = env.get(WORKFLOW_TOKEN_FLAG) == "true"
    looks = secrets.github_token.startswith("ghs_") and not secrets.github_app_id
    if not (said or looks):
        return [CheckResult("GitHub token in Actions", True, "not the workflow's own GITHUB_TOKEN")]
    unsure = "" if said else " (a GitHub App's installation token looks the same: then all is well)"
    return [CheckResult("GitHub token in Actions", False,
                        "GITHUB_TOKEN " + ("is" if said else "looks like") + " the workflow's own token: pushes made "
                        f"with it start no new workflow runs, so the pull request's CI will not run{unsure}",
                        ACTIONS_FIX, required=False)]


async def repo_checks(config: Config, secrets: Secrets) -> list[CheckResult]:
    warned = actions_token_warning(secrets, os.environ)
    return warned + await _repository_checks(config, secrets)


async def _repository_checks(config: Config, secrets: Secrets) -> list[CheckResult]:
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
