"""Config: the repo's config.toml, strict typing, one clear line per mistake, secrets from the environment."""

import argparse
import dataclasses
import os
import re
import subprocess
import sys
import types
import typing
from pathlib import Path

import pytest

from agents.errors import UserInputError
from agents.manager import FixReplies
from bot.config.sections import BudgetConfig, Config, ConfigError, SandboxConfig, Secrets, find_config_path, load_config
from bot.config.settings import Checked, Range, SettingsError, argument_for, number_argument
from bot.runs.service import team_settings

ROOT = Path(__file__).resolve().parents[2]


def load(tmp_path, text):
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_config(path)


def test_the_repos_config_matches_the_built_in_defaults_where_it_does_not_tune():
    config = load_config(ROOT / "config.toml")
    defaults = Config()
    for section in ("llm", "budget", "input", "storage", "limits", "checkin", "slack", "discord", "github"):
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
    ("[budget]\nmax_rounds = 0\n", "budget.max_rounds: must be between 1 and 1,000, got 0"),
    ("[budgets]\nmax_rounds = 3\n", "budgets: unknown key (known keys here: agents, budget,"),
    ("[llm]\ntimeout = 3\n", "llm.timeout: unknown key"),
    ("[agents.reviewer]\nmodel = \"x\"\n", "agents.reviewer: not a role (use one of: default, manager, planner"),
    ("[agents.default]\ntemperature = 3.5\n", "agents.default.temperature: must be between 0 and 2, got 3.5"),
    ("[agents.tester]\ntemperature = nan\n", "agents.tester.temperature: must be a finite number, got nan"),
    ("[sandbox]\ntimeout_s = inf\n", "sandbox.timeout_s: must be a finite number, got inf"),
    ("[sandbox]\npids_limit = -1\n", "sandbox.pids_limit: must be between 16 and 4,194,304, got -1"),
    ("[llm]\nrequest_timeout_s = 0\n", "llm.request_timeout_s: must be greater than 0 and at most 86,400, got 0"),
    ('[slack]\nmode = "webhook"\n', "slack.mode: must be one of \"socket\", \"http\", got 'webhook'"),
    ('[discord]\napi_url = "http://h/api"\n', "discord.api_url: goes together with gateway_url: set both or neither"),
    ("[discord]\nthread_archive_minutes = 30\n", "discord.thread_archive_minutes: must be one of 60, 1440, 4320"),
    ("[discord]\nallowed_roles = [1, -5]\n", "discord.allowed_roles[1]: must be between 1 and"),
    ('[prices."m"]\ninput_per_million = -0.5\n', "prices.m.input_per_million: must be between 0 and 10,000, got -0.5"),
    ('[sandbox.languages.ruby]\nimage = "r"\ntest_command = "t"\nenv = { HOME = 1 }\n',
     "sandbox.languages.ruby.env.HOME: expected a string, got a whole number"),
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


# -- every number, whatever its key: finite and in range -------------------------------------------

SAMPLE_KEYS = {"agents": "default", "prices": "gpt-4o"}  # a name to use for tables of tables


def numeric_keys(cls=Config, table=""):
    """(table, key, is a list) for every number the config reads, found from the declarations, so a
    key added later is covered without touching this test."""
    for name, hint in typing.get_type_hints(cls, include_extras=True).items():
        if name == "source":
            continue
        base = typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated else hint
        union = typing.get_origin(base) in (typing.Union, types.UnionType)
        options = [a for a in typing.get_args(base) if a is not type(None)] if union else [base]
        base = typing.get_args(options[0])[0] if typing.get_origin(options[0]) is typing.Annotated else options[0]
        origin, args = typing.get_origin(base), typing.get_args(base)
        if dataclasses.is_dataclass(base):
            yield from numeric_keys(base, f"{table}.{name}" if table else name)
        elif origin is dict and dataclasses.is_dataclass(args[1]) and name in SAMPLE_KEYS:
            yield from numeric_keys(args[1], f'{name}."{SAMPLE_KEYS[name]}"')
        elif origin is tuple:
            item = typing.get_args(args[0])[0] if typing.get_origin(args[0]) is typing.Annotated else args[0]
            if item in (int, float):
                yield table, name, True
        elif base in (int, float):
            yield table, name, False


