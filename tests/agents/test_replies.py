"""Reply parsing: the documented formats, the common variants models produce, and malformed replies."""

import pytest

from agents.file_replies import FORMAT_EXAMPLE_CODE, FORMAT_EXAMPLE_PATH, FileContext
from agents.replies import (
    Action,
    ReplyFormatError,
    parse_files,
    parse_plan,
    parse_readme,
    parse_review,
    parse_triage,
    safe_path,
)


def test_files_named_in_the_info_string_in_any_language():
    reply = (
        "```python path=src/app.py\nprint(1)\n```\n"
        "```go main.go\npackage main\n```\n"
        "```rust title=\"src/lib.rs\"\npub fn a() {}\n```\n"
        "```js:index.js\nconsole.log(1)\n```\n"
    )
    files = parse_files(reply).files
    assert files.as_dict() == {
        "src/app.py": "print(1)\n", "main.go": "package main\n", "src/lib.rs": "pub fn a() {}\n",
        "index.js": "console.log(1)\n",
    }


@pytest.mark.parametrize("label", ["**src/app.py**", "### File: src/app.py", "`src/app.py`:", "File: `src/app.py`",
                                   "1. src/app.py", "- **src/app.py** (the entry point)"])
def test_files_named_by_a_label_line_above_the_fence(label):
    files = parse_files(f"Some words.\n\n{label}\n```python\nx = 1\n```\n").files
    assert files.as_dict() == {"src/app.py": "x = 1\n"}


def test_files_named_by_a_marker_first_line_drop_the_marker():
    files = parse_files("```c\n// file: src/main.c\nint main(void) { return 0; }\n```").files
    assert files.as_dict() == {"src/main.c": "int main(void) { return 0; }\n"}


def test_nested_fences_inside_a_longer_fence_stay_in_the_file():
    reply = "````markdown path=README.md\n# Title\n```bash\nmake\n```\n````"
    assert parse_files(reply).files["README.md"] == "# Title\n```bash\nmake\n```\n"


def test_unnamed_blocks_are_skipped_when_others_are_named():
    files = parse_files("```bash\npip install x\n```\n```python path=a.py\nx = 1\n```").files
    assert list(files) == ["a.py"]


@pytest.mark.parametrize("reply, reason", [
    ("I think you should write a function.", "no fenced code block"),
    ("", "no fenced code block"),
    ("```bash\npip install requests\n```\n```text\nok\n```", "no file names"),
    ("```python path=/etc/passwd\nx = 1\n```", "inside the project"),
])
def test_replies_without_a_usable_file_are_errors_with_a_reason(reply, reason):
    with pytest.raises(ReplyFormatError, match=reason):
        parse_files(reply)


def test_the_reminder_example_is_the_models_own_code_with_a_name():
    own = "def add(a, b):\n    return a + b\n"
    with pytest.raises(ReplyFormatError) as caught:
        parse_files(f"```python path=../add.py\n{own}```")
    assert caught.value.example == f"```python path=main.py\n{own}```"


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.py", "a/../../b.py", "C:\\x.py", ".."])
def test_paths_that_escape_the_project_are_refused(path):
    with pytest.raises(ReplyFormatError, match="inside the project"):
        safe_path(path)


def test_paths_are_normalised():
    assert safe_path("./src//pkg/../app.py") == "src/app.py"
    assert safe_path("src\\win\\path.py") == "src/win/path.py"


@pytest.mark.parametrize("reply, approved", [
    ("Fine.\nVERDICT: APPROVE", True),
    ("Fine.\n**Verdict:** approved", True),
    ("Fine.\nverdict - LGTM", True),
    ("Bug on line 3.\nVERDICT: CHANGES", False),
    ("Bug.\n**VERDICT: CHANGES_REQUESTED**", False),
    ("Bug.\nVerdict: request changes.", False),
    ("VERDICT: CHANGES\nOn reflection it is fine.\nVERDICT: APPROVE", True),
])
def test_review_verdict_variants(reply, approved):
    assert parse_review(reply).approved is approved


