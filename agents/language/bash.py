"""Bash: each test_*.sh / *_test.sh file is one test; it passes when it exits 0."""

from __future__ import annotations

import re

from agents.language.description import Language, TestRun
from agents.language.sandbox_env import BASE_ENV, OFFLINE_PREFIX

_TEST = r"""n=0; bad=0
for t in $(find . \( -name 'test_*.sh' -o -name '*_test.sh' \) | sort); do n=$((n+1))
  if bash "$t"; then echo "ok $n - $t"; else echo "not ok $n - $t"; bad=1; fi; done
echo "1..$n"; [ "$n" -gt 0 ] || { echo 'no test_*.sh or *_test.sh files found' >&2; exit 5; }; exit $bad"""

BASH = Language(
    name="bash", title="Bash", extensions=(".sh", ".bash"), test_files=("test_*.sh", "*_test.sh"), usual_file="main.sh",
    aliases=("sh", "shell"), named_by=r"\bbash\b|shell script",
    how_tests_are_found="files named test_*.sh or *_test.sh, each exiting non-zero on failure",
    test_marker=re.compile(r"^\s*(?:assert\w*|fail)\b|\[\[? .* \]\]? \|\| (?:exit|fail)", re.M),
    error_at=(re.compile(r"^(?:\./)?(?P<path>[\w./-]+\.(?:sh|bash)): line \d+: syntax error", re.M),),  # "./t.sh: line 3: ..."
    run=TestRun(image="bash:5", offline_image=f"{OFFLINE_PREFIX}/base:bookworm", env=dict(BASE_ENV),
                test_command=_TEST, report_format="tap"),
)
