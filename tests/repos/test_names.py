"""Naming a repository: the three written forms, the command line's, the allow-list and the place's default;
a repository that is not allowed is refused with a sentence before any model call."""

from __future__ import annotations

import pytest

from agents.errors import UserInputError
from bot.config.sections import Config, ReposConfig, RepoSettings
from bot.repos.names import RepoName, from_argument, named_in, resolve
from bot.runs.service import ChatRequest, Service
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox

REPOS = ReposConfig(allowed={"acme/billing": RepoSettings(base="develop", defaults_for=("slack:C01",)),
                             "acme/secret": RepoSettings(users=("U1",))})


@pytest.mark.parametrize("text, expected", [
    ("add retries to the client in acme/billing and test it", RepoName("acme/billing")),
    ("fix it, repo:acme/billing@release/2", RepoName("acme/billing", base="release/2")),
    ("see https://github.com/acme/billing/tree/main for the code", RepoName("acme/billing", base="main")),
    ("work in the other/tool repo", RepoName("other/tool")),
    ("put the helper in src/utils.py", None),  # a path, not a repository
    ("move it in lib/core", None),
    ("https://gitlab.com/acme/billing", None),  # not the configured git host
    ("fix it, repo:acme/billing@v2é.", RepoName("acme/billing", base="v2é")),  # whole, not cut at the é
    ("(**repo:acme/billing@release/2**), then", RepoName("acme/billing", base="release/2")),
    ("see https://me:s3cret@github.com/acme/billing/tree/dev", RepoName("acme/billing", base="dev")),
    ("see https://[redacted]@github.com/acme/billing", RepoName("acme/billing")),  # as the service masks it
    # Typographic quotes and an ellipsis, as a phone or Slack writes them, end the name.
    ("fix repo:acme/billing@main’s parser", RepoName("acme/billing", base="main")),
    ("“repo:acme/billing@release/2”", RepoName("acme/billing", base="release/2")),
    ("try repo:acme/billing@dev…", RepoName("acme/billing", base="dev")),
])
def test_the_written_forms(text, expected):
    assert named_in(text, REPOS) == expected


@pytest.mark.parametrize("text", ["repo:acme/billing@main;rm -rf", "repo:acme/billing@--upload-pack=touch",
                                  "repo:acme/billing@release/.hidden", "repo:acme/billing@a\u202eb"])
def test_a_base_branch_git_would_not_take_is_refused_not_cut_short(text):
    with pytest.raises(UserInputError, match="is not a branch name git accepts"):
        named_in(text, REPOS)


def test_allow_list_users_and_defaults():
    assert resolve(RepoName("acme/billing"), REPOS, ("terminal",), "u").base == "develop"
    assert resolve(None, REPOS, ("slack:C01", "slack"), "u").name.full_name == "acme/billing"
    assert resolve(None, REPOS, ("slack:C02", "slack"), "u") is None
    with pytest.raises(UserInputError, match=r'not one this bot may work on.*\[repos\."other/tool"\]'):
        resolve(RepoName("other/tool"), REPOS, ("terminal",), "u")
    with pytest.raises(UserInputError, match="not on the list of people"):
        resolve(RepoName("acme/secret"), REPOS, ("terminal",), "U2")
    with pytest.raises(UserInputError, match="only from its terminal"):
        resolve(RepoName(path="/srv/code"), REPOS, ("slack:C01",), "u")


def test_the_command_line_takes_a_name_a_url_or_a_folder(tmp_path):
    assert from_argument("acme/billing", "main") == RepoName("acme/billing", base="main")
    assert from_argument("https://github.com/acme/billing.git") == RepoName("acme/billing")
    assert from_argument(str(tmp_path)) == RepoName(path=str(tmp_path.resolve()))
    with pytest.raises(UserInputError, match="no such folder"):
        from_argument(str(tmp_path / "missing"))
    with pytest.raises(UserInputError, match="not a branch name"):
        from_argument("acme/billing", "bad..name")
    assert from_argument("https://me:tok@github.com/acme/billing", git_url="https://github.com").full_name == \
        "acme/billing"
    with pytest.raises(UserInputError, match="works on repositories of github.com .*, not of gitlab.com"):
        from_argument("https://gitlab.com/acme/billing", git_url="https://github.com")
    with pytest.raises(UserInputError, match="not of \\[redacted\\]"):  # a sentence, not a crash in urlsplit
        from_argument("https://[redacted]/acme/billing", git_url="https://github.com")



