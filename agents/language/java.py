"""Java: JUnit 4 when the image has it, else each *Test or *Tests class's main() run with assertions on."""

from __future__ import annotations

import re

from agents.language.description import Language, TestRun
from agents.language.sandbox_env import BASE_ENV, OFFLINE_PREFIX

_PUBLIC_TYPE = re.compile(r"^\s*public\s+(?:final\s+|abstract\s+)*(?:class|interface|enum|record)\s+(\w+)", re.M)
_CLASS = re.compile(r"^\s*(?:public\s+)?(?:final\s+)?class\s+(\w+)", re.M)
# JUnit's jars come before the compiled classes, so no class of the team's stands in for JUnit's. Every class
# named as the language names test files (``test_files``: *Test, *Tests) runs. With JUnit, a runner of the
# sandbox's own runs them as JUnitCore does (its console summary) and names each test JUnit ignored (@Ignore) or an
# assumption stopped (assumeTrue): "OK (3 tests)" says neither, and such a test checked nothing
# (``bot.sandbox.skips``). It says where it starts and, once JUnit summed up every class, that it ended, with a word
# the sandbox gives it (``RAN_ENV``), then halts: a summary the code prints before it exits ("OK (3 tests)", then
# System.exit(0)) lacks the end line, and no shutdown hook of the code runs after the summary to change the exit code.
JUNIT_NOT_RUN = "[sandbox] did not run:"
RAN_ENV = "CODEGEN_SANDBOX_RAN"
JUNIT_BEGAN, JUNIT_ENDED = "@@codegen-junit", "@@codegen-ran"
_RUNNER = r"""import org.junit.internal.TextListener;
import org.junit.runner.*;
import org.junit.runner.notification.*;
public class CodegenChatJUnit {
  static void said(String kind, Description test) { System.out.println("MARK " + kind + " " + test.getDisplayName()); }
  public static void main(String[] names) throws Exception {
    String word = System.getenv("RAN_ENV");
    System.out.println("BEGAN " + word);
    JUnitCore core = new JUnitCore();
    core.addListener(new TextListener(System.out));
    core.addListener(new RunListener() {
      @Override public void testIgnored(Description test) { said("ignored", test); }
      @Override public void testAssumptionFailure(Failure failure) { said("assumption", failure.getDescription()); }
    });
    Class<?>[] classes = new Class<?>[names.length];
    for (int i = 0; i < names.length; i++) classes[i] = Class.forName(names[i]);
    int code = core.run(classes).wasSuccessful() ? 0 : 1;
    System.out.println("\nENDED " + word + " " + code);
    System.out.flush();
    Runtime.getRuntime().halt(code);
  }
}""".replace("MARK", JUNIT_NOT_RUN).replace("RAN_ENV", RAN_ENV).replace("BEGAN", JUNIT_BEGAN).replace("ENDED", JUNIT_ENDED)
# Without JUnit each test class's main() runs through this launcher of the sandbox's, so that the code ending the JVM
# with System.exit(0) in the middle of a test (a CLI's "quit") is not the test passing: a JVM ended before main()
# returned, other than by the test class itself (or a helper class written in a test file) calling System.exit (its
# verdict), exits 3 with a sentence. Runtime.halt(0) runs no shutdown hook, so the launcher also makes the file its
# second argument names once main() returned or the test ended the JVM itself: a test passes only with that file.
MAIN_LAUNCHER = "CodegenChatMain"
MAIN_HALTED = ("the JVM ended with 0 before its main() returned (Runtime.halt in the code or a thread), so the test "
               "did not finish; let main() return, or fail with an AssertionError")
