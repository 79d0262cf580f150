"""An existing file the team rewrites keeps the shape the repository stores it in: its line endings (a model
answers with LF whatever the file had), its UTF-8 byte-order mark, and whether it ends with a line break.
Without this, a CRLF file rewritten whole would show every one of its lines as changed in the pull request."""

from __future__ import annotations

BOM = "\ufeff"


def in_style_of(original: str, text: str) -> str:
    """``text`` with ``original``'s line endings (when all of them are the same), byte-order mark and final line
    break; an empty ``original`` says nothing of its style and leaves ``text`` as it is."""
    if not original:
        return text
    eol = _line_ending(original)
    if eol == "\r\n":
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    elif eol == "\n":
        text = text.replace("\r\n", "\n")
    if original.startswith(BOM) and not text.startswith(BOM):
        text = BOM + text
    elif not original.startswith(BOM):
        text = text.removeprefix(BOM)
    ends = "\r\n" if text.endswith("\r\n") else "\n" if text.endswith("\n") else ""
    if original.endswith("\n") and not ends and text:
        text += eol or "\n"
    elif not original.endswith("\n") and ends:
        text = text.removesuffix(ends)
    return text


def _line_ending(text: str) -> str:
    """"\\r\\n" or "\\n" when every line break of ``text`` is that one; "" for none, or a mix."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    if crlf and not lf:
        return "\r\n"
    if lf and not crlf:
        return "\n"
    return ""
