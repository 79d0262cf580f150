"""Reading a diff back into the whole file: each hunk must match whole lines of the current file."""

import pytest

from agents.diffs import Diff, DiffError, apply

CURRENT = 'def total(parts):\n    return " ".join(parts) or "0s"\n\n\ndef zero():\n    return 0\n'


def diff(*hunk: str) -> Diff:
    return Diff("m.py", "--- a/m.py\n+++ b/m.py\n" + "\n".join(hunk) + "\n")


def test_a_hunk_is_applied_where_its_lines_are():
    changed = apply(diff("@@ -5,2 +5,2 @@", " def zero():", "-    return 0", "+    return 0.0"), CURRENT)
    assert changed == CURRENT.replace("return 0\n", "return 0.0\n")


def test_a_hunk_whose_line_is_only_part_of_a_line_of_the_file_does_not_apply():
    # made against a version where the line ended after "join(parts)": applied, it would double the "or"
    stale = diff("@@ -1,2 +1,2 @@", " def total(parts):", '-    return " ".join(parts)', '+    return " ".join(parts) or "0s"')
    with pytest.raises(DiffError, match="do not match the current file"):
        apply(stale, CURRENT)


def test_lines_added_with_no_context_go_on_top_and_removed_lines_leave_no_gap():
    added = apply(diff("@@ -0,0 +1 @@", "+import re", "@@ -6 +7 @@", "-    return 0", "+    return 0.0"), CURRENT)
    assert added == "import re\n" + CURRENT.replace("return 0\n", "return 0.0\n")
    removed = apply(diff("@@ -4,3 +4,0 @@", "-", "-def zero():", "-    return 0"), CURRENT)
    assert removed == 'def total(parts):\n    return " ".join(parts) or "0s"\n\n'


def test_an_empty_line_between_hunks_is_not_read_as_a_line_of_the_file():
    sloppy = diff("@@ -1,2 +1,2 @@", " def total(parts):", '-    return " ".join(parts) or "0s"',
                  '+    return ", ".join(parts) or "0s"', "", "@@ -6 +6 @@", "-    return 0", "+    return 0.0", "")
    assert apply(sloppy, CURRENT) == CURRENT.replace('" ".join', '", ".join').replace("return 0\n", "return 0.0\n")
