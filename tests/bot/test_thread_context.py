"""What a request made in a chat thread brings with it: kept, masked, cut and said in one place."""

from __future__ import annotations

import base64
import time

import pytest

from agents.types import Attachment, ThreadMessage
from bot.config.sections import InputConfig
from bot.runs.thread_context import EarlierMessage, Gathered, thread_context
from bot.safety.redact import MASK, mask_pasted_secrets

LIMITS = InputConfig(thread_messages=5, thread_chars=1_000, max_attachments=3)


def said(n: int, author: str = "Ann") -> EarlierMessage:
    return EarlierMessage(author, f"message {n}")


def test_the_newest_messages_are_kept_in_order_and_the_cut_is_said_in_one_line():
    context = thread_context([said(n) for n in range(12)], "do it", LIMITS)
    assert [m.text for m in context.messages] == [f"message {n}" for n in range(7, 12)]
    assert context.notes == ("Only the newest 5 of 12 earlier messages were read (the bounds are [input] "
                             "thread_messages = 5 and thread_chars = 1,000).",)
    assert context.summary == "read 5 earlier messages, 0 files, 0 code blocks"


def test_the_character_bound_keeps_the_newest_that_fit():
    long = [EarlierMessage("Ann", "x" * 400) for _ in range(4)]
    context = thread_context(long, "do it", LIMITS)
    assert len(context.messages) == 2 and "Only the newest 2 of 4" in context.notes[0]


def test_bots_and_the_bots_own_turns_are_left_out_and_not_counted():
    earlier = [said(1), EarlierMessage("codegen", "✅ Passed", by_bot=True), EarlierMessage("ci", "build ok", by_bot=True)]
    context = thread_context(earlier, "do it", LIMITS)
    assert context.messages == (ThreadMessage("Ann", "message 1"),) and context.notes == ()


def test_a_named_code_block_becomes_a_file_and_its_place_in_the_message_says_so():
    earlier = [EarlierMessage("Ann", "```python path=app.py\ndef f():\n    return 1\n```\nthoughts?")]
    context = thread_context(earlier, "test app.py", LIMITS)
    assert context.files == (Attachment("app.py", "def f():\n    return 1\n"),)
    assert context.messages[0].text == "[code block: given as the file app.py]\nthoughts?"
    assert context.summary == "read 1 earlier message, 1 file, 1 code block"


@pytest.mark.parametrize("request_text, expected", [
    ("write tests for calc.py above", ("calc.py",)),  # the request names the file the block clearly is
    ("write tests for the code above", ()),  # nobody names it: it stays quoted code, not a guessed file
])
def test_an_unnamed_block_is_a_file_only_when_the_thread_names_it(request_text, expected):
    earlier = [EarlierMessage("Ann", "```python\ndef add(a, b):\n    return a + b\n```")]
    context = thread_context(earlier, request_text, LIMITS)
    assert tuple(a.name for a in context.files) == expected


def test_a_newer_file_of_the_same_name_wins_and_the_file_bound_keeps_the_newest():
    earlier = [EarlierMessage("Ann", "", (Attachment("a.py", "old\n"),)),
               *[EarlierMessage("Bob", "", (Attachment(f"f{n}.py", f"{n}\n"),)) for n in range(3)],
               EarlierMessage("Ann", "", (Attachment("a.py", "new\n"),))]
    context = thread_context(earlier, "go", LIMITS)
    assert [a.name for a in context.files] == ["f1.py", "f2.py", "a.py"] and context.files[-1].content == "new\n"
    assert "Only the newest 3 of the 4 files in the thread were read" in context.notes[0]


def test_secrets_in_messages_files_and_links_are_masked_with_one_notice():
    token = "xoxb-" + "1234567890-abcdefghijkl"
    earlier = [EarlierMessage("Ann", f"use {token}", (Attachment(".env.txt", "OPENAI=sk-" + "a" * 40 + "\n"),))]
    gathered = Gathered(linked_messages=(ThreadMessage("GitHub pull request o/r#1", "key AKIAABCDEFGHIJKLMNOP"),))
    context = thread_context(earlier, "go", LIMITS, gathered)
    everything = repr(context)
    assert token not in everything and "sk-aaaa" not in everything and "AKIAABCD" not in everything
    assert everything.count(MASK) == 3
    assert context.notes[-1] == "3 secrets pasted in the thread (tokens or keys) were masked before anything was sent on."


@pytest.mark.parametrize("secret", [
    "ghp_" + "A1" * 18, "github_pat_" + "B2" * 30, "xoxp-1234-5678-abcdefghij", "xapp-1-A0001-12345-abcdef",
    "sk-proj-" + "C3" * 20, "AKIA" + "Z" * 16,
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----",
    "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/abcdefghijklmnopqrstuvwx",
    "https://discord.com/api/webhooks/123456789012345678/" + "aB3_-" * 12,
    "MTIzNDU2Nzg5MDEyMzQ1Njc4.GabcdE." + "x9" * 19, "glpat-" + "D4" * 10, "sk_live_" + "E5" * 12, "AIza" + "F6" * 17 + "g",
])
def test_each_common_secret_format_is_masked(secret):
    masked, count = mask_pasted_secrets(f"before {secret} after")
    assert masked == f"before {MASK} after" and count == 1


