"""Secrets are masked in log lines (tracebacks included) and wherever credentials sit in a URL."""

import asyncio
import base64
import io
import json
import logging
import os
import sys

import pytest

from bot.config.sections import Config, LLMConfig, Secrets, StorageConfig
from bot.safety.redact import MASK, Redactor, install_log_redaction, url_secrets

SECRET = "sk-live-0123456789abcdef"


def test_a_secret_is_masked_in_text():
    assert Redactor([SECRET, "short"])(f"key={SECRET} short") == "key=[redacted] short"


def test_log_lines_and_tracebacks_are_masked():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        install_log_redaction([SECRET])
        log = logging.getLogger("test.redact")
        log.error("calling with %s", SECRET)
        try:
            raise RuntimeError(f"server said: bad key {SECRET}")
        except RuntimeError:
            log.exception("the call failed")
    finally:
        root.removeHandler(handler)
    text = stream.getvalue()
    assert SECRET not in text
    assert "calling with [redacted]" in text and "RuntimeError: server said: bad key [redacted]" in text


# -- credentials written into URLs --------------------------------------------------------------------

@pytest.mark.parametrize("text, shown", [
    ("POST http://alice:s3cr3t-pa55@127.0.0.1:8080/v1/chat", "POST http://[redacted]@127.0.0.1:8080/v1/chat"),
    ("https://bob:p%40ss%3Aword@api.example.com/v1", "https://[redacted]@api.example.com/v1"),
    ("wss://u:verysecret@[::1]:9000/ws", "wss://[redacted]@[::1]:9000/ws"),
    ("git clone https://ghp_abcdefghijklmnop@github.com/x/y", "git clone https://[redacted]@github.com/x/y"),
    ("GET https://h.example/v1/models?api-key=abc123456&x=1", "GET https://h.example/v1/models?api-key=[redacted]&x=1"),
    ("https://h/blob?sv=2020&sig=Zm9vYmFyYmF6&se=1", "https://h/blob?sv=2020&sig=[redacted]&se=1"),
    ("redis://:onlypassword@cache:6379/0", "redis://[redacted]@cache:6379/0"),
    # Any parameter whose name holds a secret's word, as each library spells it.
    ("postgresql://db/x?sslmode=require&sslpassword=SSLSECRETXYZ", "postgresql://db/x?sslmode=require&sslpassword=[redacted]"),
    ("https://b.s3/o?X-Amz-Credential=AKIDX%2F2024&X-Amz-Signature=abcdef012345",
     "https://b.s3/o?X-Amz-Credential=[redacted]&X-Amz-Signature=[redacted]"),
    ("https://h/cb?refresh_token=r3fr3sh&Subscription-Key=k3yk3y&PWD=p4ss", "https://h/cb?refresh_token=[redacted]"
     "&Subscription-Key=[redacted]&PWD=[redacted]"),
])
def test_credentials_in_any_url_are_masked_in_what_the_bot_says(text, shown):
    assert Redactor((), urls=True)(text) == shown
    assert Redactor(())(text) == text  # model output keeps its example URLs: they are code


@pytest.mark.parametrize("text", [
    "mail alice@example.com", "https://example.com/a@b", "ssh host:path", "see https://docs.example.com/x?page=2",
    "user@host: 3 files", "key = value",
])
def test_text_without_credentials_is_left_alone(text):
    assert Redactor((), urls=True)(text) == text


def test_an_endpoint_urls_credentials_are_masked_in_every_form_they_travel_in():
    url = "http://alice:p%40ss-w0rd!@gateway.internal:4000/v1?api_key=qwerty123456"
    secrets = Secrets(openai_base_url=url)
    masked = Redactor(secrets.values())
    basic = base64.b64encode(b"alice:p@ss-w0rd!").decode()
    for leaked in ("p%40ss-w0rd!", "p@ss-w0rd!", f"Authorization: Basic {basic}", "qwerty123456", "alice:p@ss-w0rd!"):
        assert "ss-w0rd" not in masked(leaked) and "qwerty" not in masked(leaked) and basic not in masked(leaked)
    assert "gateway.internal" in masked(url)  # where it goes is not a secret
    assert url_secrets("http://host:8080/v1") == [] and url_secrets("not a url") == []


def test_a_secret_already_masked_keeps_what_follows_it():
    assert Redactor(["SSLSECRETXYZ"], urls=True)("at h/db?password=SSLSECRETXYZ: refused") == (
        "at h/db?password=[redacted]: refused")


def test_a_database_urls_secret_parameters_are_secrets_of_every_form():
    secrets = Secrets().for_config(Config(storage=StorageConfig(url="postgresql://bob@db/x?sslpassword=SSLSECRETXYZ")))
    assert "SSLSECRETXYZ" in secrets.values() and "bob" not in secrets.values()


def test_the_configs_endpoint_is_masked_too():
    config = Config(llm=LLMConfig(base_url="https://svc:cfg-s3cret-99@llm.example/v1"))
    secrets = Secrets(openai_api_key="sk-test-0123456789").for_config(config)
    assert "cfg-s3cret-99" in secrets.values() and Redactor(secrets.values())("token cfg-s3cret-99") == "token [redacted]"
    assert Secrets.from_env({"CONFIG_ENDPOINTS": "x"}).config_endpoints == ()  # never read from the environment


