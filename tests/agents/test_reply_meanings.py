"""What a reply meant, where its form would lose the right code: a file-name line inside the block, the stub
repeated above the answer, a lone function for a bigger file, several copies of one file, a file that does
not parse."""

import pytest

from agents.replies import FileContext, ReplyFormatError, parse_files

STUB = 'from typing import List\n\n\ndef total(xs: List[int]) -> int:\n    """The sum of xs."""\n'
ANSWER = "def total(xs: List[int]) -> int:\n    return sum(xs)\n"


def read(reply, code=None, tests=False):
    return parse_files(reply, FileContext(language="python", code=code or {}, writes_tests=tests,
                                          mentioned="Complete total in calc.py."))


@pytest.mark.parametrize("line", [
    "path=calc.py", "file: calc.py", "filename=calc.py", "File name: calc.py", "python path=calc.py", "# calc.py",
    "# file: calc.py", "## filename: calc.py", "// calc.py", "-- calc.py", "; calc.py", "/* calc.py */",
    "<!-- calc.py -->", "(* calc.py *)", "% calc.py", "calc.py",
])
def test_a_line_naming_the_file_inside_the_block_is_its_name_not_its_code(line):
    reply = f"```python\n{line}\nimport math\n\n\ndef total(xs):\n    return sum(xs)\n```\n"
    files = read(reply, {"calc.py": "def total(xs):\n    pass\n"})
    assert files.files["calc.py"].startswith("import math\n")
    assert any("named its file" in notice for notice in files.notices)


@pytest.mark.parametrize("first, second", [("# file: calc.py", "# file: util.py"), ("// calc.py", "// util.py"),
                                           ("# calc.py", "# File name: util.py")])
def test_one_block_holding_two_named_files_is_two_files(first, second):
    reply = f"```python\n{first}\ndef total(xs):\n    return sum(xs)\n\n\n{second}\nX = 1\n```\n"
    files = read(reply, {"calc.py": "def total(xs):\n    pass\n"})
    assert dict(files.files) == {"calc.py": "def total(xs):\n    return sum(xs)\n", "util.py": "X = 1\n"}


def test_a_comment_naming_a_file_inside_a_block_that_named_none_stays_code():
    body = "def total(xs):\n    return sum(xs)\n# util.py\nX = 1\n"
    assert read(f"```python path=calc.py\n{body}```\n").files["calc.py"] == body


@pytest.mark.parametrize("line", ['path = "data.py"', "# notes.txt", "print(calc.py)", "x = 1"])
def test_a_first_line_that_is_code_stays_code(line):
    files = read(f"```python path=calc.py\n{line}\n\n\ndef total(xs):\n    return sum(xs)\n```\n")
    assert files.files["calc.py"].startswith(line)


def test_a_stub_repeated_above_the_answer_gives_way_to_the_answer():
    reply = f"```python path=calc.py\n{STUB}\n\n{ANSWER}```\n"
    files = read(reply, {"calc.py": STUB})
    assert files.files["calc.py"].count("def total") == 1 and "return sum(xs)" in files.files["calc.py"]
    assert any("repeated the stub of total" in notice for notice in files.notices)


def test_the_stub_echoed_in_its_own_block_is_not_taken_for_the_answer():
    reply = f"Here is the file:\n```python\n{STUB}```\nand the function:\n```python\n{ANSWER}```\n"
    files = read(reply, {"calc.py": STUB})
    assert "return sum(xs)" in files.files["calc.py"] and "from typing import List" in files.files["calc.py"]


def test_a_lone_function_is_put_in_its_place_and_the_rest_of_the_file_kept():
    current = STUB + "\n\ndef mean(xs: List[int]) -> float:\n    return total(xs) / len(xs)\n"
    files = read(f"```python path=calc.py\n{ANSWER}```\n", {"calc.py": current})
    code = files.files["calc.py"]
    assert code.startswith("from typing import List") and "return sum(xs)" in code and "def mean" in code
    assert code.index("def total") < code.index("def mean") and '"""The sum of xs."""' not in code
    assert any("held only total" in notice and "(its imports, mean) was kept" in notice for notice in files.notices)


def test_a_file_of_its_own_replaces_the_file_even_when_it_drops_a_function():
    whole = "from typing import List\n\n\n" + ANSWER + "\n\ndef double(xs: List[int]) -> int:\n    return 2 * total(xs)\n"
    files = read(f"```python path=calc.py\n{whole}```\n", {"calc.py": STUB + "\n\ndef unused():\n    pass\n"})
    assert files.files["calc.py"] == whole
    assert files.notices == ("calc.py was taken as the whole file; it no longer defines unused.",)


def test_of_several_copies_of_one_file_the_last_whole_one_wins():
    first = "def test_a():\n    assert total([1]) == 1\n"
    last = "from calc import total\n\n\ndef test_b():\n    assert total([1, 2]) == 3\n"
    broken = "def test_c(:\n"
    reply = "".join(f"```python path=test_calc.py\n{body}```\n" for body in (first, last, broken))
    files = read(reply, {"calc.py": STUB}, tests=True)
    assert files.files["test_calc.py"] == last
    assert any("written 3 times" in notice and "last whole copy" in notice for notice in files.notices)


