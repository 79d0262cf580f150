"""Secrets are masked in log lines, tracebacks included."""

import io
import logging

from bot.redact import Redactor, install_log_redaction

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
