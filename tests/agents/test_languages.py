"""The language table every layer reads: a language added to it (as config.toml adds one) is recognised,
named and described like a built-in one, and the built-in ones keep their own habits."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agents import file_names
from agents.language import BUILT_IN, Language
from agents.language.description import TestRun
from agents.prompts import PromptBook, file_block
from agents.replies import FileContext, parse_files
from agents.test_health import nothing_ran
from agents.types import Role, TestReport, TestStatus
from tests.agents.test_prompts import CONTEXTS

LUA = Language(name="lua", extensions=(".lua",), test_files=("*_spec.lua",),
               run=TestRun(image="lua:5", test_command="busted", report_format="tap"))
WITH_LUA = BUILT_IN.laid_over([LUA])
LUA_CODE = "local M = {}\nfunction M.add(a, b) return a + b end\nreturn M\n"


def test_an_added_languages_files_are_its_own_and_its_test_pattern_makes_tests():
    assert WITH_LUA.of_path("src/calc.lua") == "lua" and BUILT_IN.of_path("src/calc.lua") == ""
    assert WITH_LUA.detect(["calc.lua", "calc_spec.lua", "README.md"]) == "lua"
    assert WITH_LUA.looks_like_test("calc_spec.lua") and not WITH_LUA.looks_like_test("calc.lua")
    assert WITH_LUA.looks_like_test("spec_helper_spec.lua") and not WITH_LUA.looks_like_test("inspect.lua")
    assert WITH_LUA.named_in("Write a Lua module that adds numbers") == "lua"
    assert WITH_LUA.known("lua") and not BUILT_IN.known("lua")


def test_a_bare_code_block_of_an_added_language_is_named_by_its_extension_not_main_txt():
    reply = parse_files(f"Here it is:\n\n```lua\n{LUA_CODE}```\n", FileContext(language="lua", languages=WITH_LUA))
    assert list(reply.files) == ["main.lua"]
    named = Language(name="lua", extensions=(".lua",), usual_file="init.lua")
    reply = parse_files(f"```lua\n{LUA_CODE}```\n", FileContext(languages=BUILT_IN.laid_over([named])))
    assert list(reply.files) == ["init.lua"]


def test_a_testers_bare_block_of_an_added_language_is_named_by_its_first_test_pattern():
    context = FileContext(language="lua", code={"calc.lua": LUA_CODE}, writes_tests=True, languages=WITH_LUA)
    reply = parse_files("```lua\nlocal calc = require('calc')\nassert(calc.add(2, 3) == 5)\n```\n", context)
    assert list(reply.files) == ["calc_spec.lua"]


def test_a_file_an_added_language_writes_is_shown_to_the_model_in_its_language():
    assert file_block("calc.lua", LUA_CODE, WITH_LUA).startswith("```lua path=calc.lua\n")
    context = replace(CONTEXTS[Role.PROGRAMMER], files={"calc.lua": LUA_CODE}, language="lua")
    _, user = PromptBook(languages=WITH_LUA).render(context)
    assert "```lua path=calc.lua\n" in user.content


def test_a_tester_whose_tests_did_not_run_is_told_the_added_languages_pattern():
    report = TestReport(TestStatus.FAILED, 1, 0.1, 0, 0, "1..0\n")
    assert nothing_ran(report, "lua", WITH_LUA).startswith("no test ran (its tests are files named *_spec.lua)")


def test_changing_a_built_in_keeps_what_the_change_leaves_empty():
    python = BUILT_IN.laid_over([Language(name="python", run=TestRun(image="python:3.13", test_command="pytest"))])
    described = python.get("python")
    assert described is not None and described.run is not None
    assert described.run.image == "python:3.13" and described.extensions == (".py",)
    assert file_names.default_code_name("", "python", python) == "main.py"
    assert python.detect(["app.py"]) == "python"


@pytest.mark.parametrize(("language", "code", "module", "test"), [
    ("python", "def add(a, b):\n    return a + b\n", "calc.py", "test_calc.py"),
    ("go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n", "pkg/calc.go", "pkg/calc_test.go"),
    ("javascript", "function add(a, b) { return a + b }\n", "lib/calc.js", "lib/calc.test.js"),
    ("typescript", "export function add(a: number, b: number) { return a + b }\n", "calc.ts", "calc.test.ts"),
    ("rust", "pub fn add(a: i32, b: i32) -> i32 { a + b }\n", "src/lib.rs", "tests/integration.rs"),
    ("java", "public class Calc { static int add(int a, int b) { return a + b; } }\n", "Calc.java", "CalcTest.java"),
    ("c", "int add(int a, int b) { return a + b; }\n", "calc.c", "test_calc.c"),
    ("cpp", "int add(int a, int b) { return a + b; }\n", "calc.cpp", "test_calc.cpp"),
    ("bash", "add() { echo $(($1 + $2)); }\n", "calc.sh", "test_calc.sh"),
])
def test_built_in_languages_name_code_and_tests_as_their_runners_expect(language, code, module, test):
    assert file_names.test_name("", language, module, [], (), WITH_LUA) == test
    usual = {"python": "main.py", "go": "calc.go", "javascript": "index.js", "typescript": "index.ts",
             "rust": "src/lib.rs", "java": "Calc.java", "c": "solution.c", "cpp": "solution.cpp", "bash": "main.sh"}
    assert file_names.default_code_name(code, language, WITH_LUA) == usual[language]


def test_every_built_in_language_is_described_whole():
    for language in BUILT_IN:
        assert language.extensions and language.test_files and language.tests_are_found(), language.name
        assert language.run is not None and language.run.test_command and language.run.image, language.name
