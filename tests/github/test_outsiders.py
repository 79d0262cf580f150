"""A "no write access" answer is remembered for a while, then asked again (access may have been granted)."""

from __future__ import annotations

from adapters.github.outsiders import REMEMBER_S, Outsiders


def test_a_refusal_is_remembered_for_a_while_per_repository_and_person():
    now = [1000.0]
    outsiders = Outsiders(clock=lambda: now[0])
    assert not outsiders.known("acme/app", "stranger")
    outsiders.add("acme/app", "stranger")
    assert outsiders.known("Acme/App", "Stranger")  # GitHub's names are case-insensitive
    assert not outsiders.known("acme/other", "stranger") and not outsiders.known("acme/app", "alice")
    now[0] += REMEMBER_S - 1
    assert outsiders.known("acme/app", "stranger")
    now[0] += 1
    assert not outsiders.known("acme/app", "stranger")  # asked again: maybe granted access meanwhile
