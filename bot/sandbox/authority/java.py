"""Java: each user test class run by a small runner of the sandbox's own, with JUnit ahead of every
class the team compiled, and no test class of the team's present.

The runner is compiled on its own against JUnit's jars, and those jars come first on the class path,
so a team-written ``org/junit/runner/JUnitCore.java`` (or any other JUnit or Hamcrest class) cannot
stand in for the real one. The runner counts, per user class,
the tests run, failed, stopped by an assumption and ignored, and writes them outside the work dir.
Without JUnit in the image, each user class's ``main()`` runs with assertions on, through the language's launcher
(``agents.language.java.MAIN_LAUNCHER``): its exit code is its result, and only with the file the launcher makes once
main() returned (``Runtime.halt(0)`` in the code runs no shutdown hook the launcher could catch it with).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence

from agents.language.java import JUNIT_BEGAN, JUNIT_ENDED, MAIN_HALTED, MAIN_LAUNCHER, MAIN_LAUNCHER_SOURCE, RAN_ENV
from bot.sandbox.authority import REPORT_DIR, Authority, FileResult, Verdict, judge
from bot.sandbox.judge import JUDGE_DIR

JARS = ("/usr/share/java/junit4.jar", "/usr/share/java/hamcrest-core.jar")
RUNNER = "CodegenAuthorityRunner"
_RUNNER_SOURCE = """
import org.junit.internal.TextListener;
import org.junit.runner.*;
import org.junit.runner.notification.*;
import java.io.*;

public class RUNNER_NAME {
    public static void main(String[] args) throws Exception {
        try (PrintWriter report = new PrintWriter(new FileWriter(args[0]))) {
            for (int i = 1; i < args.length; i++) {
                final int[] assumed = {0};
                JUnitCore core = new JUnitCore();
                core.addListener(new TextListener(System.out));
                core.addListener(new RunListener() {
                    @Override public void testAssumptionFailure(Failure failure) { assumed[0]++; }
                });
                Result result = core.run(Class.forName(args[i]));
                report.println(args[i] + " " + result.getRunCount() + " " + result.getFailureCount() + " "
                               + assumed[0] + " " + result.getIgnoreCount());
                report.flush();
            }
        }
        System.out.flush();
        Runtime.getRuntime().halt(0);  // no shutdown hook of the code runs after the report
    }
}
""".replace("RUNNER_NAME", RUNNER)
_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.M)
_LINE = re.compile(r"^([\w.$]+) (\d+) (\d+) (\d+) (\d+)$", re.M)


class JavaTest(Authority):
    report_path = f"{JUDGE_DIR}/user-report.txt"  # sealed by the sandbox as the runner closes it

    def command(self, user: Sequence[str], files: Mapping[str, str], workdir: str, token: str) -> str:
        classes = " ".join(shlex.quote(_class_name(path, files.get(path, ""))) for path in user)
        jars = " ".join(JARS)
        return f"""rm -rf {REPORT_DIR} && mkdir -p {REPORT_DIR}/classes || exit 2
CP={REPORT_DIR}/none; for j in {jars}; do [ -f "$j" ] && CP="$CP:$j"; done
if [ -f {JARS[0]} ]; then
  printf '%s' {shlex.quote(_RUNNER_SOURCE)} > {REPORT_DIR}/{RUNNER}.java
  javac -d {REPORT_DIR}/runner -cp "$CP" -sourcepath {REPORT_DIR} {REPORT_DIR}/{RUNNER}.java || exit 2
fi
javac -d {REPORT_DIR}/classes -cp "$CP" $(find . -name '*.java') || exit 2
if [ -f {JARS[0]} ]; then exec java -cp "$CP:{REPORT_DIR}/runner:{REPORT_DIR}/classes" {RUNNER} {self.report_path} {classes}; fi
printf '%s' {shlex.quote(MAIN_LAUNCHER_SOURCE)} > {REPORT_DIR}/{MAIN_LAUNCHER}.java
javac -d {REPORT_DIR}/runner {REPORT_DIR}/{MAIN_LAUNCHER}.java || exit 2
ran={REPORT_DIR}/ran-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
for t in {classes}; do rm -f "$ran"
  java -ea -cp {REPORT_DIR}/runner:{REPORT_DIR}/classes {MAIN_LAUNCHER} "$t" "$ran" >&2; code=$?
  [ $code = 0 ] && [ ! -f "$ran" ] && {{ echo "[sandbox] $t: {MAIN_HALTED}" >&2; code=3; }}
  if [ $code = 0 ]; then echo "$t 1 0 0 0"; else echo "$t 1 1 0 0"; fi
done > {self.report_path}"""

    # The team's pass: the language's runner (``agents.language.java``) says where it began and that it ended.
    def team_env(self, token: str) -> dict[str, str]:
        return {RAN_ENV: token}

    def team_problem(self, stdout: str, stderr: str, token: str, files: Mapping[str, str]) -> str:
        del stderr, files
        if f"{JUNIT_BEGAN} {token}\n" not in stdout or f"\n{JUNIT_ENDED} {token} " in stdout:
            return ""  # (a repository's build tool, or the runner that ends each main() class: the exit code decides)
        return ("the JUnit run ended before JUnit summed up the tests (System.exit or Runtime.halt in the code or the "
                "tests): what it printed does not count; let the tests end by returning or throwing")

    def display(self, stdout: str) -> str:
        return re.sub(rf"^\n?(?:{JUNIT_BEGAN}|{JUNIT_ENDED}) .*\n?", "", stdout, flags=re.M)

    def verdict(self, user: Sequence[str], files: Mapping[str, str], stdout: str, report: str,
                token: str, workdir: str) -> Verdict:
        results = {path: FileResult() for path in user}
        owner = {_class_name(path, files.get(path, "")): path for path in user}
        for match in _LINE.finditer(report):
            path = owner.get(match.group(1))
            if path is None:
                continue
            run, failed, assumed, ignored = (int(match.group(i)) for i in range(2, 6))
            result, text = results[path], files.get(path, "")
            result.ran = True
            result.failed += failed
            result.passed += max(run - failed - assumed, 0)
            if assumed and "assume" not in text.lower():
                result.foreign_skips.append(f"{assumed} test(s) stopped by an assumption the file does not make")
            if ignored and "@Ignore" not in text:
                result.foreign_skips.append(f"{ignored} test(s) ignored, though the file ignores none")
        return judge(results)


def _class_name(path: str, text: str) -> str:
    stem = posixpath.splitext(posixpath.basename(path))[0]
    package = _PACKAGE.search(text)
    return f"{package.group(1)}.{stem}" if package else stem