def test_review_notes_keep_the_text_without_the_verdict_line():
    review = parse_review("Handle empty lists.\nVERDICT: CHANGES")
    assert review.notes == "Handle empty lists."


@pytest.mark.parametrize("reply, approved", [
    ("Looks good to me!", True),
    ("LGTM, ship it.", True),
    ("There are no bugs here and nothing to fix.", True),
    ("This is a bug: empty lists crash it. It must check for them.", False),
    ("The loop is off-by-one and the function should handle None.", False),
    ("VERDICT: maybe. The code is wrong for negative numbers and must be fixed.", False),
    ("VERDICT: maybe", True),
    ("It defines a function.", True),
])
def test_a_review_without_a_verdict_line_is_read_from_its_words(reply, approved):
    review = parse_review(reply)
    assert review.approved is approved and review.notice


def test_a_second_review_read_as_changes_from_its_words_lets_the_tests_decide():
    words = "This is wrong and must be fixed."
    assert parse_review(words).approved is False
    assert parse_review(words, after_inferred_changes=True).approved is True
    assert parse_review("x is wrong.\nVERDICT: CHANGES", after_inferred_changes=True).approved is False  # a verdict stands


def test_a_review_asking_for_changes_without_naming_any_lets_the_tests_decide():
    review = parse_review("VERDICT: CHANGES")
    assert review.approved is True and "without naming any" in review.notice
    assert parse_review("Handle the empty list.\nVERDICT: CHANGES").approved is False


@pytest.mark.parametrize("reply, action", [
    ("x\nDECISION: fix_code", Action.FIX_CODE),
    ("x\n**Decision:** fix tests", Action.FIX_TESTS),
    ("x\nDECISION: re-plan", Action.REPLAN),
    ("x\ndecision = FIX_TESTS.", Action.FIX_TESTS),
])
def test_triage_decision_variants(reply, action):
    assert parse_triage(reply).action is action


@pytest.mark.parametrize("reply, action", [
    ("The tests are wrong, probably.", Action.FIX_TESTS),
    ("test_lists has a wrong expectation; the tester should change it.", Action.FIX_TESTS),
    ("The function returns None for empty input.", Action.FIX_CODE),
    ("DECISION: maybe", Action.FIX_CODE),
    ("", Action.FIX_CODE),
    ("This approach cannot work; we need a new plan.", Action.REPLAN),
])
def test_a_triage_without_a_decision_line_is_read_from_its_words(reply, action):
    triage = parse_triage(reply)
    assert triage.action is action and triage.notice


def test_plan_language_line_is_read_and_optional():
    assert parse_plan("Steps...\nLANGUAGE: Go")[1] == "Go"
    assert parse_plan("Steps only")[1] == ""
    with pytest.raises(ReplyFormatError):
        parse_plan("   ")


def test_readme_fenced_whole_is_unwrapped():
    assert parse_readme("```markdown\n# Tool\nUse it.\n```") == "# Tool\nUse it.\n"
    assert parse_readme("# Tool\n") == "# Tool\n"


def test_the_last_decision_line_decides():
    reply = "DECISION: fix_tests is not allowed here, since the tests are the user's.\nDECISION: fix_code"
    assert parse_triage(reply).action is Action.FIX_CODE


@pytest.mark.parametrize("path, is_test", [
    ("test_a.py", True), ("a_test.go", True), ("a.test.js", True), ("a.spec.ts", True), ("FooTest.java", True),
    ("tests/helpers.py", True), ("src/test/java/A.java", True),
    ("billing/tests.py", True), ("billing/money_tests.py", True), ("src/tests.rs", True), ("lib/money-test.js", True),
    ("src/__tests__/money.js", True), ("spec/models/user_spec.rb", True), ("spec/support/helpers.rb", True),
    ("latest_prices.py", False), ("contest_solver.py", False), ("Contest.java", False), ("attest.py", False),
    ("main.py", False), ("billing/contests.py", False), ("inspect.py", False), ("src/respecify.js", False),
])
def test_test_files_are_told_by_convention_not_by_substring(path, is_test):
    from agents.language import BUILT_IN

    assert BUILT_IN.looks_like_test(path) is is_test


