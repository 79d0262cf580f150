"""Bash: each test_*.sh / *_test.sh file is one test; it passes when it reaches its end (or its own exit) with 0."""

from __future__ import annotations

import re

from agents.language.description import Language, TestRun
from agents.language.sandbox_env import BASE_ENV, OFFLINE_PREFIX

# One test script, run as ``bash -c RUN_ONE TEST END``: sourced by a shell that writes "END CODE" to fd 3 once the
# script ends by itself, its last line or its own ``exit CODE``. A file it sources (``. ./calc.sh``) that calls
# ``exit`` (a script's main run at the bottom) would otherwise end the test with that file's code, 0, before a
# single check ran: ``exit`` is a function here, and an exit called from another file says so and writes nothing, so
# the test has not passed. An exit in a subshell (``$(main add 2 3)``) ends only that subshell, as always.
# A check written on a line of its own in the test (``[ "$(sub 5 3)" = 2 ]``, ``[[ ... ]]``, ``test ...``) that came
# out false, in a script without ``set -e``, did not stop it: the next line's success would pass the test whatever
# the check said. Bash's ERR trap sees exactly such a command (not one in an ``if``, a ``while`` or an ``&&`` /
# ``||`` list), so the first of them is remembered and the test ends with 1 and a sentence naming it.
RUN_ONE = r"""__codegen_test=$0 __codegen_end=$1 __codegen_false=; shift
mapfile -t __codegen_lines < "$__codegen_test"
__codegen_check() {
  local line=${__codegen_lines[$1-1]}
  line=${line#"${line%%[![:space:]]*}"}
  case $line in "[ "*|"[[ "*|"test "*) __codegen_false="line $1: $line" ;; esac
}
trap '[ -z "$__codegen_false" ] && [ "${BASH_SOURCE[0]}" = "$__codegen_test" ] && __codegen_check $LINENO' ERR
__codegen_ended() {
  local code=$1
  if [ "$code" = 0 ] && [ -n "$__codegen_false" ]; then
    echo "[sandbox] $__codegen_test: the check on $__codegen_false was false, but the test went on and ended with \
success: a failing check must end the test (set -e at its top, or || exit 1 after the check)" >&2
    code=1
  fi
  echo "$__codegen_end $code" >&3
  return "$code"
}
exit() {
  local code=${1-$?}
  if [ "$BASH_SUBSHELL" = 0 ] && [ "${BASH_SOURCE[1]}" != "$__codegen_test" ]; then
    echo "[sandbox] ${BASH_SOURCE[1]:-a sourced file} called exit $code while $__codegen_test ran: the test ends there, \
before its checks (run the script's main only when it is not sourced)" >&2
  elif [ "$BASH_SUBSHELL" = 0 ]; then __codegen_ended "$code"; code=$?; fi
  builtin exit "$code"
}
. "$__codegen_test"; __codegen_ended $?; builtin exit $?"""
# A test passes when it reached its end (the line RUN_ONE writes, with a word made for the run) with code 0.
_TEST = r"""n=0; bad=0; end=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n'); run=$(cat <<'RUN_ONE'
""" + RUN_ONE + r"""
RUN_ONE
)
for t in $(find . \( -name 'test_*.sh' -o -name '*_test.sh' \) | sort); do n=$((n+1))
  bash -c "$run" "$t" "$end" 3>/tmp/.codegen-ran; ended=$(cat /tmp/.codegen-ran)
  if [ "$ended" = "$end 0" ]; then echo "ok $n - $t"; else echo "not ok $n - $t"; bad=1; fi; done
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
