"""Names for a flat Gist: safe, unique, readable; and which contents cannot be published."""

from __future__ import annotations

from bot.checkin.files import gist_layout, safe_parts, unfit_reason


def test_safe_parts_refuses_escapes_and_keeps_the_rest() -> None:
    assert safe_parts("src/./pkg//mod.py") == ("src", "pkg", "mod.py")
    assert safe_parts("src\\win\\mod.py") == ("src", "win", "mod.py")
    assert safe_parts("a/../../b") is None
    assert safe_parts("/etc/passwd") is None
    assert safe_parts("C:/x.py") is None
    assert safe_parts("bad\x00name.py") is None  # a control character is refused, not patched
    assert safe_parts("odd:name?.py") == ("odd_name_.py",)  # fine on Linux, not in a Windows download
    assert safe_parts(".git/config") is None


def test_collisions_get_numbered_without_losing_the_extension() -> None:
    layout = gist_layout({"a/b.py": "1", "a__b.py": "2", "A__B.py": "3", ".env": "4", "x/.env": "5"}, 1000)

    assert list(layout.files) == ["a__b.py", "a__b-2.py", "A__B-3.py", ".env", "x__.env"]


def test_unfit_contents() -> None:
    assert unfit_reason("   \n", 10) is not None
    assert unfit_reason("a\x00b", 10) is not None
    assert unfit_reason("\udcff", 10) is not None  # a byte that was not UTF-8, kept by surrogateescape
    assert unfit_reason("é" * 6, 10) == "too large to publish (12 bytes, the limit is 10)"
    assert unfit_reason("fine", 10) is None
