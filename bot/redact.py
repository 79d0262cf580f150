"""Keeps secrets out of text that leaves the process: log lines, chat replies, error messages."""

from __future__ import annotations

import logging
from collections.abc import Iterable

MASK = "[redacted]"
MIN_SECRET_LENGTH = 6  # shorter values would mask ordinary words


class Redactor:
    def __init__(self, secrets: Iterable[str]) -> None:
        # Longest first, so a secret that contains another is masked whole.
        self._secrets = sorted({s for s in secrets if len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text


class RedactingFilter(logging.Filter):
    """A logging filter that masks secrets in every record's rendered message."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self._redact = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = self._redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and not record.exc_text:
            # The formatter would render the traceback after filters ran, unmasked; render it now.
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._redact(record.exc_text)
        return True


def install_log_redaction(secrets: Iterable[str]) -> None:
    """Mask ``secrets`` in every handler of the root logger (call after logging is configured)."""
    redacting = RedactingFilter(Redactor(secrets))
    for handler in logging.getLogger().handlers:
        handler.addFilter(redacting)
