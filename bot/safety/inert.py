"""Text from outside (a model's reply, a file name, test output, a stored transcript) made inert for a terminal.

A terminal acts on control characters: ESC starts sequences that clear the screen, move the cursor,
set the window title (OSC 0/2), make links (OSC 8) or write the clipboard (OSC 52); the C1 controls
(U+0080-U+009F, such as the 8-bit CSI U+009B) do the same in one character; a bare carriage return or
a backspace lets a later part of a line overwrite an earlier one; bidirectional overrides make text
read differently from what it is ("Trojan Source"). ``inert`` shows each of them escaped instead, so
a person sees what the text holds rather than what it would do. Line breaks and tabs stay as they are.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls, lone surrogates (a JSON string may carry one; as
# raw bytes it could become a C1 control, and a strict encoder would fail on it), bidi controls.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def inert(text: str) -> str:
    """``text`` with every character a terminal would act on shown escaped (``^[``, ``\\x9b``, ``\\u202e``).
    A carriage return before a line break (Windows line ends) is dropped, not shown: it overwrites nothing."""
    return _UNSAFE.sub(_shown, text.replace("\r\n", "\n"))


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20 or code == 0x7F:
        return "^" + chr(code ^ 0x40)  # caret notation, as `cat -v` shows them: ^[, ^M, ^H, ^?
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


# The characters that reorder what follows them (embeddings, overrides, isolates): with them a line reads otherwise
# than it is ("Trojan Source"; a file name that shows ``.py`` where it ends in ``yp.``). The marks U+200E and
# U+200F, which right-to-left writing uses, only set a direction: they stay.
_REORDERING = re.compile("[\u202a-\u202e\u2066-\u2069]")


def in_written_order(text: str) -> str:
    """``text`` with every character that would reorder how it reads shown escaped (``\\u202e``): for a chat
    message, whose file names, code and output come from a repository, a model or the tests."""
    return _REORDERING.sub(_shown, text)
