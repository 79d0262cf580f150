"""Reading how long a server asked us to wait."""

import email.utils
import time

from bot.model.retry_after import retry_after_seconds


def test_seconds_milliseconds_and_dates():
    assert retry_after_seconds({"retry-after": "7"}) == 7.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "7"}) == 0.25
    in_a_minute = email.utils.formatdate(time.time() + 60, usegmt=True)
    assert 55 <= retry_after_seconds({"retry-after": in_a_minute}) <= 60


def test_absent_or_unreadable_means_no_advice():
    assert retry_after_seconds(None) is None and retry_after_seconds({}) is None
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({"retry-after": "-3"}) == 0.0
