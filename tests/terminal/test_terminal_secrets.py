"""Credentials written into the config's URLs never reach the screen: not in doctor, the run's summary, its
notes, nor an error line."""

import io
import json
from pathlib import Path

from adapters.terminal.json_lines import JsonLines
from adapters.terminal.render import Renderer
from agents.events import RunFinished, TextDelta, TurnFinished
from agents.types import RunStatus
from bot.config.sections import CheckinConfig, Config, DiscordConfig, Secrets
from bot.safety.redact import Redactor
from tests.terminal.test_terminal import cli

UNREACHABLE = "http://127.0.0.1:1"


def config_with(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'[storage]\npath = "{tmp_path / "db.sqlite3"}"\n[sandbox]\nenabled = false\n{text}')
    return path


async def test_a_database_urls_secret_parameter_is_masked_in_what_the_cli_prints(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[storage]\nurl = "postgresql://bob@127.0.0.1:1/db?sslpassword=SSLSECRETXYZ"\n')
    code, out, err = await cli(tmp_path, "history", config=config)
    assert code == 1 and "127.0.0.1:1/db?sslpassword=[redacted]" in err
    assert "SSLSECRETXYZ" not in out + err


async def test_doctor_never_shows_credentials_written_into_the_configs_urls(tmp_path):
    config = config_with(tmp_path, f'[llm]\nbase_url = "{UNREACHABLE}/v1?api_key=QQQsecretQQQ"\nmax_retries = 0\n'
                                   f'[checkin]\ngithub_api_url = "{UNREACHABLE}/api/v3?access_token=QTOKENQ123"\n'
                                   'max_retries = 0\n')
    code, out, err = await cli(tmp_path, "doctor", config=config, env_extra={"GITHUB_TOKEN": "ghp_" + "t" * 36})
    assert code == 1  # neither endpoint answers
    assert f"model endpoint: {UNREACHABLE}/v1?api_key=[redacted] did not answer" in out
    assert f"cannot reach GitHub at {UNREACHABLE}/api/v3?access_token=[redacted]" in out
    assert "QQQsecretQQQ" not in out + err and "QTOKENQ123" not in out + err


def test_every_configured_urls_credentials_are_secrets():
    config = Config(checkin=CheckinConfig(github_api_url="https://ghe.example/api/v3?access_token=QTOKENQ123"),
                    discord=DiscordConfig(api_url="http://relay-user-t0ken@relay.example/api/v10",
                                          gateway_url="wss://relay.example/"))
    shown = Redactor(Secrets().for_config(config).values())("token QTOKENQ123, user relay-user-t0ken")
    assert shown == "token [redacted], user [redacted]"


async def test_the_run_summary_masks_credentials_in_any_url_but_the_models_text_keeps_its_examples():
    out = io.StringIO()
    renderer = Renderer(out, color=False, redact=Redactor(()))
    await renderer(TextDelta("r1", "programmer", 'URL = "https://h.example/x?token=example123"\n'))
    finished = RunFinished("r1", RunStatus.ERROR, "GitHub at https://ghe.example/api?access_token=QTOKENQ123 refused")
    text = out.getvalue() + renderer.summary(finished, None)
    assert "?token=example123" in text  # code the model wrote
    assert "access_token=[redacted] refused" in text and "QTOKENQ123" not in text


async def test_the_json_result_masks_credentials_in_any_url_but_a_turns_text_keeps_its_examples():
    out = io.StringIO()
    sink = JsonLines(out, Redactor(()))
    await sink(TurnFinished("r1", "programmer", 1, 'URL = "https://h.example/x?token=example123"'))
    sink.result(RunFinished("r1", RunStatus.ERROR, "GitHub at https://ghe.example/api?access_token=QTOKENQ123 refused"),
                3, Path("out"))
    turn, result = (json.loads(line) for line in out.getvalue().splitlines())
    assert "?token=example123" in turn["text"]
    assert result["reason"] == "GitHub at https://ghe.example/api?access_token=[redacted] refused"
