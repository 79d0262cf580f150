"""The allowlists every chat platform's requests and Stop presses are checked against, by the service."""

from __future__ import annotations

import pytest

from bot.chat.access import NO_DIRECT_MESSAGES, WRONG_CHANNEL, WRONG_ROLE, WRONG_SERVER, AccessRules, Place, refusal

OPEN = AccessRules()


@pytest.mark.parametrize("rules, place, expected", [
    (OPEN, Place("U1", "C1"), None),  # empty lists allow everyone
    (OPEN, Place("U1", "D1", direct=True), None),
    (AccessRules(direct_messages=False), Place("U1", "D1", direct=True), NO_DIRECT_MESSAGES),
    (AccessRules(channels=frozenset({"C2"})), Place("U1", "C1"), WRONG_CHANNEL),
    (AccessRules(channels=frozenset({"C2"})), Place("U1", "C2"), None),
    (AccessRules(channels=frozenset({"C2"})), Place("U1", "D1", direct=True), None),  # a DM is in no channel
    (AccessRules(servers=frozenset({"G1"})), Place("U1", "C1", "G2"), WRONG_SERVER),
    (AccessRules(servers=frozenset({"G1"})), Place("U1", "C1", "G1"), None),
    (AccessRules(roles=frozenset({"R1"})), Place("U1", "C1", roles=frozenset({"R2"})), WRONG_ROLE),
    (AccessRules(roles=frozenset({"R1"})), Place("U1", "C1", roles=frozenset({"R2", "R1"})), None),
    (AccessRules(roles=frozenset({"R1"})), Place("U1", "C1"), WRONG_ROLE),  # no roles at all
])
def test_each_allowlist_refuses_with_its_own_sentence(rules, place, expected):
    assert refusal(rules, place) == expected


def test_a_user_list_refusal_names_the_key_an_admin_edits():
    rules = AccessRules.of("slack", users=["UBOSS"])
    assert refusal(rules, Place("UANN", "C1")) == (
        "You are not on this bot's list of users; ask an admin to add you (slack.allowed_users).")
    assert refusal(rules, Place("UBOSS", "C1")) is None


def test_ids_of_any_type_are_compared_as_the_platform_sends_them():
    rules = AccessRules.of("discord", servers=[900], channels=[20], roles=[30])
    assert refusal(rules, Place("1", "20", "900", frozenset({"30"}))) is None
