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
