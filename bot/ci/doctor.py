"""``codegen-chat doctor`` for following CI: may the token read each allow-listed repository's commit statuses and
check runs? (Setting the bot's own status and reading Actions logs cannot be tried without doing them.)"""

from __future__ import annotations

from agents.errors import CheckInError
from bot.config.doctor_types import CheckResult
from bot.config.sections import Config, Secrets
from bot.repos.desk import AppCredentials, RepoDesk

NAME = "CI"
FIX = ("give the token Commit statuses (read and write), Checks (read) and Actions (read) on it, or set "
       "[ci] follow = false")


async def ci_checks(config: Config, secrets: Secrets) -> list[CheckResult]:
    if not config.ci.follow or not config.repos.allowed:
        return []
    try:
        github = await RepoDesk(config, secrets.github_token, app=AppCredentials.from_secrets(secrets)).github()
    except CheckInError:
        return []  # the repository checks say what is wrong with the App
    if github is None:
        return []  # the repository checks say a token is needed
    from bot.ci.rest import CiRest  # PyGithub: only when there is something to check

    rest = CiRest(github)
    results = []
    for full_name, settings in config.repos.allowed.items():
        try:
            base = settings.base or (await github.facts(full_name)).default_branch
            checks = await rest.checks(full_name, base)
        except CheckInError as error:
            results.append(CheckResult(f"{NAME} {full_name}", False, f"its CI cannot be followed: {error}", FIX,
                                       required=False))
            continue
        results.append(CheckResult(f"{NAME} {full_name}", True, f"its statuses and check runs can be read "
                                   f"({len(checks)} on {base})", required=False))
    return results
