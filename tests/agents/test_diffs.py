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


def test_lines_added_into_a_file_go_after_the_line_their_header_names_and_keep_the_rest():
    inserted = apply(diff("@@ -1,0 +2 @@", "+import os"), CURRENT)  # a diff that only adds, into the file
    assert inserted == CURRENT.replace("def total(parts):\n", "def total(parts):\nimport os\n", 1)
    method = apply(diff("@@ -1 +1 @@", "-def total(parts):", "+def total(parts, sep=' '):",
                        "@@ -6,0 +7,2 @@", "+", "+ZERO = zero()"), CURRENT)
    assert method.startswith("def total(parts, sep=' '):\n") and method.endswith("    return 0\n\nZERO = zero()\n")


@pytest.mark.parametrize("header", ["@@ -6 +6,4 @@", "@@ -6,1 +6,4 @@", "@@ -6,0 +7,4 @@", "@@ -6 +7 @@"])
def test_lines_only_added_are_inserted_into_the_file_however_the_header_counts_them(header):
    inserted = apply(diff(header, "+", "+", "+def double(x):", "+    return 2 * x"), CURRENT)
    assert inserted == CURRENT + "\n\ndef double(x):\n    return 2 * x\n"
    assert apply(diff("@@ -1 +1,2 @@", "+import os"), CURRENT) == CURRENT.replace("\n", "\nimport os\n", 1)


def test_a_new_function_sent_as_added_lines_with_no_header_keeps_the_file():
    added = apply(Diff("m.py", "+def double(x):\n+    return 2 * x\n"), CURRENT)
    assert "def total(parts):" in added and "def zero():" in added and "def double(x):" in added


def test_added_lines_that_define_a_name_of_the_file_again_are_the_whole_new_file():
    rewritten = "+def zero():\n+    return 0.0\n+\n+\n+def one():\n+    return 1\n"
    assert apply(Diff("m.py", rewritten), CURRENT) == "def zero():\n    return 0.0\n\n\ndef one():\n    return 1\n"
    new_file = apply(Diff("m.py", "--- /dev/null\n+++ b/m.py\n@@ -0,0 +1,2 @@\n+def one():\n+    return 1\n"), CURRENT)
    assert new_file == "def one():\n    return 1\n"


def test_a_whole_file_sent_as_added_lines_is_the_file():
    whole = diff("@@ -1,6 +1,2 @@", "+def zero():", "+    return 0")
    assert apply(whole, CURRENT) == "def zero():\n    return 0\n"


def test_a_file_with_windows_line_ends_keeps_them_and_trailing_spaces_do_not_stop_a_match():
    crlf = "a = 1  \r\nb = 2\r\nc = 3\r\n"
    assert apply(diff("@@ -1,3 +1,3 @@", " a = 1", "-b = 2", "+b = 20", " c = 3"), crlf) == "a = 1  \r\nb = 20\r\nc = 3\r\n"


def test_blank_lines_are_lines_to_keep_add_or_remove():
    code = "a = 0\n\nx = 1\nb = 2\n"
    assert apply(diff("@@ -2,2 +2,1 @@", " ", "-x = 1"), code) == "a = 0\n\nb = 2\n"
    assert apply(diff("@@ -1,2 +1,1 @@", " a = 0", "-"), code) == "a = 0\nx = 1\nb = 2\n"


def test_of_several_places_a_hunk_goes_to_the_one_its_header_names_and_hunks_apply_in_order():
    assert apply(diff("@@ -3,2 +3,2 @@", " x", "-y", "+Y"), "x\ny\nx\ny\n") == "x\ny\nx\nY\n"
    assert apply(diff("@@ -1 +1 @@", "-a", "+b", "@@ -2 +2 @@", "-b", "+B"), "a\nb\nc\n") == "b\nB\nc\n"


def test_a_whole_file_under_diff_headers_with_no_line_marked_is_the_file():
    # as Qwen2.5-Coder-0.5B answers a request for a diff: the instruction echoed as a header, then the file
    reply = ("--- a/PATH, +++ b/PATH, @@ hunks with context lines); a new file whole.\n+++ b/m.py\n"
             "def total(parts):\n    return \", \".join(parts)\n")
    assert apply(Diff("m.py", reply), CURRENT) == 'def total(parts):\n    return ", ".join(parts)\n'