MAIN_LAUNCHER_SOURCE = r"""import java.lang.reflect.InvocationTargetException;
import java.util.Map;

public class CodegenChatMain {
  static volatile boolean ended;

  static boolean endedByTheTest(String test) {
    for (Map.Entry<Thread, StackTraceElement[]> entry : Thread.getAllStackTraces().entrySet()) {
      StackTraceElement[] stack = entry.getValue();
      for (int i = stack.length - 2; i >= 0; i--) {
        String name = stack[i].getClassName() + "." + stack[i].getMethodName();
        if (name.equals("java.lang.System.exit") || name.equals("java.lang.Runtime.exit")) {
          StackTraceElement caller = stack[i + 1];
          if (caller.getClassName().equals("java.lang.System")) continue;
          // The test class, a class nested in it, or a helper class written in a test file (a second class of
          // CalcTest.java): code is never compiled from a file named as a test.
          String file = caller.getFileName();
          return caller.getClassName().equals(test) || caller.getClassName().startsWith(test + "$")
              || (file != null && (file.endsWith("Test.java") || file.endsWith("Tests.java")));
        }
      }
    }
    return false;
  }

  static void said(String[] args) {
    if (args.length < 2) return;
    try {
      java.nio.file.Files.write(java.nio.file.Paths.get(args[1]), new byte[0]);
    } catch (java.io.IOException e) {
      System.err.println("[sandbox] could not say the test ended: " + e);
    }
  }

  public static void main(String[] args) throws Throwable {
    final String test = args[0];
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      if (ended) return;
      if (endedByTheTest(test)) { said(args); return; }
      System.out.flush();
      System.err.println("[sandbox] " + test + ": the JVM was ended (System.exit in the code or a thread) before "
          + "its main() returned: the test did not finish; let main() return, or fail with an AssertionError");
      Runtime.getRuntime().halt(3);
    }));
    try {
      java.lang.reflect.Method main = Class.forName(test).getMethod("main", String[].class);
      main.setAccessible(true);  // as the java command does, a class that is not public runs too
      main.invoke(null, (Object) new String[0]);
      said(args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    } finally {
      ended = true;
    }
  }
}"""
_TEST = r"""mkdir -p /tmp/classes /tmp/runner && CP=
for j in /usr/share/java/junit4.jar /usr/share/java/hamcrest-core.jar lib/*.jar; do
  [ -f "$j" ] && CP="$CP$j:"; done; CP="$CP/tmp/classes"
javac -d /tmp/classes -cp "$CP" $(find . -name '*.java') || exit 2
TESTS=$(cd /tmp/classes && find . \( -name '*Test.class' -o -name '*Tests.class' \) ! -name '*$*' |
  sed 's|^\./||;s|\.class$||;s|/|.|g' | sort)
[ -n "$TESTS" ] || { echo 'no test classes (names ending in Test or Tests) found' >&2; exit 5; }
if [ -f /usr/share/java/junit4.jar ]; then
  cat > /tmp/runner/CodegenChatJUnit.java <<'RUNNER'
""" + _RUNNER + r"""
RUNNER
  javac -d /tmp/runner -cp "$CP" /tmp/runner/CodegenChatJUnit.java || exit 2
  exec java -cp "/tmp/runner:$CP" CodegenChatJUnit $TESTS
fi
cat > /tmp/runner/CodegenChatMain.java <<'LAUNCHER'
""" + MAIN_LAUNCHER_SOURCE + r"""
LAUNCHER
javac -d /tmp/runner /tmp/runner/CodegenChatMain.java || exit 2
n=0; bad=0; ran=/tmp/.codegen-main-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
for t in $TESTS; do n=$((n+1)); rm -f "$ran"
  java -ea -cp "/tmp/runner:$CP" CodegenChatMain "$t" "$ran"; code=$?
  [ $code = 0 ] && [ ! -f "$ran" ] && { echo "[sandbox] $t: HALTED" >&2; code=3; }
  if [ $code = 0 ]; then echo "ok $n - $t"; else echo "not ok $n - $t"; bad=1; fi; done
echo "1..$n"; exit $bad""".replace("HALTED", MAIN_HALTED)


def _name_code(code: str) -> str:
    """A public type lives in the file named after it."""
    public = _PUBLIC_TYPE.search(code)
    return f"{public.group(1)}.java" if public else ""


def _name_test(code: str, folder: str, stem: str) -> str:
    """The test class's own name, else the module's name with Test after it."""
    cls = _CLASS.search(code)
    return f"{cls.group(1)}.java" if cls else f"{stem[:1].upper()}{stem[1:]}Test.java"


JAVA = Language(
    name="java", title="Java", extensions=(".java",), test_files=("*Test.java", "*Tests.java"),
    usual_file="Main.java", aliases=("jvm",), named_by=r"\bjava\b",
    how_tests_are_found="classes whose names end in Test or Tests, with @Test methods (JUnit 4) or a main() that asserts",
    test_marker=re.compile(r"@Test\b|\bassert\w*\s*\(|junit", re.M), name_code=_name_code, name_test=_name_test,
    error_at=(re.compile(r"^(?:\./)?(?P<path>[\w./-]+\.(?:java|kt)):\d+(?::\d+)?: (?!warning|note)", re.M),),
    run=TestRun(
        image="eclipse-temurin:21", offline_image=f"{OFFLINE_PREFIX}/java:bookworm",
        offline_packages=("default-jdk-headless", "junit4"), env=dict(BASE_ENV),
        test_command=_TEST, report_format="junit",
    ),
)