NUMERIC_KEYS = list(numeric_keys())
FLOAT_IN_AN_INT = "expected a whole number, got a number"
BAD_NUMBERS = {  # the value as written in TOML -> what the message may say
    "nan": ("must be a finite number, got nan", FLOAT_IN_AN_INT),
    "inf": ("must be a finite number, got inf", FLOAT_IN_AN_INT),
    "-inf": ("must be a finite number, got -inf", FLOAT_IN_AN_INT),
    "-1": ("got -1",),
    "1e30": ("got 1e+30", FLOAT_IN_AN_INT),
    "1000000000000000000000000000000": ("got 1,000,000,000,000,000,000,000,000,000,000", "got 1e+30",
                                        "got 1000000000000000000000000000000"),
    "true": ("got true/false",),
    '"5"': ("got a string",),
}


def test_the_walk_finds_the_numbers():
    keys = {f"{t}.{k}" for t, k, _ in NUMERIC_KEYS}
    assert {"budget.max_rounds", "sandbox.timeout_s", 'agents."default".temperature', 'prices."gpt-4o".input_per_million',
            "discord.sync_guilds", "slack.http_port", "checkin.max_retries"} <= keys
    assert len(keys) > 50


@pytest.mark.parametrize("table, key, listed", NUMERIC_KEYS, ids=[f"{t}.{k}" for t, k, _ in NUMERIC_KEYS])
def test_no_number_setting_takes_nan_infinity_negatives_absurd_sizes_bools_or_strings(tmp_path, table, key, listed):
    for raw, words in BAD_NUMBERS.items():
        value = f"[{raw}]" if listed else raw
        with pytest.raises(ConfigError) as caught:
            load(tmp_path, f"[{table}]\n{key} = {value}\n")
        message = str(caught.value)
        shown_key = f"{table}.{key}".replace('"', "") + ("[0]" if listed else "")
        assert f": {shown_key}: " in message and "\n" not in message, (raw, message)
        assert any(w in message for w in words), (raw, message)


@pytest.mark.parametrize("text, key", [
    ("[budget]\nmax_rounds = 0\n", "budget.max_rounds"),
    ("[budget]\nmax_wall_s = 0\n", "budget.max_wall_s"),
    ("[budget]\nmax_tokens = 0\n", "budget.max_tokens"),
    ("[llm]\nrequest_timeout_s = 0\n", "llm.request_timeout_s"),
    ("[sandbox]\ntimeout_s = 0.0\n", "sandbox.timeout_s"),
    ("[sandbox]\nsetup_timeout_s = 0\n", "sandbox.setup_timeout_s"),
    ("[sandbox]\nmemory_mb = 0\n", "sandbox.memory_mb"),
    ("[sandbox]\npids_limit = 0\n", "sandbox.pids_limit"),
    ("[sandbox]\ncpus = 0\n", "sandbox.cpus"),
    ("[sandbox]\nconcurrency = 0\n", "sandbox.concurrency"),
    ("[sandbox]\nmax_output_bytes = 0\n", "sandbox.max_output_bytes"),
    ("[limits]\nmax_concurrent_runs = 0\n", "limits.max_concurrent_runs"),
    ("[checkin]\ntimeout_s = 0\n", "checkin.timeout_s"),
    ("[slack]\nhttp_port = 0\n", "slack.http_port"),
    ("[slack]\nhttp_port = 65536\n", "slack.http_port"),
    ("[agents.default]\nmax_tokens = 0\n", "agents.default.max_tokens"),
])
def test_zero_is_refused_where_it_would_switch_a_limit_off_or_stall(tmp_path, text, key):
    with pytest.raises(ConfigError, match=re.escape(key) + ": must be"):
        load(tmp_path, text)


def test_the_defaults_and_the_repos_file_are_within_every_range():
    Config()
    load_config(ROOT / "config.toml")


def test_a_section_made_in_code_is_checked_too():
    """``dataclasses.replace`` with a command-line value goes through the same checks."""
    with pytest.raises(SettingsError, match="sandbox.timeout_s: must be a finite number, got nan"):
        dataclasses.replace(SandboxConfig(), timeout_s=float("nan"))
    with pytest.raises(SettingsError, match="budget.max_rounds"):
        BudgetConfig(max_rounds=-1)


def test_a_number_setting_without_a_declared_range_is_caught_when_the_section_is_made():
    @dataclasses.dataclass(frozen=True)
    class Careless(Checked, section="careless"):
        retries: int = 3

    with pytest.raises(TypeError, match="careless.retries: a number setting must declare its Range"):
        Careless()


