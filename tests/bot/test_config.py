"""Config: the repo's config.toml, strict typing, one clear line per mistake, secrets from the environment."""

from pathlib import Path

import pytest

from bot.config import Config, ConfigError, Secrets, find_config_path, load_config

ROOT = Path(__file__).resolve().parents[2]


def load(tmp_path, text):
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_config(path)


def test_the_repos_config_matches_the_built_in_defaults_where_it_does_not_tune():
    config = load_config(ROOT / "config.toml")
    defaults = Config()
    for section in ("llm", "budget", "input", "storage", "limits", "checkin", "slack", "discord"):
        assert getattr(config, section) == getattr(defaults, section), section
    assert config.agent("programmer").temperature == 0.1 and config.agent("tester").model == "gpt-4o-mini"
    assert config.prices["gpt-4o"].output_per_million == 10.0


def test_no_file_means_built_in_defaults():
    assert load_config(None) == Config()


def test_role_settings_lay_over_the_default_table(tmp_path):
    config = load(tmp_path, '[agents.default]\nmodel = "m1"\ntemperature = 0.5\n[agents.tester]\nmodel = "m2"\n')
    assert (config.agent("tester").model, config.agent("tester").temperature) == ("m2", 0.5)
    assert config.agent("planner").model == "m1" and config.agent("planner").max_tokens == 4096


@pytest.mark.parametrize("text, message", [
    ('[budget]\nmax_rounds = "six"\n', "budget.max_rounds: expected a whole number, got a string"),
    ("[budget]\nmax_rounds = 0\n", "budget.max_rounds: must be greater than 0, got 0"),
    ("[budgets]\nmax_rounds = 3\n", "budgets: unknown key (known keys here: agents, budget,"),
    ("[llm]\ntimeout = 3\n", "llm.timeout: unknown key"),
    ("[agents.reviewer]\nmodel = \"x\"\n", "agents.reviewer: not a role (use one of: default, manager, planner"),
    ("[agents.default]\ntemperature = 3.5\n", "agents.manager.temperature: must be between 0 and 2"),
    ("[llm]\nmax_retries = true\n", "llm.max_retries: expected a whole number, got true/false"),
    ('[slack]\nallowed_users = "U1"\n', "slack.allowed_users: expected a list, got a string"),
    ("[sandbox]\nmemory_mb = -1\n", "sandbox.memory_mb"),
    ("[[budget]]\n", "budget: expected a table, got a list"),
    ("budget = [\n", "not valid TOML"),
])
def test_each_mistake_is_one_line_naming_the_key(tmp_path, text, message):
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert str(caught.value).startswith(str(tmp_path / "config.toml"))


def test_a_missing_file_says_how_to_point_at_one(tmp_path):
    with pytest.raises(ConfigError, match="no such config file .*--config PATH or set CODEGEN_CONFIG"):
        load_config(tmp_path / "nope.toml")


def test_integers_are_accepted_where_numbers_are_expected(tmp_path):
    assert load(tmp_path, "[budget]\nmax_wall_s = 60\n").budget.max_wall_s == 60.0


def test_config_path_precedence(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert find_config_path(None, {}) is None
    (tmp_path / "config.toml").write_text("")
    assert find_config_path(None, {}) == Path("config.toml")
    assert find_config_path(None, {"CODEGEN_CONFIG": "/etc/c.toml"}) == Path("/etc/c.toml")
    assert find_config_path("/x.toml", {"CODEGEN_CONFIG": "/etc/c.toml"}) == Path("/x.toml")


def test_secrets_come_from_the_environment_only():
    secrets = Secrets.from_env({"OPENAI_API_KEY": " sk-1 ", "GITHUB_TOKEN": "ghp_x", "UNRELATED": "y"})
    assert secrets.openai_api_key == "sk-1" and secrets.github_token == "ghp_x" and secrets.slack_bot_token == ""
    assert set(secrets.values()) == {"sk-1", "ghp_x"}
    with pytest.raises(ConfigError, match="^DISCORD_TOKEN is not set: export it"):
        secrets.require("discord_token")
