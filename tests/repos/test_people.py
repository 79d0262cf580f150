"""Whom a repository's ``users`` and ``co_authors`` name: a platform's person, never the same id on a platform
where anyone may pick it (a GitHub login, a web sign-in)."""

from __future__ import annotations

import pytest

from agents.errors import UserInputError
from bot.config.sections import ReposConfig, RepoSettings
from bot.repos.names import RepoName, may_read, resolve
from bot.repos.people import co_author

ADA = "Ada Lovelace <ada@example.com>"
REPOS = ReposConfig(allowed={
    "acme/billing": RepoSettings(users=("U0123ABCD", "github:ada", "web:ada@example.com", "discord:803511"),
                                 co_authors={"U0123ABCD": ADA, "github:ada": ADA}),
    "acme/open": RepoSettings(),
})


@pytest.mark.parametrize("platform, user, allowed", [
    ("slack", "U0123ABCD", True),  # a bare id: the ids Slack and Discord give, and the terminal's account
    ("discord", "U0123ABCD", True),
    ("terminal", "U0123ABCD", True),
    ("github", "U0123ABCD", False),  # anyone can register that login
    ("web", "U0123ABCD", False),  # or be called that by a sign-in proxy
    ("github", "ada", True), ("slack", "ada", False), ("web", "ada", False),
    ("web", "ada@example.com", True), ("github", "ada@example.com", False),
    ("discord", "803511", True), ("slack", "803511", False),
])
def test_a_person_is_named_on_one_platform(platform, user, allowed):
    named = RepoName("acme/billing")
    if allowed:
        assert resolve(named, REPOS, (platform,), user, platform=platform).name == named
    else:
        with pytest.raises(UserInputError, match="not on the list of people"):
            resolve(named, REPOS, (platform,), user, platform=platform)
    assert may_read("ACME/billing", REPOS, platform, user) is allowed
    assert may_read("acme/open", REPOS, platform, user) and may_read("acme/unlisted", REPOS, platform, user)


def test_a_co_author_is_named_on_one_platform_too():
    co_authors = REPOS.allowed["acme/billing"].co_authors
    assert co_author(co_authors, "slack", "U0123ABCD") == ADA and co_author(co_authors, "github", "ada") == ADA
    assert co_author(co_authors, "github", "U0123ABCD") == "" and co_author(co_authors, "web", "ada") == ""
