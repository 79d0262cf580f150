"""GitHub's webhook signature: ``X-Hub-Signature-256: sha256=HEX``, the HMAC-SHA256 of the raw body under the
webhook's secret. Compared in constant time, so a forger learns nothing from how long a refusal takes."""

from __future__ import annotations

import hashlib
import hmac

PREFIX = "sha256="


def signed(body: bytes, header: str, secret: str) -> bool:
    """Whether ``header`` is the signature of ``body`` under ``secret`` (no secret: nothing is signed)."""
    if not secret or not header.startswith(PREFIX):
        return False
    expected = PREFIX + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), header.strip().lower().encode())


def signature(body: bytes, secret: str) -> str:
    """The header value GitHub sends for ``body`` (for a sender: the tests' fake, a replayed delivery)."""
    return PREFIX + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
