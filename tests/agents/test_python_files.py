"""Python files read with the parser: an outline of a module for a reader of its interface."""

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