def test_only_a_tail_that_defines_nothing_is_cut_from_code_that_does_not_parse():
    from agents.python_files import without_trailing_text

    code = "def f(x):\n    return x + 1\n\ntest_f:\nE   AssertionError: assert 2 == 3\n"
    assert without_trailing_text(code) == ("def f(x):\n    return x + 1\n", "test_f:")
    broken_inside = "def f(x):\n    return (x + 1\n\ndef g():\n    return 2\n"  # cutting would drop f, or g
    assert without_trailing_text(broken_inside) == (broken_inside, "")
    definition_after = "def f(x):\n    return x\n\nOutput:\n\ndef g():\n    return 2\n"
    assert without_trailing_text(definition_after) == (definition_after, "")
    assert without_trailing_text("x = 1\n") == ("x = 1\n", "")


def test_a_block_named_as_a_new_file_is_the_current_file_only_when_its_functions_say_so():
    from agents.replies import FileContext
    context = FileContext(language="python", code={"solution.py": "def f():\n    pass\n", "other.py": "def g():\n    pass\n"})
    read = parse_files("```python\n# helpers.py\ndef h():\n    return 1\n```\n", context)  # no function of a file
    assert list(read.files) == ["helpers.py"]
    read = parse_files("```python\n# task.py\ndef f():\n    return 1\n```\n", context)
    assert list(read.files) == ["solution.py"] and "return 1" in read.files["solution.py"]
    both = FileContext(language="python", code={"a.py": "def f():\n    pass\n", "b.py": "def f():\n    pass\n"})
    assert list(parse_files("```python\n# task.py\ndef f():\n    return 1\n```\n", both).files) == ["task.py"]


def test_a_new_module_with_a_function_an_existing_file_already_has_stays_a_new_module():
    from agents.replies import FileContext

    context = FileContext(language="python", code={"app.py": "def main():\n    print('app')\n"})
    read = parse_files("```python\n# tools/cli.py\ndef main():\n    print('cli')\n```\n", context)
    assert list(read.files) == ["tools/cli.py"]


def test_the_instructions_format_example_written_back_is_not_saved_as_a_file_of_the_task():
    """Seen on Qwen2.5-Coder-0.5B: a Tester's reply held the format example of its instructions, under its path,
    beside the real test file; it was checked in as a test file of the task."""
    reply = ("```python path=test_main.py\nfrom main import f\n\ndef test_f():\n    assert f() == 1\n```\n"
             "```python path=src/example.py\ndef example():\n    return 42\n\ndef test_f():\n    assert f() == 1\n```\n")
    read = parse_files(reply, FileContext(language="python", code={"main.py": "def f():\n    return 1\n"}))
    assert read.files.as_dict() == {"test_main.py": "from main import f\n\ndef test_f():\n    assert f() == 1\n"}
    assert any("src/example.py, the instructions' example of the format" in note for note in read.notices)
    # where the task names that file, or the work has it, it is a file like any other
    named = FileContext(language="python", mentioned="Put a helper in src/example.py")
    assert "src/example.py" in parse_files(reply, named).files.as_dict()
    kept = FileContext(language="python", code={"src/example.py": "def example():\n    return 41\n"})
    assert "src/example.py" in parse_files(reply, kept).files.as_dict()


def test_the_format_example_the_instructions_show_is_the_one_replies_are_checked_against():
    from agents.prompt_contexts import ProgrammerPrompt
    from agents.prompts import PromptBook

    system = PromptBook().render(ProgrammerPrompt(task="T", language="python"))[0].content
    assert f"```python path={FORMAT_EXAMPLE_PATH}\n{FORMAT_EXAMPLE_CODE}\n```" in system
