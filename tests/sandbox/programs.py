"""A small program with three tests (add, sub, mul) in every default language, and how to break it.

Each entry: the files, the bug (path, correct text, buggy text) that breaks ``sub``, and the failing
test's name as the runner prints it.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.types import FileSet


@dataclass(frozen=True)
class Program:
    files: dict[str, str]
    bug: tuple[str, str, str]
    failing_test: str

    def correct(self) -> FileSet:
        return FileSet(self.files)

    def buggy(self) -> FileSet:
        path, good, bad = self.bug
        assert good in self.files[path]
        return FileSet({**self.files, path: self.files[path].replace(good, bad)})


PYTHON = Program({
    "calc.py": "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n\ndef mul(a, b):\n"
               "    return a * b\n",
    "test_calc.py": "from calc import add, sub, mul\n\ndef test_add():\n    assert add(2, 3) == 5\n\n"
                    "def test_sub():\n    assert sub(5, 3) == 2\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
}, ("calc.py", "return a - b", "return a + b"), "test_sub")

JAVASCRIPT = Program({
    "calc.js": "exports.add = (a, b) => a + b;\nexports.sub = (a, b) => a - b;\nexports.mul = (a, b) => a * b;\n",
    "calc.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n"
                    "const { add, sub, mul } = require('./calc');\n"
                    "test('test_add', () => assert.strictEqual(add(2, 3), 5));\n"
                    "test('test_sub', () => assert.strictEqual(sub(5, 3), 2));\n"
                    "test('test_mul', () => assert.strictEqual(mul(2, 3), 6));\n",
}, ("calc.js", "a - b", "a + b"), "test_sub")

TYPESCRIPT = Program({
    "calc.ts": "export function add(a: number, b: number): number { return a + b; }\n"
               "export function sub(a: number, b: number): number { return a - b; }\n"
               "export function mul(a: number, b: number): number { return a * b; }\n",
    "calc.test.ts": "import { test } from 'node:test';\nimport * as assert from 'node:assert';\n"
                    "import { add, sub, mul } from './calc';\n"
                    "test('test_add', () => assert.strictEqual(add(2, 3), 5));\n"
                    "test('test_sub', () => assert.strictEqual(sub(5, 3), 2));\n"
                    "test('test_mul', () => assert.strictEqual(mul(2, 3), 6));\n",
}, ("calc.ts", "a - b", "a + b"), "test_sub")

GO = Program({
    "go.mod": "module calc\n\ngo 1.19\n",
    "calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\nfunc Sub(a, b int) int { return a - b }\n"
               "func Mul(a, b int) int { return a * b }\n",
    "calc_test.go": "package calc\n\nimport \"testing\"\n\n"
                    "func TestAdd(t *testing.T) { if Add(2, 3) != 5 { t.Fatal(\"add\") } }\n"
                    "func TestSub(t *testing.T) { if Sub(5, 3) != 2 { t.Fatal(\"sub\") } }\n"
                    "func TestMul(t *testing.T) { if Mul(2, 3) != 6 { t.Fatal(\"mul\") } }\n",
}, ("calc.go", "return a - b", "return a + b"), "TestSub")

RUST = Program({
    "Cargo.toml": "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    "src/lib.rs": "pub fn add(a: i64, b: i64) -> i64 { a + b }\npub fn sub(a: i64, b: i64) -> i64 { a - b }\n"
                  "pub fn mul(a: i64, b: i64) -> i64 { a * b }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n"
                  "    #[test]\n    fn test_add() { assert_eq!(add(2, 3), 5); }\n"
                  "    #[test]\n    fn test_sub() { assert_eq!(sub(5, 3), 2); }\n"
                  "    #[test]\n    fn test_mul() { assert_eq!(mul(2, 3), 6); }\n}\n",
}, ("src/lib.rs", "{ a - b }", "{ a + b }"), "test_sub")

JAVA = Program({
    "Calc.java": "public class Calc {\n    static int add(int a, int b) { return a + b; }\n"
                 "    static int sub(int a, int b) { return a - b; }\n"
                 "    static int mul(int a, int b) { return a * b; }\n}\n",
    "CalcTest.java": "import org.junit.Test;\nimport static org.junit.Assert.assertEquals;\n\n"
                     "public class CalcTest {\n    @Test public void testAdd() { assertEquals(5, Calc.add(2, 3)); }\n"
                     "    @Test public void testSub() { assertEquals(2, Calc.sub(5, 3)); }\n"
                     "    @Test public void testMul() { assertEquals(6, Calc.mul(2, 3)); }\n}\n",
}, ("Calc.java", "return a - b", "return a + b"), "testSub")

_C_TAP = (
    "static int n = 0, bad = 0;\n"
    "static void check(int ok, const char *name) {\n    n++;\n    if (!ok) bad = 1;\n"
    "    printf(\"%s %d - %s\\n\", ok ? \"ok\" : \"not ok\", n, name);\n}\n"
)
C = Program({
    "calc.h": "int add(int a, int b);\nint sub(int a, int b);\nint mul(int a, int b);\n",
    "calc.c": "#include \"calc.h\"\nint add(int a, int b) { return a + b; }\nint sub(int a, int b) { return a - b; }\n"
              "int mul(int a, int b) { return a * b; }\n",
    "calc_test.c": "#include <stdio.h>\n#include \"calc.h\"\n" + _C_TAP
                   + "int main(void) {\n    check(add(2, 3) == 5, \"test_add\");\n"
                   "    check(sub(5, 3) == 2, \"test_sub\");\n    check(mul(2, 3) == 6, \"test_mul\");\n"
                   "    printf(\"1..%d\\n\", n);\n    return bad;\n}\n",
}, ("calc.c", "return a - b", "return a + b"), "test_sub")

CPP = Program({
    "calc.hpp": "int add(int a, int b);\nint sub(int a, int b);\nint mul(int a, int b);\n",
    "calc.cpp": "#include \"calc.hpp\"\nint add(int a, int b) { return a + b; }\n"
                "int sub(int a, int b) { return a - b; }\nint mul(int a, int b) { return a * b; }\n",
    "calc_test.cpp": "#include <cstdio>\n#include \"calc.hpp\"\n" + _C_TAP
                     + "int main() {\n    check(add(2, 3) == 5, \"test_add\");\n"
                     "    check(sub(5, 3) == 2, \"test_sub\");\n    check(mul(2, 3) == 6, \"test_mul\");\n"
                     "    std::printf(\"1..%d\\n\", n);\n    return bad;\n}\n",
}, ("calc.cpp", "return a - b", "return a + b"), "test_sub")

BASH = Program({
    "calc.sh": "add() { echo $(( $1 + $2 )); }\nsub() { echo $(( $1 - $2 )); }\nmul() { echo $(( $1 * $2 )); }\n",
    "test_add.sh": "set -e\n. ./calc.sh\n[ \"$(add 2 3)\" = 5 ]\n",
    "test_sub.sh": "set -e\n. ./calc.sh\n[ \"$(sub 5 3)\" = 2 ]\n",
    "test_mul.sh": "set -e\n. ./calc.sh\n[ \"$(mul 2 3)\" = 6 ]\n",
}, ("calc.sh", "$1 - $2", "$1 + $2"), "test_sub.sh")

PROGRAMS = {"python": PYTHON, "javascript": JAVASCRIPT, "typescript": TYPESCRIPT, "go": GO, "rust": RUST,
            "java": JAVA, "c": C, "cpp": CPP, "bash": BASH}
