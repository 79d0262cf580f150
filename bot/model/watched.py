"""A model that reports how each of its calls ended, and is otherwise the model itself."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing

from agents.errors import ModelError
from agents.protocols import ChatModel
from agents.types import Message, Usage


class WatchedModel:
    """A ``ChatModel`` whose calls are reported: ``answered()`` after a whole reply, ``failed(error)`` when the
    model raised (the error still reaches the caller). The health endpoints and the eval watch the model so."""

    def __init__(self, model: ChatModel, answered: Callable[[], None] = lambda: None,
                 failed: Callable[[ModelError], None] = lambda _: None) -> None:
        self._model, self._answered, self._failed = model, answered, failed

    def model_name(self, role: str) -> str:
        return self._model.model_name(role)

    async def stream(self, role: str, messages: Sequence[Message],
                     temperature: float | None = None) -> AsyncGenerator[str | Usage, None]:
        try:
            async with aclosing(self._model.stream(role, messages, temperature)) as pieces:
                async for piece in pieces:
                    yield piece
        except ModelError as error:
            self._failed(error)
            raise
        self._answered()