# -- keys given twice ------------------------------------------------------------------------------

@pytest.mark.parametrize("text, key, line", [
    ("[budget]\nmax_rounds = 1\nmax_rounds = 2\n", "budget.max_rounds", 3),
    ("[llm]\nmax_retries = 1\n\n[budget]\nmax_rounds = 1\n\n[llm]\nbackoff_s = 1\n", "llm", 7),
    ('[sandbox]\n"timeout_s" = 1\ntimeout_s = 2\n', "sandbox.timeout_s", 3),
    ("[agents]\ndefault.model = 'a'\ndefault.model = 'b'\n", "agents.default.model", 3),
    ("[agents.default]\nmodel = 'a'\n[agents]\ndefault.model = 'b'\n", "agents.default.model", 4),
    ("budget.max_rounds = 1\n[budget]\nmax_rounds = 2\n", "budget", 2),
    ("[slack]\nenabled = true   # on\n  enabled   = false\n", "slack.enabled", 3),
])
def test_a_key_given_twice_is_named_with_its_line(tmp_path, text, key, line):
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    assert f"config.toml: {key}: set twice (line {line}) (keep one of them)" in str(caught.value)


def test_other_toml_mistakes_keep_tomllibs_words(tmp_path):
    with pytest.raises(ConfigError, match="not valid TOML: .*line 2"):
        load(tmp_path, "[llm]\nbackoff_s = = 1\n")


# -- numbers on the command line: the same checks -------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (["history", "--limit", "nan"], "argument --limit: expected a whole number, got 'nan'"),
    (["history", "--limit", "-1"], "argument --limit: must be between 1 and 100,000, got -1"),
    (["history", "--limit", "0"], "argument --limit: must be between 1 and 100,000, got 0"),
    (["history", "--limit", "1e30"], "argument --limit: expected a whole number, got '1e30'"),
    (["history", "--limit", str(10**30)], "argument --limit: must be between 1 and 100,000"),
    (["sandbox", "run", "--language", "python", ".", "--timeout", "nan"], "--timeout: must be a finite number, got nan"),
    (["sandbox", "run", "--language", "python", ".", "--timeout", "inf"], "--timeout: must be a finite number, got inf"),
    (["sandbox", "run", "--language", "python", ".", "--timeout=-inf"], "--timeout: must be a finite number, got -inf"),
    (["sandbox", "run", "--language", "python", ".", "--timeout", "-5"], "--timeout: must be greater than 0"),
    (["sandbox", "run", "--language", "python", ".", "--timeout", "0"], "--timeout: must be greater than 0"),
    (["sandbox", "run", "--language", "python", ".", "--timeout", "1e30"], "at most 86,400, got 1e+30"),
    (["sandbox", "run", "--language", "python", ".", "--timeout", "soon"], "--timeout: expected a number, got 'soon'"),
    (["web", "--port", "99999"], "argument --port: must be between 1 and 65,535, got 99,999"),
    (["web", "--port", "-5"], "argument --port: must be between 1 and 65,535, got -5"),
    (["web", "--port", "0"], "argument --port: must be between 1 and 65,535, got 0"),
    (["web", "--port", "http"], "argument --port: expected a whole number, got 'http'"),
    (["web", "--host", "exa mple"], "argument --host: must be an address, e.g. 127.0.0.1 (this machine only), got 'exa"),
    (["web", "--host", ""], "argument --host: must be an address, e.g. 127.0.0.1 (this machine only), got ''"),
])
def test_command_line_values_are_checked_like_config_values(tmp_path, args, words):
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "codegen_chat.cli", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_value_from_the_command_line_a_section_refuses_is_refused_naming_the_flag():
    from codegen_chat.web import only_web

    with pytest.raises(UserInputError, match=r"^--port: must be between 1 and 65,535, got 70,000$"):
        only_web(Config(), port=70_000)
    with pytest.raises(UserInputError, match=r"^--host: must be an address"):
        only_web(Config(), host="two words")
    assert (only_web(Config(), host="::1", port=9000).web.host, only_web(Config(), port=9000).web.port) == ("::1", 9000)