def test_a_file_that_does_not_parse_is_never_taken_for_the_current_file():
    reply = "```python path=calc.py\ndef total(xs):\n    return sum(xs\n```\n```python path=util.py\nX = 1\n```\n"
    files = read(reply, {"calc.py": STUB})
    assert set(files.files) == {"util.py"}
    assert any("calc.py is not valid Python" in n and "stays as it was" in n for n in files.notices)
    with pytest.raises(ReplyFormatError, match="calc.py is not valid Python"):
        read("```python path=calc.py\ndef total(xs):\n    return sum(xs\n```\n", {"calc.py": STUB})


def test_example_calls_after_the_code_run_only_when_the_file_is_a_script():
    examples = "# Example usage:\nprint(total([1, 2]))  # 3\nassert total([]) == 0\n"
    reply = f"```python path=calc.py\n{STUB}    return sum(xs)\n\n{examples}```\n"
    files = read(reply, {"calc.py": STUB})
    code = files.files["calc.py"]
    assert code.endswith('if __name__ == "__main__":\n    # Example usage:\n    print(total([1, 2]))  # 3\n'
                         "    assert total([]) == 0\n")
    assert any("2 example call(s)" in notice for notice in files.notices)


def test_a_script_that_does_its_work_at_the_end_keeps_it_when_it_is_more_than_calls():
    script = "import sys\n\n\ndef main():\n    return 0\n\n\ncode = main()\nsys.exit(code)\n"
    assert read(f"```python path=tool.py\n{script}```\n").files["tool.py"] == script


def test_a_changed_file_that_comes_back_unchanged_is_kept_and_said():
    done = "def total(xs):\n    return sum(xs)\n"
    files = read(f"```python path=calc.py\n{done}```\n", {"calc.py": done})
    assert files.files["calc.py"] == done and any("came back unchanged" in n for n in files.notices)


@pytest.mark.parametrize("reply", [
    "Steps:\n\n1. Complete `calc.py`:\n\n   ```python\n   def total(xs):\n       return sum(xs)\n   ```\n\n2. Run it.\n",
    "- calc.py:\n  ```python\n  def total(xs):\n      return sum(xs)\n  ```\n",
    "\t```python\n\tdef total(xs):\n\t    return sum(xs)\n\t```\n",
])
def test_a_block_indented_inside_a_list_is_read_without_the_lists_indentation(reply):
    files = read(reply, {"calc.py": "def total(xs):\n    pass\n"})
    assert files.files["calc.py"] == "def total(xs):\n    return sum(xs)\n"


USAGE = "from calc import total\n\nprint(total([1, 2, 3]))  # 6\nprint(total([]))  # 0\nprint(total([-1, 1]))  # 0\n"
CALLS = "print(total([1, 2, 3]))  # 6\nprint(total([]))  # 0\nprint(total([-1, 1]))  # 0\nprint(total([5]))  # 5\n"


@pytest.mark.parametrize("code", [None, {"calc.py": "def total(xs):\n    return 0\n"}])
@pytest.mark.parametrize("usage", [USAGE, CALLS])
def test_the_answer_is_saved_not_the_longer_block_that_shows_how_to_use_it(code, usage):
    reply = f"Here is the function:\n```python\n{ANSWER}```\nYou can use it like this:\n```python\n{usage}```\n"
    files = read(reply, code)
    assert files.files["calc.py"].startswith("def total(") and "return sum(xs)" in files.files["calc.py"]
    assert "print(" not in files.files["calc.py"]


def test_a_block_that_imports_the_module_it_would_be_saved_as_is_never_saved_as_that_module():
    current = {"calc.py": "def total(xs):\n    return sum(xs)\n"}
    with pytest.raises(ReplyFormatError, match="imports calc itself") as error:
        read(f"```python\n{USAGE}```\n", current)
    assert "from calc import" not in error.value.example  # not shown to the model as the form of the file
    named = read(f"```python path=calc.py\n{ANSWER}```\n```python path=calc.py\n{USAGE}```\n", current)
    assert named.files["calc.py"] == ANSWER and any("imports calc itself" in n for n in named.notices)


ADD = "def add(a, b):\n    return a + b\n"
MUL = "def mul(a, b):\n    return a * b\n"


@pytest.mark.parametrize("reply", [f"Here's mul:\n```python\n{MUL}```\n", f"```python path=calc.py\n{MUL}```\n",
                                   f"```python\n{MUL}\n\nprint(mul(2, 3))\n```\n"])
def test_a_reply_of_only_new_functions_is_added_to_the_file_not_put_in_its_place(reply):
    files = parse_files(reply, FileContext(language="python", code={"calc.py": "import math\n\n\n" + ADD},
                                           mentioned="Now also add mul(a, b)."))
    code = files.files["calc.py"]
    assert code.startswith("import math\n\n\n" + ADD + "\n\n" + MUL)
    assert any("held only mul (mul added to the file)" in n and "(its imports, add) was kept" in n for n in files.notices)


def test_a_rewrite_that_leaves_out_a_function_the_tests_import_keeps_it():
    whole = "def add(a, b):\n    return b + a\n\n\ndef sub(a, b):\n    return a - b\n"
    current = {"calc.py": ADD + "\n\n" + MUL}
    tests = {"test_calc.py": "import calc\n\n\ndef test_mul():\n    assert calc.mul(2, 3) == 6\n"}
    files = parse_files(f"```python path=calc.py\n{whole}```\n", FileContext(language="python", code=current, tests=tests))
    code = files.files["calc.py"]
    assert "return b + a" in code and "def sub" in code and "def mul" in code
    untested = parse_files(f"```python path=calc.py\n{whole}```\n", FileContext(language="python", code=current))
    assert untested.files["calc.py"] == whole
    assert "it no longer defines mul" in untested.notices[-1]
