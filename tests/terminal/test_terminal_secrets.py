"""Credentials written into the config's URLs never reach the screen: not in doctor, the run's summary, its
notes, nor an error line."""

from pathlib import Path

from tests.terminal.test_terminal import cli


def config_with(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'[storage]\npath = "{tmp_path / "db.sqlite3"}"\n[sandbox]\nenabled = false\n{text}')
    return path


async def test_a_database_urls_secret_parameter_is_masked_in_what_the_cli_prints(tmp_path):
    config = config_with(tmp_path, "")
    config.write_text(f'[storage]\nurl = "postgresql://bob@127.0.0.1:1/db?sslpassword=SSLSECRETXYZ"\n')
    code, out, err = await cli(tmp_path, "history", config=config)
    assert code == 1 and "127.0.0.1:1/db?sslpassword=[redacted]" in err
    assert "SSLSECRETXYZ" not in out + err