def test_a_url_of_a_branch_s_page_gives_the_base_and_anything_else_after_the_name_is_refused():
    assert from_argument("https://github.com/acme/billing/tree/release/2", git_url="https://github.com") == \
        RepoName("acme/billing", base="release/2")
    assert from_argument("https://github.com/acme/billing/tree/dev", "dev") == RepoName("acme/billing", base="dev")
    with pytest.raises(UserInputError, match="names the branch dev, and --base names main"):
        from_argument("https://github.com/acme/billing/tree/dev", "main")
    with pytest.raises(UserInputError, match="not a branch name"):
        from_argument("https://github.com/acme/billing/tree/main;rm")
    for elsewhere in ("https://github.com/acme/billing/pull/3", "https://github.com/acme/billing/blob/main/a.py",
                      "https://github.com/acme/billing/tree"):
        with pytest.raises(UserInputError, match="ends in /OWNER/NAME"):
            from_argument(elsewhere)

@pytest.mark.parametrize("url", ["https://www.github.com/acme/billing", "https://GitHub.com:443/acme/billing",
                                 "https://github.com./acme/billing", "http://github.com:80/acme/billing"])
def test_the_git_host_however_a_url_writes_it_is_the_git_host(url):
    assert from_argument(url, git_url="https://github.com").full_name == "acme/billing"
    assert named_in(f"fix the parser in {url}", REPOS) == RepoName("acme/billing")
    with pytest.raises(UserInputError, match="not of github.com:8443"):
        from_argument("https://github.com:8443/acme/billing", git_url="https://github.com")


async def test_a_request_for_a_repository_not_allowed_is_refused_before_any_model_call(tmp_path):
    from bot.repos.desk import RepoDesk
    from bot.store.sqlite import SQLiteStore

    config = Config(repos=REPOS)
    store = await SQLiteStore.open(tmp_path / "db.sqlite3")
    model = ScriptedModel()
    try:
        service = Service(config, store, model, ScriptedSandbox(), repos=RepoDesk(config, ""))
        with pytest.raises(UserInputError, match="other/tool is not one this bot may work on"):
            service.check(ChatRequest("slack", "t", "u", "add retries in the other/tool repo", places=("slack:C01",)))
        assert model.calls == []
        with pytest.raises(UserInputError) as refused:
            service.check(ChatRequest("terminal", "t", "u", "add retries", repo="https://me:s3cretpass@github.com/acme",
                                      places=("terminal",)))
        assert "s3cretpass" not in str(refused.value) and "/OWNER/NAME" in str(refused.value)
    finally:
        await store.close()


def test_repository_tables_are_read_from_config_toml_and_a_wrong_key_is_named(tmp_path):
    from bot.config.sections import ConfigError, load_config

    path = tmp_path / "config.toml"
    path.write_text('[repos]\ndraft = false\n[repos."acme/billing"]\ntest_command = "make test"\n'
                    'defaults_for = ["slack:C01"]\n')
    repos = load_config(path).repos
    assert not repos.draft and repos.allowed["acme/billing"].test_command == "make test"
    assert resolve(None, repos, ("slack:C01",), "u").name.full_name == "acme/billing"
    path.write_text('[repos."acme/billing"]\ntest_comand = "x"\n')
    with pytest.raises(ConfigError, match=r'repos\."acme/billing"\.test_comand: unknown key'):
        load_config(path)


def test_a_channel_default_comes_before_its_servers_and_the_platforms():
    repos = ReposConfig(allowed={"acme/a": RepoSettings(defaults_for=("discord:G1",)),
                                 "acme/b": RepoSettings(defaults_for=("discord:C5",)),
                                 "acme/c": RepoSettings(defaults_for=("discord",))})
    assert resolve(None, repos, ("discord:C5", "discord:G1", "discord"), "u").name.full_name == "acme/b"
    assert resolve(None, repos, ("discord:C6", "discord:G1", "discord"), "u").name.full_name == "acme/a"
    assert resolve(None, repos, ("discord:C6", "discord:G2", "discord"), "u").name.full_name == "acme/c"