async def test_a_debug_run_never_logs_endpoint_credentials(model_server, tmp_path):
    """A whole run at DEBUG through the real openai/httpx clients: the request lines they log carry the URL."""
    from tests.terminal.test_terminal import ROOT, script_team, write_config

    password, token = "s3cr3t-pa55word", "cfgtok-987654321"
    with_creds = model_server.base_url.replace("http://", f"http://alice:{password}@")
    config = write_config(tmp_path, model_server.base_url.replace("http://", f"http://{token}@"))
    cases = {"OPENAI_BASE_URL": (with_creds, tmp_path / "env.toml"), "llm.base_url": ("", config)}
    (tmp_path / "env.toml").write_text(config.read_text().replace(f"{token}@", "").replace(
        f'base_url = "{model_server.base_url}"', ""))
    for case, (env_url, config_path) in cases.items():
        script_team(model_server)
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OPENAI_API_KEY": "sk-test-0123456789abcdef",
               "PYTHONPATH": str(ROOT), "CODEGEN_CONFIG": str(config_path), "CODEGEN_LOG_LEVEL": "DEBUG",
               "NO_COLOR": "1", **({"OPENAI_BASE_URL": env_url} if env_url else {})}
        for args in (["run", "find all intf keys", "--out", f"out-{len(case)}"], ["doctor"]):
            proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "codegen_chat.cli", *args, cwd=tmp_path, env=env,
                                                        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            out, err = await asyncio.wait_for(proc.communicate(), 120)
            text = out.decode() + err.decode()
            assert "HTTP Request: POST http://[redacted]@127.0.0.1" in text or args == ["doctor"], (case, text[-2000:])
            assert password not in text and token not in text and "alice" not in text, (case, args)
    assert len(model_server.calls("planner")) == 2  # both runs really reached the model through the URL


# -- the bot's own secrets in the forms they travel in ------------------------------------------------

OWN = "gw+key/0123456789=abcdef"  # no known shape: only the bot's own list finds it


@pytest.mark.parametrize("prefix", ["", "u", "us", "user:"])
@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
def test_an_own_secret_in_base64_is_masked_wherever_it_starts(prefix, encode):
    encoded = encode(f"{prefix}{OWN}:tail".encode()).decode()
    shown = Redactor([OWN])(f"Authorization: Basic {encoded}")
    assert MASK in shown and encoded not in shown


def test_an_own_secret_percent_encoded_or_json_escaped_is_masked():
    from urllib.parse import quote, quote_plus
    key = "-----BEGIN RSA PRIVATE KEY-----\n" + "A" * 64 + "\n" + "B" * 64 + "\n-----END RSA PRIVATE KEY-----\n"
    redact = Redactor([OWN, key])
    for text in (quote(OWN, safe=""), quote_plus(OWN), json.dumps({"key": key}), "A" * 64):
        shown = redact(f"sent {text} on")
        assert text not in shown and MASK in shown and "A" * 20 not in shown and OWN[3:15] not in shown


# -- credentials written into a URL of a request ---------------------------------------------------

@pytest.mark.parametrize("text", [
    'url = f"https://{user}:{token}@github.com/{repo}.git"', "git clone https://${GITHUB_TOKEN}@github.com/a/b.git",
    "git clone https://x-access-token:$TOKEN@github.com/a/b.git", "https://{{ user }}:{{ token }}@host/x",
    "https://<user>:<token>@host/x", "https://%(user)s:%(password)s@host/x",
])
def test_placeholders_in_a_requests_url_are_kept(text):
    from bot.safety.redact import mask_url_credentials
    assert mask_url_credentials(text) == (text, 0)


@pytest.mark.parametrize("text", ["https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/a/b",
                                  "https://deploy:${TOKEN}x@host/x", "https://ann:hunter22@host/x"])
def test_credentials_in_a_requests_url_are_masked(text):
    from bot.safety.redact import mask_url_credentials
    shown, count = mask_url_credentials(text)
    assert count == 1 and shown.startswith(f"https://{MASK}@")


def test_a_private_keys_first_and_last_lines_are_no_secret_of_their_own():
    """The bot's key (a GitHub App's PEM) is masked whole and line by line; code the team writes that reads a key
    keeps its ``-----BEGIN RSA PRIVATE KEY-----``."""
    key = "-----BEGIN RSA PRIVATE KEY-----\n" + "A" * 64 + "\n" + "B" * 64 + "\n-----END RSA PRIVATE KEY-----\n"
    code = ('if line == "-----BEGIN RSA PRIVATE KEY-----":\n    inside = True\n'
            'elif line == "-----END RSA PRIVATE KEY-----":\n    inside = False\n')
    redact = Redactor([key])
    assert redact(code) == code
    assert redact(f"key: {key}") == f"key: {MASK}" and redact("A" * 64) == MASK


@pytest.mark.parametrize("text", ["key_ghp_AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHHIIII.py", "MY_KEY_sk-proj-0123456789abcdefghijklmn",
                                  "backup_AKIAIOSFODNN7EXAMPLE_old", "tok_xoxb-1234567890-abcdefghij"])
def test_a_token_glued_to_an_underscore_is_still_masked(text):
    from bot.safety.redact import mask_secrets

    masked, found = mask_secrets(text, Redactor([]))
    assert found == 1 and "[redacted]" in masked


@pytest.mark.parametrize("text", ["the task-abcdefghijklmnopqrstuvwxyz runner", "ask-for-more-help-with-the-reviews-today",
                                  "thehf_abcdefghijklmnopqrstuvwxyz0123"])
def test_words_ending_in_a_token_s_prefix_are_left_alone(text):
    from bot.safety.redact import mask_secrets

    assert mask_secrets(text, Redactor([])) == (text, 0)