@pytest.mark.parametrize("line", ["aws_secret_access_key = {}", "AWS_SECRET_ACCESS_KEY={}", '"SecretAccessKey": "{}"',
                                  "export AWS_SECRET_KEY='{}'"])
def test_an_aws_secret_key_is_masked_by_the_name_before_it(line):
    masked, count = mask_pasted_secrets(line.format("k/" * 20))
    assert masked == line.format(MASK) and count == 1


def test_an_aws_secret_key_right_after_its_key_id_is_masked_with_it():
    pair = "AKIAABCDEFGHIJKLMNOP,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    masked, count = mask_pasted_secrets(f"Access key ID,Secret access key\n{pair}\n")
    assert masked == f"Access key ID,Secret access key\n{MASK},{MASK}\n" and count == 2


@pytest.mark.parametrize("secret", [
    "xoxc-1234567890-" + "ab12" * 4, "npm_" + "G7" * 18, "hf_" + "H8" * 17, "pypi-AgEIcHlwaS5vcmc" + "I9" * 30,
    "SG." + "J1" * 11 + "." + "K2" * 21 + "L",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
])
def test_more_token_formats_are_masked(secret):
    assert mask_pasted_secrets(f"before {secret} after") == (f"before {MASK} after", 1)


@pytest.mark.parametrize("text, shown", [
    ("curl -H 'Authorization: Bearer abc123def456ghi789' https://api", "curl -H 'Authorization: Bearer [redacted]' https://api"),
    ('"authorization": "Basic ZGVwbG95Omh1bnRlcjI="', '"authorization": "Basic [redacted]"'),
    ("git clone https://deploy:hunter2hunter2@git.example.com/x.git", "git clone https://deploy:[redacted]@git.example.com/x.git"),
    ("DATABASE_URL=postgres://app:S3cr3t!@db.internal:5432/app", "DATABASE_URL=postgres://app:[redacted]@db.internal:5432/app"),
])
def test_credentials_in_headers_and_urls_are_masked_the_rest_kept(text, shown):
    assert mask_pasted_secrets(text) == (shown, 1)


@pytest.mark.parametrize("text", [
    "postgres://user:password@localhost/db", "https://user:${PASSWORD}@host/x", "amqp://u:***@mq", "git@github.com:a/b.git",
    "authorization: Optional[str] = Header(None)", "headers = {'Authorization': f'Bearer {token}'}",
    'authorization = base64.b64encode(f"{user}:{password}".encode()).decode()',
    "Authorization: hashlib.sha256(body).hexdigest()",
    "value = 'dGhpcyBpcyBqdXN0IGEgbm9ybWFsIHNlbnRlbmNlIGluIGJhc2U2NA=='", "see a%20b%20c%20d%20e%20f%20g%20h",
])
def test_placeholders_and_code_are_not_taken_for_credentials(text):
    assert mask_pasted_secrets(text) == (text, 0)


@pytest.mark.parametrize("encoded", [
    base64.b64encode(b"x-access-token:ghp_" + b"A1" * 18).decode(),  # a docker config's "auth", a Basic header
    base64.urlsafe_b64encode(b'{"token": "xoxb-1234567890-abcdefghijkl"}').decode(),
    "ghp%5F" + "A1" * 18, "https%3A%2F%2Fhooks.slack.com%2Fservices%2FT0123ABCD%2FB0456EFGH%2Fabcdefghijklmnopqrstuvwx",
])
def test_a_secret_encoded_in_base64_or_percent_encoding_is_masked(encoded):
    assert mask_pasted_secrets(f'"auth": "{encoded}"') == (f'"auth": "{MASK}"', 1)


def test_ordinary_text_is_left_alone():
    text = "sk-learn is a package; AKIA is too short; xoxb alone is a word; 40 chars: " + "k" * 40
    assert mask_pasted_secrets(text) == (text, 0)


def test_with_no_thread_messages_allowed_nothing_is_read_not_even_the_replied_message():
    replied = EarlierMessage("Ann", "the spec", replied_to=True)
    context = thread_context([replied, said(1)], "go", InputConfig(thread_messages=0))
    assert context.messages == ()


@pytest.mark.parametrize("text", [
    "progress 100%\n" + "A" * 100_000,  # base64 of a file of zero bytes, and a percent sign somewhere else
    "progress 100%\n" + "0123456789abcdef" * 6_000,  # a hex dump on one line
    "see https://example.com\n" + "a." * 50_000,  # a long dotted run (a scheme is looked for in every word)
    "a-" * 50_000,
])
def test_a_long_run_of_ordinary_characters_is_read_in_linear_time(text):
    started = time.perf_counter()
    assert mask_pasted_secrets(text) == (text, 0)
    assert time.perf_counter() - started < 1.5
