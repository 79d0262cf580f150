"""Python files read with the parser: an outline of a module for a reader of its interface."""

import ast

import pytest

from agents import python_files


def test_an_outline_keeps_signatures_docstrings_and_short_statements_and_leaves_bodies_out():
    code = ('"""Shapes."""\nimport math\n\nSIDES = 4\n\n\n@dataclass\nclass Square:\n    """A square."""\n\n'
            '    side: float\n\n    def area(self) -> float:\n        """Its area."""\n        return self.side ** 2\n\n\n'
            'def circle(r):\n    return math.pi * r * r\n\n\nif __name__ == "__main__":\n    print(circle(1))\n')
    shown = python_files.outline(code)
    for kept in ('"""Shapes."""', "import math", "SIDES = 4", "@dataclass\nclass Square:", '    """A square."""',
                 "    side: float", "    def area(self) -> float:", '        """Its area."""', "def circle(r):",
                 'if __name__ == "__main__":\n    print(circle(1))'):
        assert kept in shown, kept
    assert "self.side ** 2" not in shown and "math.pi" not in shown
    assert shown.count(python_files.OUTLINED.strip()) == 2
    assert python_files.outline("def broken(:\n    pass\n") == "def broken(:\n    pass\n"  # as it is


def test_an_outline_shows_one_line_definitions_whole_statements_sharing_a_line_once_and_the_main_block_whole():
    main = 'if __name__ == "__main__":\n' + "".join(f"    parser.add_argument('--flag{i}')\n" for i in range(8))
    code = ("def f(): return 1\nx = 1; y = 2\n\n\nclass C:\n    def m(self): return 1\n\n\n"
            "def g(a,\n      b): return a\n\n\n" + main)
    shown = python_files.outline(code)
    for kept in ("def f(): return 1", "    def m(self): return 1", "def g(a,\n      b): return a", main):
        assert kept in shown, kept
    assert shown.count("x = 1; y = 2") == 1


def test_a_module_is_parsed_once_for_all_its_readers_and_a_broken_one_fails_every_time():
    code = "def f():\n    return 1\n"
    tree = python_files.parsed(code)
    assert python_files.parsed(code) is tree and ast.dump(tree) == ast.dump(ast.parse(code))
    huge = "x = 1\n" * (python_files.KEPT_TREE_CHARS // 6 + 1)  # past the bound: parsed anew, kept by no one
    assert python_files.parsed(huge) is not python_files.parsed(huge)
    for _ in range(2):
        with pytest.raises(SyntaxError):
            python_files.parsed("def (:\n")