def test_a_flag_for_a_config_value_takes_that_values_range():
    parse = argument_for(SandboxConfig, "timeout_s")
    assert parse("2.5") == 2.5
    for bad in ("nan", "0", "-1", "86401"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse(bad)
    assert number_argument(int, Range(1, 10))(" 7 ") == 7


@pytest.mark.parametrize("text, expected", [("", FixReplies.AUTO), ('[team]\nfix_replies = "diff"\n', FixReplies.DIFF),
                                            ('[team]\nfix_replies = "whole"\n', FixReplies.WHOLE)])
def test_the_config_chooses_how_fixes_are_written(tmp_path, text, expected):
    path = tmp_path / "config.toml"
    path.write_text(text)
    assert team_settings(load_config(path)).fix_replies is expected


def test_an_unknown_way_of_writing_fixes_is_named_in_one_line(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('[team]\nfix_replies = "patch"\n')
    with pytest.raises(ConfigError, match="team.fix_replies"):
        load_config(path)


def _fifo(tmp_path):
    os.mkfifo(tmp_path / "pipe.toml")
    return tmp_path / "pipe.toml"


def _huge(tmp_path):
    path = tmp_path / "huge.toml"
    with path.open("wb") as out:
        out.truncate(2_000_000)  # sparse: sized like a runaway file, costs no disk
    return path


@pytest.mark.parametrize(("make", "words"), [
    (lambda tmp: Path("/dev/zero"), "/dev/zero is a device, not a regular file; config files must be regular files"),
    (_fifo, "pipe.toml is a named pipe, not a regular file"),
    (lambda tmp: tmp, "is a folder; name the config.toml in it"),
    (lambda tmp: Path("/proc/self/environ"), "/proc/self/environ is not an ordinary file"),
    (_huge, "huge.toml is 2,000,000 bytes; config files are limited to 1,000,000 bytes"),
])
def test_a_config_path_that_is_no_config_file_is_refused_without_reading_it(tmp_path, make, words):
    """/dev/zero would be read until memory runs out, a pipe would wait for a writer forever."""
    with pytest.raises(ConfigError, match="^cannot use the config file: .*" + re.escape(words)) as caught:
        load_config(make(tmp_path))
    assert "\n" not in str(caught.value)


def test_a_config_file_that_is_not_utf8_says_where(tmp_path):
    (tmp_path / "config.toml").write_bytes(b'[storage]\npath = "caf\xe9"\n')
    with pytest.raises(ConfigError, match=r"config\.toml: not UTF-8 text \(byte 0xe9 at offset 21\); save it as UTF-8"):
        load_config(tmp_path / "config.toml")


@pytest.mark.parametrize(("text", "key"), [
    ('[storage]\npath = "/tmp/a\\u0000b"\n', "storage.path"),
    ('[web]\nhost = "127.0.0.1\\u0000"\n', "web.host"),
    ('[slack]\nallowed_users = ["U1", "U\\u00002"]\n', "slack.allowed_users[1]"),
    ('[sandbox.languages.ruby]\nimage = "r"\ntest_command = "t"\nenv = { "A\\u0000" = "1" }\n',
     'sandbox.languages.ruby.env.A\x00'),
    ('[agents.default]\nmodel = "\\u0000"\n', "agents.default.model"),
])
def test_a_nul_character_in_any_config_text_is_named_at_start(tmp_path, text, key):
    with pytest.raises(ConfigError, match=re.escape(f"{key}: holds a NUL character")):
        load(tmp_path, text)


@pytest.mark.parametrize(("value", "words"), [
    ("sk-\udcff01", "byte 0xff at character 4 is not UTF-8"),  # how os.environ holds a byte that is not UTF-8
    ("sk-01\nInjected: yes", "character 6 is a control character (U+000A)"),
    ("sk-\x1b[2J", "character 4 is a control character (U+001B)"),
])
def test_a_secret_that_could_not_travel_in_a_header_is_refused_at_start_without_showing_it(value, words):
    with pytest.raises(ConfigError) as caught:
        Secrets.from_env({"OPENAI_API_KEY": value})
    assert str(caught.value) == f"OPENAI_API_KEY in the environment is not usable: {words}; export it again as plain text"
    assert "sk-" not in str(caught.value)


def test_a_config_nested_deeper_than_any_setting_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match=re.escape("config.toml: not a config file (arrays or tables nested deeper")):
        load(tmp_path, "a = " + "[" * 100_000)


@pytest.mark.parametrize("text, key", [
    ('[repos]\ngit_url = "https://x-access-token:ghp_0123456789abcdefghijklmnopqrstuvwxyz@github.com"\n', "repos.git_url"),
    ('[repos]\ngit_url = "https://ghp_0123456789abcdefghijklmnopqrstuvwxyz@git.example.com"\n', "repos.git_url"),
    ('[checkin]\ngithub_api_url = "https://u:ghp_0123456789abcdefghijklmnopqrstuvwxyz@ghe.example.com/api/v3"\n',
     "checkin.github_api_url"),
])
def test_a_token_written_into_a_github_url_is_refused_at_start_without_showing_it(tmp_path, text, key):
    """git would keep it in the clone's config on disk and say it in its errors; the token goes in GITHUB_TOKEN."""
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    said = str(caught.value)
    assert f"{key}: holds credentials" in said and "GITHUB_TOKEN" in said and "ghp_" not in said


def _private_key() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


@pytest.mark.parametrize("written", ["as-is", "crlf", "escaped"])
def test_a_github_app_private_key_keeps_its_line_breaks_and_each_line_is_masked(written):
    pem = _private_key()
    value = {"as-is": pem, "crlf": pem.replace("\n", "\r\n"), "escaped": pem.replace("\n", "\\n")}[written]
    secrets = Secrets.from_env({"GITHUB_APP_PRIVATE_KEY": value, "GITHUB_APP_ID": "12"})
    assert secrets.github_app_private_key.replace("\r\n", "\n") == pem.strip()
    one_line = pem.splitlines()[5]
    assert one_line in secrets.values()  # a log quoting one line of the key is masked too
    with pytest.raises(ConfigError, match="character .* is a control character \\(U\\+001B\\)"):
        Secrets.from_env({"GITHUB_APP_PRIVATE_KEY": pem.replace("\n", "\x1b", 1)})


def test_every_command_starts_with_a_github_app_private_key_in_the_environment(tmp_path):
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "GITHUB_APP_PRIVATE_KEY": _private_key(),
           "CODEGEN_CONFIG": str(tmp_path / "config.toml")}
    (tmp_path / "config.toml").write_text(f'[storage]\npath = "{tmp_path}/store.sqlite3"\n')
    done = subprocess.run([sys.executable, "-m", "codegen_chat", "history"], env=env, capture_output=True, text=True,
                          timeout=60, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "GITHUB_APP_PRIVATE_KEY" not in done.stderr


def test_a_relative_store_path_is_taken_from_the_config_files_folder_wherever_the_command_starts(tmp_path):
    settings, elsewhere = tmp_path / "settings", tmp_path / "elsewhere"
    settings.mkdir()
    elsewhere.mkdir()
    (settings / "config.toml").write_text('[storage]\npath = "data/codegen.sqlite3"\n')
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "CODEGEN_CONFIG": str(settings / "config.toml"),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-m", "codegen_chat", "history"], env=env, capture_output=True, text=True,
                          timeout=60, cwd=str(elsewhere))
    assert done.returncode == 0, done.stderr
    assert f"No runs yet in {settings / 'data' / 'codegen.sqlite3'}" in done.stdout
    assert (settings / "data" / "codegen.sqlite3").exists() and not (elsewhere / "data").exists()


@pytest.mark.parametrize("path", ["{folder}", ""])
def test_a_store_path_naming_a_folder_is_said_to_be_one(tmp_path, path):
    folder = tmp_path / "settings"
    folder.mkdir()
    (folder / "config.toml").write_text(f'[storage]\npath = "{path.format(folder=folder)}"\n')
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "CODEGEN_CONFIG": str(folder / "config.toml"),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-m", "codegen_chat", "history"], env=env, capture_output=True, text=True,
                          timeout=60, cwd=str(tmp_path))
    assert done.returncode == 1
    assert done.stderr == (f"codegen-chat: could not open {folder}: it is a folder, not a database file; "
                           "set storage.path to a file in it, such as codegen.sqlite3\n")


def test_a_config_saved_with_a_byte_order_mark_is_read_as_written(tmp_path):
    path = tmp_path / "config.toml"
    path.write_bytes(b'\xef\xbb\xbf[budget]\r\nmax_rounds = 3\r\n')  # Notepad's "UTF-8 with BOM"
    assert load_config(path).budget.max_rounds == 3
