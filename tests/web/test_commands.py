"""``codegen-chat web`` and what ``codegen-chat doctor`` says about the web chat."""

from __future__ import annotations

import dataclasses
import socket

import pytest

from adapters.web import doctor_checks as web_checks
from bot.health.doctor import run_doctor
from codegen_chat.cli import main
from codegen_chat.web import only_web
from tests.conftest import with_changes


def by_name(results):  # type: ignore[no-untyped-def]
    return {r.name: r for r in results}


async def test_doctor_reports_where_the_web_chat_answers_and_who_may_use_it(web_config, secrets):
    results = by_name(await web_checks(web_config, secrets))
    port = web_config.web.port
    assert results["web chat"].ok
    assert results["web chat"].detail == (f"http://127.0.0.1:{port}, this machine only, no sign-in "
                                           "(`codegen-chat web` serves it)")
    assert results["web chat port"].ok and "web chat access" not in results

    token = dataclasses.replace(secrets, codegen_web_token="short-token")
    config = with_changes(web_config, web={"host": "0.0.0.0", "enabled": True, "user_header": "X-Forwarded-User"})
    results = by_name(await web_checks(config, token))
    assert results["web chat"].detail.startswith(f"http://0.0.0.0:{port}, signed in with the access token "
                                                 "CODEGEN_WEB_TOKEN and the sign-in proxy's X-Forwarded-User header")
    assert "served by `codegen-chat serve` too" in results["web chat"].detail
    assert not results["web chat token"].ok and not results["web chat token"].required
    assert "short-token" not in " ".join(r.detail + r.fix for r in results.values())


async def test_doctor_fails_a_web_chat_open_to_the_network_with_no_sign_in(web_config, secrets, capsys):
    config = with_changes(web_config, web={"host": "0.0.0.0", "enabled": True})
    results = by_name(await web_checks(config, secrets))
    assert not results["web chat access"].ok and results["web chat access"].required
    assert "CODEGEN_WEB_TOKEN" in results["web chat access"].detail
    assert await run_doctor(config, secrets, checks=[web_checks]) == 1
    assert "[FAIL] web chat access: web.host is '0.0.0.0'" in capsys.readouterr().out


async def test_doctor_warns_when_the_port_is_taken(web_config, secrets):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", web_config.web.port))
        taken.listen()
        results = by_name(await web_checks(web_config, secrets))
    assert not results["web chat port"].ok and not results["web chat port"].required
    assert "is in use" in results["web chat port"].detail


def test_codegen_chat_web_beyond_loopback_without_a_token_refuses_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    monkeypatch.delenv("CODEGEN_WEB_TOKEN", raising=False)
    (tmp_path / "config.toml").write_text(f'[storage]\npath = "{tmp_path / "db.sqlite3"}"\n')
    code = main(["--config", str(tmp_path / "config.toml"), "web", "--host", "0.0.0.0"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("codegen-chat: web.host is '0.0.0.0', which other machines can reach") and err.count("\n") == 1
    assert not (tmp_path / "db.sqlite3").exists()  # refused before anything started


def test_codegen_chat_web_runs_the_web_chat_alone(web_config):
    config = with_changes(web_config, slack={"enabled": True}, discord={"enabled": True})
    alone = only_web(config, host="::1", port=9999)
    assert (alone.web.enabled, alone.web.host, alone.web.port) == (True, "::1", 9999)
    assert not alone.slack.enabled and not alone.discord.enabled
    assert only_web(config).web.port == web_config.web.port


@pytest.mark.parametrize(("key", "value", "problem"), [
    ("port", 0, "web.port: must be between 1 and 65,535, got 0"),
    ("host", " ", "web.host: must be an address, e.g. 127.0.0.1"),
    ("user_header", "X-User: ann", "web.user_header: must be an HTTP header name, e.g. X-Forwarded-User, got 'X-User: ann'"),
    ("update_interval_s", 0, "web.update_interval_s: must be greater than 0"),
    ("max_message_chars", 100, "web.max_message_chars: must be between 500 and 1,000,000, got 100"),
])
def test_a_bad_web_setting_is_named(tmp_path, key, value, problem):
    from bot.config.sections import ConfigError, load_config

    rendered = f'"{value}"' if isinstance(value, str) else value
    (tmp_path / "config.toml").write_text(f"[web]\n{key} = {rendered}\n")
    with pytest.raises(ConfigError, match=problem):
        load_config(tmp_path / "config.toml")
