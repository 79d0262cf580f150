"""Fixtures of the bot's tests: the embedded model (``embedded_support``)."""

from tests.bot.embedded_support import cached_default_model  # noqa: F401  (a fixture)
