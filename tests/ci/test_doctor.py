"""``codegen-chat doctor`` says, per allow-listed repository, whether the token can read its CI."""

from bot.ci.doctor import ci_checks
from bot.config.sections import CheckinConfig, CiConfig, Config, ReposConfig, RepoSettings, Secrets
from tests.ci.conftest import TOKEN


def config(github, **ci) -> Config:
    return Config(checkin=CheckinConfig(github_api_url=github.url, max_retries=0), ci=CiConfig(**ci),
                  repos=ReposConfig(allowed={"acme/billing": RepoSettings(), "acme/locked": RepoSettings(base="dev")}))


async def test_doctor_says_which_repositories_ci_the_token_can_read(github):
    github.add_repo("acme/billing")
    github.add_repo("acme/locked")
    github.fail(403, "Resource not accessible by personal access token", times=None,
                path="/repos/acme/locked/commits/dev/check-runs")
    results = {r.name: r for r in await ci_checks(config(github), Secrets(github_token=TOKEN))}
    assert results["CI acme/billing"].ok and "(0 on main)" in results["CI acme/billing"].detail
    locked = results["CI acme/locked"]
    assert not locked.ok and not locked.required and "Resource not accessible" in locked.detail
    assert "Checks (read)" in locked.fix


async def test_doctor_has_nothing_to_say_when_ci_is_not_followed_or_there_is_no_token(github):
    assert await ci_checks(config(github, follow=False), Secrets(github_token=TOKEN)) == []
    assert await ci_checks(config(github), Secrets()) == []
