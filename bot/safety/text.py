"""Whether text from outside is text the rest of the bot can carry: one rule for every boundary.

Python keeps what is not Unicode inside a ``str`` as lone surrogates: bytes of a command-line argument or an
environment value that are not UTF-8 arrive as U+DC80-U+DCFF (the file system's "surrogateescape"), and a JSON
string may spell half a UTF-16 pair (``"\\ud800"``). Such a string passes every length check and fails much
later, in the first strict encoder it meets: the model client's request, after work was done. Each boundary
(the command line, the environment, a run request, an eval suite) asks ``not_text`` first and refuses with the
sentence it returns.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")


def not_text(text: str, from_bytes: bool = False) -> str:
    """Empty when ``text`` is all Unicode text; else where it is not, e.g. "byte 0xff at character 4 is not
    UTF-8" (``from_bytes``: it was decoded from bytes, as arguments and environment values are) or
    "character 4 is half of a UTF-16 pair (U+D800)"."""
    found = _SURROGATE.search(text)
    if found is None:
        return ""
    code, where = ord(found.group()), found.start() + 1
    if from_bytes and 0xDC80 <= code <= 0xDCFF:  # surrogateescape keeps byte B as U+DC00 + B
        return f"byte {code - 0xDC00:#04x} at character {where} is not UTF-8"
    return f"character {where} is half of a UTF-16 pair (U+{code:04X}), not a character"
