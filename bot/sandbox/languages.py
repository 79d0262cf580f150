"""The built-in language table and how ``[sandbox.languages]`` lays over it.

Adding a language is one more entry here or in config.toml: an image, commands and a report format.
Commands run with ``sh -c`` as an unprivileged user, with a read-only root: everything a tool writes
(caches, build output, installed dependencies) goes to /work or /tmp, both small tmpfs mounts.
The setup command also sees SANDBOX_NETWORK=1 or 0: whether it has a network.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import shlex

from bot.config.sections import LanguageConfig, SandboxConfig
from bot.sandbox.authority.python import PYTEST_THEN_EXIT

OFFLINE_ENV = "CODEGEN_SANDBOX_OFFLINE"  # "1": use the offline images whatever the config says
OFFLINE_PREFIX = "codegen-chat-sandbox"

_BASE_ENV = {"HOME": "/tmp", "LANG": "C.UTF-8", "TMPDIR": "/tmp"}

# Without a network (SANDBOX_NETWORK=0) pip must not look for an index or for build tools to fetch.
_PYTHON_SETUP = (
    "pip install --quiet --no-cache-dir --disable-pip-version-check --break-system-packages "
    '--target /tmp/deps $([ "$SANDBOX_NETWORK" = 1 ] || echo --no-index --no-build-isolation) '
    "-r requirements.txt"
)
# pytest with no ini file of the team's (``-c /dev/null``: no addopts such as ``--co``, ``-k`` or ``-p no:...``
# from pytest.ini, pyproject.toml, setup.cfg or tox.ini), counted from a JUnit XML report outside the work
# dir: a run that ends before pytest writes it (sys.exit or os._exit at import) has not passed. No plugin
# the dependency setup installed is loaded by its entry point (it could rewrite the report).
_PYTHON_REPORT = "/tmp/.judge/junit.xml"  # sealed by the sandbox (bot.sandbox.judge)
# pytest's own main, then the process ends (os._exit): no atexit handler of the code runs after the report.
_PYTHON_TEST = (f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -c {shlex.quote(PYTEST_THEN_EXIT)} -c /dev/null --rootdir=. "
                "-q -rfE --tb=short "
                f"-p no:cacheprovider --color=no --junitxml={_PYTHON_REPORT}")
_NODE_TEST_FILES = "$(find . -path ./node_modules -prune -o \\( -name '*.test.{ext}' -o -name '*_test.{ext}' " \
    "-o -name 'test_*.{ext}' -o -name '*.spec.{ext}' \\) -print | sort)"
# No lifecycle script runs (the package's own or a dependency's): the setup installs, it runs nothing.
_NODE_SETUP = "if command -v npm >/dev/null; then npm install --no-audit --no-fund --ignore-scripts; " \
    "else echo 'npm is not in this image: dependencies not installed' >&2; fi"
# TypeScript: compiled by tsc when the image has it (the offline one does), else node >= 22.6 strips
# the types itself (the official node image; imports then name the .ts file). Without @types/node,
# tsc cannot type `node:*` imports; those notes are dropped, the code still compiles.
_TS_TEST = (
    "if command -v tsc >/dev/null; then "
    "tsc --outDir /tmp/ts-out --rootDir . --module commonjs --target es2020 --skipLibCheck "
    "$(find . -path ./node_modules -prune -o -name '*.ts' -print) | grep -v \"Cannot find module 'node:\" >&2; "
    "cd /tmp/ts-out && exec node --test --test-reporter=tap "
    f"{_NODE_TEST_FILES.format(ext='js')}; fi; "
    f"exec node --experimental-strip-types --test --test-reporter=tap {_NODE_TEST_FILES.format(ext='ts')}"
)
# Java: JUnit 4 when the image has it, else every *Test class's main() run with assertions on (-ea).
# JUnit's jars come before the compiled classes, so no class of the team's stands in for JUnit's.
_JAVA_TEST = r"""mkdir -p /tmp/classes && CP=
for j in /usr/share/java/junit4.jar /usr/share/java/hamcrest-core.jar lib/*.jar; do
  [ -f "$j" ] && CP="$CP$j:"; done; CP="$CP/tmp/classes"
javac -d /tmp/classes -cp "$CP" $(find . -name '*.java') || exit 2
TESTS=$(cd /tmp/classes && find . -name '*Test.class' ! -name '*$*' | sed 's|^\./||;s|\.class$||;s|/|.|g' | sort)
[ -n "$TESTS" ] || { echo 'no test classes (names ending in Test) found' >&2; exit 5; }
if [ -f /usr/share/java/junit4.jar ]; then exec java -cp "$CP" org.junit.runner.JUnitCore $TESTS; fi
n=0; bad=0
for t in $TESTS; do n=$((n+1))
  if java -ea -cp "$CP" "$t"; then echo "ok $n - $t"; else echo "not ok $n - $t"; bad=1; fi; done
echo "1..$n"; exit $bad"""
# C and C++: every source but main.c/main.cpp compiled into one test binary, which should print TAP.
_C_TEST = "cc -std=c11 -Wall -O0 -o /tmp/test_bin $(find . -name '*.c' ! -name main.c) -lm && /tmp/test_bin"
_CPP_TEST = (
    "c++ -std=c++17 -Wall -O0 -o /tmp/test_bin $(find . \\( -name '*.cpp' -o -name '*.cc' \\) "
    "! -name main.cpp ! -name main.cc) && /tmp/test_bin"
)
# Bash: each test_*.sh / *_test.sh file is one test; it passes when it exits 0.
_BASH_TEST = r"""n=0; bad=0
for t in $(find . \( -name 'test_*.sh' -o -name '*_test.sh' \) | sort); do n=$((n+1))
  if bash "$t"; then echo "ok $n - $t"; else echo "not ok $n - $t"; bad=1; fi; done
echo "1..$n"; [ "$n" -gt 0 ] || { echo 'no test_*.sh or *_test.sh files found' >&2; exit 5; }; exit $bad"""

DEFAULT_LANGUAGES: dict[str, LanguageConfig] = {
    "python": LanguageConfig(
        # The official image has no pytest: `sandbox build` adds it on top.
        image="python:3.12-slim", image_prepare="pip install --no-cache-dir pytest",
        offline_image=f"{OFFLINE_PREFIX}/base:bookworm", extensions=(".py",),
        env={**_BASE_ENV, "PYTHONPATH": "/tmp/deps", "PYTHONDONTWRITEBYTECODE": "1"},
        setup_when=("requirements.txt",), setup_command=_PYTHON_SETUP,
        test_command=_PYTHON_TEST, report_format="pytest", report_file=_PYTHON_REPORT,
    ),
    "javascript": LanguageConfig(
        image="node:22-slim", offline_image=f"{OFFLINE_PREFIX}/node:bookworm",
        offline_packages=("nodejs", "node-typescript"), extensions=(".js", ".mjs", ".cjs"),
        env=dict(_BASE_ENV), setup_when=("package.json",), setup_command=_NODE_SETUP,
        test_command=f"node --test --test-reporter=tap {_NODE_TEST_FILES.format(ext='js')}",
        report_format="tap",
    ),
    "typescript": LanguageConfig(
        image="node:22-slim", offline_image=f"{OFFLINE_PREFIX}/node:bookworm",
        offline_packages=("nodejs", "node-typescript"), extensions=(".ts",),
        env={**_BASE_ENV, "NODE_PATH": "/work/node_modules"},  # compiled tests run from /tmp/ts-out
        setup_when=("package.json",), setup_command=_NODE_SETUP, test_command=_TS_TEST, report_format="tap",
    ),
    "go": LanguageConfig(
        image="golang:1.23", offline_image=f"{OFFLINE_PREFIX}/go:bookworm", offline_packages=("golang-go",),
        extensions=(".go",),
        env={**_BASE_ENV, "GOCACHE": "/tmp/go-cache", "GOPATH": "/tmp/go", "CGO_ENABLED": "0",
             "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"},
        setup_when=("go.sum",), setup_command="go mod download",
        test_command="[ -f go.mod ] || go mod init sandbox >/dev/null 2>&1; go test -json ./...",
        report_format="go",
    ),
    "rust": LanguageConfig(
        image="rust:1-slim", offline_image=f"{OFFLINE_PREFIX}/rust:bookworm",
        offline_packages=("rustc", "cargo"), extensions=(".rs",),
        env={**_BASE_ENV, "CARGO_HOME": "/tmp/cargo", "CARGO_TARGET_DIR": "/tmp/target",
             "CARGO_TERM_COLOR": "never"},
        setup_when=("Cargo.lock",), setup_command="cargo fetch",
        test_command="cargo test --offline", report_format="cargo",
    ),
    "java": LanguageConfig(
        image="eclipse-temurin:21", offline_image=f"{OFFLINE_PREFIX}/java:bookworm",
        offline_packages=("default-jdk-headless", "junit4"), extensions=(".java",),
        env=dict(_BASE_ENV),
        test_command=_JAVA_TEST, report_format="junit",
    ),
    "c": LanguageConfig(
        image="gcc:14", offline_image=f"{OFFLINE_PREFIX}/gcc:bookworm",
        offline_packages=("gcc", "g++", "libc6-dev"), extensions=(".c", ".h"), env=dict(_BASE_ENV),
        test_command=_C_TEST, report_format="tap",
    ),
    "cpp": LanguageConfig(
        image="gcc:14", offline_image=f"{OFFLINE_PREFIX}/gcc:bookworm",
        offline_packages=("gcc", "g++", "libc6-dev"), extensions=(".cpp", ".cc", ".hpp"), env=dict(_BASE_ENV),
        test_command=_CPP_TEST, report_format="tap",
    ),
    "bash": LanguageConfig(
        image="bash:5", offline_image=f"{OFFLINE_PREFIX}/base:bookworm", extensions=(".sh",),
        env=dict(_BASE_ENV), test_command=_BASH_TEST, report_format="tap",
    ),
}


def languages(config: SandboxConfig) -> dict[str, LanguageConfig]:
    """The built-in table with the config's entries laid over it, name by name (each entry was checked when
    the config was read: ``bot.config.sections.language_problem``)."""
    return {**DEFAULT_LANGUAGES, **config.languages}


def use_offline(config: SandboxConfig) -> bool:
    return config.use_offline_images or os.environ.get(OFFLINE_ENV, "") == "1"


def image_for(language: LanguageConfig, config: SandboxConfig) -> str:
    """The image a run prefers: offline when asked for, else the configured one (prepared when it says so)."""
    return image_candidates(language, config)[0]


def image_candidates(language: LanguageConfig, config: SandboxConfig) -> list[str]:
    """The images a run may use, best first: the registry's (prepared when it says so), then the offline
    one; only the offline one when asked for (``use_offline_images``, ``CODEGEN_SANDBOX_OFFLINE=1``)."""
    registry = prepared_tag(language) if language.image_prepare else language.image
    if use_offline(config) and language.offline_image:
        return [language.offline_image]
    return [image for image in (registry, language.offline_image) if image]


def prepared_tag(language: LanguageConfig) -> str:
    """Where `sandbox build` puts ``image`` plus its preparation step (a new step, a new tag)."""
    digest = hashlib.sha256(f"{language.image}\n{language.image_prepare}".encode()).hexdigest()[:12]
    name = re.sub(r"[^a-z0-9_.-]", "-", language.image.lower())[:80]
    return f"{OFFLINE_PREFIX}/prepared:{name}-{digest}"


def with_offline(config: SandboxConfig) -> SandboxConfig:
    """The same config, switched to the offline images (``--offline`` on the command line)."""
    return dataclasses.replace(config, use_offline_images=True)
