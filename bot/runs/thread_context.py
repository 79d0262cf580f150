"""What a request made in a chat thread brings with it: the messages people wrote before it, read into
the request's context (``agents.types.ThreadContext``). Every platform's adapter fetches its messages
its own way and hands them here, so what is kept, masked, cut and said is decided in one place:

- other bots' messages and the bot's own earlier turns are left out (its runs continue as follow-ups);
- secrets pasted in them are masked before anything else sees them (``bot.safety.redact``);
- the newest messages are kept, at most ``[input] thread_messages`` of them and ``thread_chars``
  characters with their files; the cut is said in one line;
- code blocks that name a file (or that the thread names) become files (``agents.thread_files``), beside
  the files shared in the messages and those read from links, at most ``[input] max_attachments``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace

from agents.language import BUILT_IN, Languages
from agents.thread_files import files_in_message
from agents.types import Attachment, ThreadContext, ThreadMessage
from bot.config.sections import InputConfig
from bot.safety.redact import mask_pasted_secrets


@dataclass(frozen=True)
class EarlierMessage:
    """A message before the request, as the platform gave it (its files already read as attachments)."""

    author: str  # the display name
    text: str
    files: tuple[Attachment, ...] = ()
    by_bot: bool = False  # another bot's message, or this bot's own
    replied_to: bool = False  # the message the request answers: read even when older than the bound


@dataclass(frozen=True)
class Earlier:
    """What an adapter read of the messages before a request: oldest first; ``notes`` say what it could
    not read (a refused file); ``withheld`` says why it could read nothing (a missing scope)."""

    messages: tuple[EarlierMessage, ...] = ()
    notes: tuple[str, ...] = ()
    more_before: bool = False  # the platform holds older messages than were asked for
    withheld: str = ""


ReadEarlier = Callable[[], Awaitable[Earlier]]  # an adapter's way of reading them, called only when wanted


@dataclass(frozen=True)
class Gathered:
    """What was read besides the messages: linked pull requests and commits (as messages), linked files,
    and why something was not read."""

    linked_messages: tuple[ThreadMessage, ...] = ()
    linked_files: tuple[Attachment, ...] = ()
    notes: tuple[str, ...] = ()


def thread_context(earlier: Sequence[EarlierMessage], request: str, limits: InputConfig,
                   gathered: Gathered = Gathered(), more_before: bool = False,
                   languages: Languages = BUILT_IN) -> ThreadContext:
    """The context ``earlier`` (oldest first) gives the request ``request``. ``more_before``: the platform
    held older messages than it was asked for (the bound cut them already)."""
    people = _people(earlier)
    kept, secrets = _masked(_newest_within(people, limits))  # only what is sent on needs masking
    notes: list[str] = []
    if len(kept) < len(people) or more_before:
        notes.append(_cut_note(len(kept), len(people), more_before, limits))
    mentioned = "\n".join([request, *(m.text for m in kept)])
    messages: list[ThreadMessage] = []
    files: dict[str, str] = {}
    blocks = 0
    for message in kept:
        read = files_in_message(message.text, mentioned, languages)
        blocks += read.blocks
        messages.append(ThreadMessage(message.author, read.text))
        _newer(files, {a.name: a.content for a in message.files})
        _newer(files, read.files)
    for link in gathered.linked_messages:  # after the people's messages: read because one of them links it
        text, found = mask_pasted_secrets(link.text)
        messages.append(ThreadMessage(link.author, text))
        secrets += found
    linked = [_masked_file(a) for a in gathered.linked_files]
    secrets += sum(found for _, found in linked)
    _newer(files, {a.name: a.content for a, _ in linked})
    chosen = list(files.items())[-limits.max_attachments:] if limits.max_attachments else []
    if len(chosen) < len(files):
        notes.append(f"Only the newest {len(chosen)} of the {len(files)} files in the thread were read "
                     f"([input] max_attachments = {limits.max_attachments}).")
    if secrets:
        notes.append(f"{_count(secrets, 'secret')} pasted in the thread (tokens or keys) "
                     f"{'was' if secrets == 1 else 'were'} masked before anything was sent on.")
    links = len(gathered.linked_messages) + len(linked)
    summary = _summary(len(messages) - len(gathered.linked_messages), len(chosen), blocks, links)
    said = tuple(mask_pasted_secrets(note)[0] for note in (*gathered.notes, *notes))  # they quote file names
    return ThreadContext(tuple(messages), tuple(Attachment(n, c) for n, c in chosen), summary, said)


def read_messages(earlier: Sequence[EarlierMessage], limits: InputConfig) -> list[EarlierMessage]:
    """The messages of ``earlier`` that are read (people's, the newest within the bounds): only their links are
    followed, too."""
    return _newest_within(_people(earlier), limits)


def _people(earlier: Sequence[EarlierMessage]) -> list[EarlierMessage]:
    return [m for m in earlier if not m.by_bot and (m.text.strip() or m.files)]


def _newer(files: dict[str, str], newer: dict[str, str]) -> None:
    """Lay ``newer`` over ``files``: a file of the same name is replaced and counts as the newest."""
    for name, content in newer.items():
        files.pop(name, None)
        files[name] = content


def _masked(messages: list[EarlierMessage]) -> tuple[list[EarlierMessage], int]:
    out, total = [], 0
    for message in messages:
        text, found = mask_pasted_secrets(message.text)
        files = []
        for file in message.files:
            clean, in_file = _masked_file(file)
            files.append(clean)
            found += in_file
        out.append(replace(message, text=text, files=tuple(files)))
        total += found
    return out, total


def _masked_file(file: Attachment) -> tuple[Attachment, int]:
    content, found = mask_pasted_secrets(file.content)
    return Attachment(file.name, content), found


def _newest_within(messages: list[EarlierMessage], limits: InputConfig) -> list[EarlierMessage]:
    """The newest messages within the bounds, and the one the request replies to wherever it is."""
    if not limits.thread_messages:
        return []
    replied = [m for m in messages if m.replied_to][:1]
    chars = sum(_size(m) for m in replied)
    kept: list[EarlierMessage] = []
    for message in reversed([m for m in messages if not m.replied_to]):
        chars += _size(message)
        if len(kept) + len(replied) >= limits.thread_messages or chars > limits.thread_chars:
            break
        kept.append(message)
    chosen = {id(m) for m in [*replied, *kept]}
    return [m for m in messages if id(m) in chosen]  # in the thread's order


def _size(message: EarlierMessage) -> int:
    return len(message.text) + sum(len(f.content) for f in message.files)


def _cut_note(kept: int, read: int, more_before: bool, limits: InputConfig) -> str:
    total = f"{read}+" if more_before else str(read)
    return (f"Only the newest {kept} of {total} earlier messages were read (the bounds are [input] thread_messages "
            f"= {limits.thread_messages} and thread_chars = {limits.thread_chars:,}).")


def _summary(messages: int, files: int, blocks: int, links: int) -> str:
    if not (messages or files):
        return ""
    parts = [f"read {_count(messages, 'earlier message')}", _count(files, "file"), _count(blocks, "code block")]
    if links:
        parts.append(_count(links, "link"))
    return ", ".join(parts)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
