"""A language added under ``[sandbox.languages.NAME]`` works wherever a built-in one does: its files are
recognised and named, the team's tests in it are run and counted (real Docker, Perl from the base image)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.events import RunFinished, TestReported
from agents.manager import Manager
from agents.prompts import PromptBook
from agents.run_request import RunRequest
from agents.types import FileSet, RunStatus, TestJob, TestStatus
from bot.config.sections import Config, ConfigError, LanguageConfig, SandboxConfig, load_config
from bot.runs.service import team_settings
from bot.sandbox import DockerSandbox
from bot.sandbox.languages import REPORT_FORMATS, languages, registry
from bot.sandbox.results import PARSERS
from tests.fakes.publishers import RecordingPublisher
from tests.fakes.team_script import APPROVE, README, ScriptedModel
from tests.sandbox.conftest import configured

# Perl is in every Debian image; its tests are t/*.t files printing TAP, as `prove` reads them.
PERL = LanguageConfig(
    offline_image="codegen-chat-sandbox/base:bookworm", image="codegen-chat-sandbox/base:bookworm",
    extensions=(".pm", ".pl", ".t"), test_files=("t/*.t",), title="Perl",
    env={"HOME": "/tmp", "LANG": "C.UTF-8"},
    test_command='for t in $(find t -name "*.t" | sort); do perl -I. "$t" || exit 1; done', report_format="tap",
)
CODE = "use strict;\nsub add { my ($x, $y) = @_; return $x + $y; }\n1;\n"
TESTS = ('require "./main.pm";\nmy $n = 0;\n'
         'sub check { my ($ok, $name) = @_; $n++; print(($ok ? "ok" : "not ok") . " $n - $name\\n"); }\n'
         'check(add(2, 3) == 5, "adds");\ncheck(add(-1, 1) == 0, "adds negatives");\nprint "1..$n\\n";\n')


def test_every_report_format_a_language_may_name_is_counted_by_the_sandbox():
    assert set(PARSERS) == set(REPORT_FORMATS)


def test_a_configured_language_is_in_the_one_table_every_layer_reads():
    config = SandboxConfig(languages={"perl": PERL})
    known = registry(config)
    assert known.of_path("lib/Calc.pm") == "perl" and known.detect(["main.pm", "t/main.t"]) == "perl"
    assert known.looks_like_test("t/main.t") and not known.looks_like_test("main.pm")
    assert languages(config)["perl"] is PERL  # the sandbox runs what the same entry says
    assert team_settings(Config(sandbox=config)).languages.of_path("main.pm") == "perl"


def test_the_language_keys_load_from_config_toml(tmp_path: Path):
    path = tmp_path / "config.toml"
    path.write_text('[sandbox.languages.zig]\nimage = "zig:0.13"\ntest_command = "zig test"\n'
                    'extensions = [".zig"]\ntest_files = ["*_test.zig"]\nusual_file = "src/main.zig"\n')
    known = registry(load_config(path).sandbox)
    assert known.of_path("src/main.zig") == "zig" and known.looks_like_test("calc_test.zig")
    assert known.get("zig") is not None and known.get("zig").code_file("") == "src/main.zig"  # type: ignore[union-attr]


@pytest.mark.parametrize(("entry", "said"), [
    (LanguageConfig(image="zig", test_command="t", extensions=("zig",)), r"extensions: 'zig' .* like \"\.zig\""),
    (LanguageConfig(image="zig", test_command="t", test_files=("calc_test.zig",)), r"test_files: 'calc_test\.zig'"),
])
def test_a_bad_extension_or_test_pattern_is_refused_naming_its_key(entry, said):
    with pytest.raises(ConfigError, match=rf"sandbox\.languages\.zig\.{said}"):
        registry(SandboxConfig(languages={"zig": entry}))


@pytest.mark.docker
@pytest.mark.parametrize(("code", "expected"), [(CODE, (TestStatus.PASSED, 2, 0)),
                                                (CODE.replace("$x + $y", "abs($x) + $y"), (TestStatus.FAILED, 1, 1))])
async def test_a_configured_languages_tests_are_run_and_counted(docker_client, code, expected):
    async with DockerSandbox(configured(languages={"perl": PERL}), client=docker_client) as sandbox:
        report = await sandbox.run(TestJob("perl", FileSet({"main.pm": code, "t/main.t": TESTS})))
    assert (report.status, report.passed, report.failed) == expected, report.output()


@pytest.mark.docker
async def test_a_team_run_in_a_configured_language_names_its_bare_blocks_and_passes(docker_client):
    """Bare ```perl blocks from the Programmer and the Tester become main.pm and t/main.t, and pass."""
    config = Config(sandbox=configured(languages={"perl": PERL}))
    settings = team_settings(config)
    script = {"planner": ["1. Write add(x, y) in Perl.\n2. Test it.\nLANGUAGE: perl"],
              "programmer": [f"Here it is:\n\n```perl\n{CODE}```\n"], "optimizer": [APPROVE],
              "tester": [f"The tests:\n\n```perl\n{TESTS}```\n"], "checkin": [README]}
    async with DockerSandbox(config.sandbox, client=docker_client) as sandbox:
        model = ScriptedModel(script)
        manager = Manager(model, sandbox, RecordingPublisher(), PromptBook(languages=settings.languages), settings)
        events = [e async for e in manager.run(RunRequest(task="add two numbers in Perl", run_id="p1"))]
    final = events[-1]
    assert isinstance(final, RunFinished) and final.status is RunStatus.PASSED, final.reason
    assert list(final.files) == ["main.pm"] and list(final.tests) == ["t/main.t"]
    reported = [e.report for e in events if isinstance(e, TestReported)]
    assert [(r.passed, r.failed) for r in reported] == [(2, 0)] and reported[0].status is TestStatus.PASSED
    tester = next(messages for role, messages in model.calls if role == "tester")
    assert "In perl, its tests are files named t/*.t: name the test files that way." in tester[0].content
    assert "```perl path=main.pm" in next(messages for role, messages in model.calls if role == "optimizer")[1].content
