"""Reading the files out of a Programmer's or Tester's reply, by what the reply means.

The documented form is one fenced block per file with its path in the info string
(```` ```python path=src/app.py ````). Replies drift from it, and each drift still says which file a
block is:

- the name elsewhere: after the language (```` ```go main.go ````), on a label or heading line just
  above (``**calc.py**``, ``### src/app.py``, ``Here is `calc.py`:``), in a first-line comment
  (``# filename: calc.py``, ``// main.go``), or in a diff's ``+++ b/calc.py`` header;
- no name at all: the block is the file the context makes obvious (``agents.file_names``). Commands,
  program output and usage examples beside the code are not files: of several unnamed blocks, the one that
  defines something is the file, before a longer one that only imports, calls and prints; and a Python block
  that imports the module it would be saved as (``from parity import is_even`` as ``parity.py``) is never
  saved as that module;
- a diff instead of the file: applied to the current file (``agents.diffs``);
- prose around everything, or code with no fence at all (a Python reply that parses as a module).

Every path goes through ``agents.paths``. A refused path or one that clashes with another file
(``pkg`` beside ``pkg/mod.py``) drops that file only, with a notice; the reply fails only when no file
at all can be read from it, and then ``ReplyFormatError.example`` shows the model its own code in the
form the team reads.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from agents import file_names, python_files
from agents.diffs import DiffError, apply, as_diff
from agents.fences import Block, Fence, segments
from agents.language import BUILT_IN, Languages
from agents.language.code import defined_names
from agents.paths import UnsafePath, clash, project_path
from agents.types import FileSet

# The file the instructions show to explain the format (prompts/_shared.jinja): a small model sometimes writes
# it back, as the example or as a block of its own work under the example's path; it is no file of the task.
FORMAT_EXAMPLE_PATH = "src/example.py"
FORMAT_EXAMPLE_CODE = "def example():\n    return 42"


class ReplyFormatError(ValueError):
    """The reply cannot be read; the message says what is missing and ``example`` (when not empty) shows
    the model its own reply in the expected form."""

    def __init__(self, problem: str, example: str = "", notices: tuple[str, ...] = ()) -> None:
        super().__init__(problem)
        self.example = example
        self.notices = notices  # everything the reading noticed, of which ``problem`` is the last


@dataclass(frozen=True)
class FileContext:
    """What the team knows when it reads a reply of files, to tell which file an unnamed block is."""

    language: str = ""
    code: Mapping[str, str] = field(default_factory=dict)  # the current code files
    tests: Mapping[str, str] = field(default_factory=dict)  # the current tests (the team's and the user's)
    user_tests: tuple[str, ...] = ()  # never the name of a new file
    mentioned: str = ""  # the task and the plan: file names they mention count as named
    writes_tests: bool = False  # the Tester's reply: an unnamed block is a test file
    languages: Languages = BUILT_IN  # the languages the run knows (the config's too)


@dataclass(frozen=True)
class _Read:
    """One code block as read: the path it names ("" for none), its content, its language."""

    path: str
    body: str
    language: str
    problem: str = ""  # why it cannot be a file although it names one (a diff that does not apply)
    notice: str = ""  # how it was read, when it drifted from the documented form


@dataclass(frozen=True)
class FileReply:
    files: FileSet
    notices: tuple[str, ...] = ()  # what was read loosely or left out, for the user and the model


NON_SOURCE = frozenset({"text", "txt", "console", "output", "plaintext", "log", "shell-session", "sh-session",
                        "terminal", "stdout", "stderr", "sql-result", "markdown", "md"})
SHELLS = frozenset({"bash", "sh", "shell", "zsh", "cmd", "bat", "powershell", "ps1", "ps"})
_CONFIG_BY_CONTENT = (
    (re.compile(r"^module\s+\S+", re.M), "go.mod"),
    (re.compile(r"^\[package\]", re.M), "Cargo.toml"),
    (re.compile(r'^\s*\{[\s\S]*"(?:dependencies|devDependencies|scripts)"\s*:', re.M), "package.json"),
)
_PATH = r"[\w.\-/\\]+\.[\w]+|[\w.\-/]*(?:Makefile|Dockerfile|Cargo\.toml|go\.mod)"
_LABEL = re.compile(
    r"^\s*(?:#+\s*|[-*]\s*|\d+\.\s*)?(?:\*\*|__)?\s*(?:(?:file(?:name)?|path)\s*[:=]?\s*)?[`*\"']*(?P<path>" + _PATH
    + r")[`*\"']*\s*(?:\*\*|__)?\s*:?\s*(?:\(.*\))?\s*$",
    re.IGNORECASE,
)
_NAME_LINE = re.compile(  # a line naming a block's file: a comment, a ``path=`` or ``file:`` line, a bare name
    r"^\s*(?:(?P<comment>#+|//+|--|;+|%+|/\*+|<!--|\(\*)\s*|[\w+#-]+\s+(?=(?:file|path)))?"
    r"(?:(?P<keyword>file(?:[ _-]?name)?|path)\s*[:=]\s*)?[`\"']?(?P<path>" + _PATH
    + r")[`\"']?\s*(?:\*+/|-->|\*\))?\s*$", re.I)
_PROMPT_LINE = re.compile(r"^\s*(?:\$|>>>|PS>|C:\\>|%)\s")
EXAMPLE_LINES = 12
NOT_PYTHON = "is not valid Python"
ECHOED = "came back unchanged"
UNAPPLIED_DIFF = "was sent as a diff, and"


def diff_unapplied(said: str) -> bool:
    """Whether a notice or a reading error says a block was a diff that did not apply to the current file."""
    return UNAPPLIED_DIFF in said


def parse_files(text: str, context: FileContext | None = None) -> FileReply:
    """The files a reply holds, named as documented or as the context makes obvious."""
    context = context or FileContext()
    blocks = _blocks(text, context)
    if not blocks:
        usual = file_names.default_code_name("", context.language or "python", context.languages)
        raise ReplyFormatError("no fenced code block with a file was found", _example(context, usual, ""))
    named = [b for b in blocks if b.path]
    notices = list(dict.fromkeys(b.notice for b in named if b.notice))
    if not named:
        named = _obvious(blocks, context, notices)
    files = _accepted(named, context, notices)
    if not files and notices and (NOT_PYTHON in notices[-1] or ECHOED in notices[-1]):  # the form was right
        raise ReplyFormatError(notices[-1].removeprefix("Not saved: ").rstrip("."), notices=tuple(notices))
    if not files:
        problem = notices[-1].removeprefix("Not saved: ") if notices else "code blocks had no file names"
        language = context.language or next((b.language for b in blocks if b.language), "python")
        named_as = [(b.body, _obvious_name(b.body, language, context)) for b in blocks]
        body, name = max(named_as, key=lambda c: (not _imports_itself(c[1], c[0], language), len(c[0])))
        shown = "" if _imports_itself(name, body, language) else body  # never the usage example as the file
        raise ReplyFormatError(problem.rstrip("."), _example(context, name, shown), tuple(notices))
    return FileReply(FileSet(files), tuple(notices))


def without_open_block(text: str) -> str:
    """A reply cut short, without the code block the cut left open (that file is incomplete)."""
    parts = segments(text)
    if parts and isinstance(parts[-1], Block) and not parts[-1].closed:
        parts = parts[:-1]
    return "".join(p if isinstance(p, str) else p.source for p in parts)


# -- blocks and their names -----------------------------------------------------------------------


def _blocks(text: str, context: FileContext) -> list[_Read]:
    """Every code block, in order."""
    found: list[_Read] = []
    parts = segments(text)
    for index, part in enumerate(parts):
        if not isinstance(part, Block):
            continue
        prose = parts[index - 1] if index and isinstance(parts[index - 1], str) else ""
        first, *others = _one_per_file(part, context.languages)
        found.append(_named(first, str(prose), context))
        found.extend(_named(other, "", context) for other in others)
    if not found and context.language in ("", "python") and _is_bare_python(text):
        found.append(_Read("", text.strip("\n") + "\n", "python"))
    return found


def _named(block: Block, prose_above: str, context: FileContext) -> _Read:
    word = block.fence.language.lower()
    known = context.languages
    language = known.normalise(word) if word else ""
    if language not in known:
        language = language if word in NON_SOURCE | SHELLS | {"json", "yaml", "toml"} else ""
    body, notice = block.body, ""
    path = block.fence.path or _label(prose_above, known)
    named = _name_line(body, known)
    if named:
        line, named_path, body = named
        notice = f"The first line of a code block ({line.strip()}) named its file; it was read as the name, not as code."
        path = path or named_path
    diff = as_diff(word or language, body)
    if diff is not None:
        path = path or diff.path or _only_file(context)
        try:
            body = apply(diff, _current(context, path))
        except DiffError as error:
            return _Read(path, "", language, f"{path or 'a file'} {UNAPPLIED_DIFF} {error}")
    if not body.endswith("\n") and body:
        body += "\n"
    language = language or (known.of_path(path) if path else "") or context.language
    return _Read(path, body, language, notice=notice)


def _one_per_file(block: Block, known: Languages) -> list[Block]:
    """A block whose first line names its file, split where a later comment line names another file the same
    way (``# file: helpers.py``): one block holding two files is two files, not one file holding both."""
    lines = block.body.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.strip()), None)
    if start is None or not _names_with_a_comment(lines[start], known):
        return [block]
    cuts = [i for i in range(start + 1, len(lines)) if _names_with_a_comment(lines[i], known)]
    if not cuts:
        return [block]
    unnamed = Fence(block.fence.indent, block.fence.marker, block.fence.language)  # each names its own file
    bounds = [0, *cuts, len(lines)]
    bodies = ["".join(lines[a:b]) for a, b in itertools.pairwise(bounds)]
    bodies = [body.rstrip() + "\n" for body in bodies[:-1]] + bodies[-1:]  # the blank lines between them go
    return [replace(block, body=body, fence=block.fence if index == 0 else unnamed)
            for index, body in enumerate(bodies)]


def _names_with_a_comment(line: str, known: Languages) -> bool:
    """A comment line that names a file: ``# file: app.py``, ``// main.go``, ``-- schema.sql``."""
    match = _NAME_LINE.match(line.rstrip("\r\n"))
    return bool(match and match.group("comment") and (match.group("keyword") or known.of_path(match.group("path"))))


def _name_line(body: str, known: Languages) -> tuple[str, str, str] | None:
    """The block's first line when it names the block's file (``path=solution.py``, ``# file: app.py``,
    ``// main.go``, ``calc.py``), the path it names, and the body without it. A line naming no file of a known
    language without saying it is a name (``# notes.txt``), or a quoted name with no comment mark (a string
    literal, which is code), is left as it is."""
    first, _, rest = body.lstrip("\n").partition("\n")
    match = _NAME_LINE.match(first)
    if match is None:
        return None
    if not match.group("keyword") and not known.of_path(match.group("path")):
        return None
    if not match.group("comment") and ("'" in first or '"' in first):
        return None
    return first, match.group("path"), rest




def _only_file(context: FileContext) -> str:
    """The file a diff naming none changes, when the reply's writer has exactly one file of its kind; else ""."""
    mine = [p for p in context.tests if p not in context.user_tests] if context.writes_tests else list(context.code)
    return mine[0] if len(mine) == 1 else ""


def _current(context: FileContext, path: str) -> str | None:
    try:
        clean = project_path(path) if path else ""
    except UnsafePath:
        return None
    return {**context.code, **context.tests}.get(clean)


def _label(prose: str, languages: Languages) -> str:
    """A file name on one of the two non-blank lines just above a block: a label or heading line
    (``**src/app.py**``, ``### File: app.py``), or a sentence ending in a colon that names one file."""
    lines = [line for line in prose.rstrip("\n").split("\n") if line.strip()][-2:]
    for line in reversed(lines):
        match = _LABEL.match(line)
        if match:
            return match.group("path")
        mentioned = file_names.mentioned_files(line, languages)
        if line.rstrip().endswith(":") and len(mentioned) == 1:
            return mentioned[0]
    return ""


def _is_bare_python(text: str) -> bool:
    """Code with no fence at all: taken only when the whole reply is a Python module that defines something."""
    try:
        tree = python_files.parsed(text)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for node in tree.body)


# -- the obvious file for unnamed blocks ----------------------------------------------------------


def _obvious(blocks: list[_Read], context: FileContext, notices: list[str]) -> list[_Read]:
    """Names for a reply whose blocks name no file: the one block that is the file, named by the context."""
    config = [_Read(name, b.body, "") for b in blocks for pattern, name in _CONFIG_BY_CONTENT if pattern.search(b.body)]
    source = [(b.body, b.language) for b in blocks if _is_source(b.body, b.language, context)]
    if context.writes_tests:  # tests, else new code, else (a weak model's echo of the code) anything: the
        existing = {c.strip() for c in context.code.values()}  # test run then says no test ran, and why
        tests = [(b, lang) for b, lang in source if file_names.is_test_code(b, context.languages.get(lang))]
        candidates = tests or [(b, lang) for b, lang in source if b.strip() not in existing] or source
    else:  # the code, without a block that only repeats a current file (the stub it was asked to complete)
        code = [(b, lang) for b, lang in source if not file_names.is_test_code(b, context.languages.get(lang))]
        echoed = {_normal(c) for c in context.code.values()}
        candidates = [(b, lang) for b, lang in code if _normal(b) not in echoed] or code
    if not candidates:
        return config
    named = [(body, language or context.language) for body, language in candidates]
    named_as = [(body, language, _obvious_name(body, language, context)) for body, language in named]
    body, language, name = max(named_as, key=lambda c: _likely_the_file(c[0], c[1], c[2], context))
    notices.append(f"The code block had no file name; it was saved as {name}.")
    if len(candidates) > 1:
        notices.append(f"{len(candidates) - 1} other unnamed code block(s) were taken as examples and not saved.")
    return [_Read(name, body, language), *config]


def _likely_the_file(body: str, language: str, name: str, context: FileContext) -> tuple[bool, bool, int]:
    """How likely an unnamed block is the file rather than an example of using it: first a block that does not
    import the very module it would be saved as, then (for code) one that defines something (a function, a class,
    a type) over one that only imports, calls and prints, then the longer."""
    defines = context.writes_tests or bool(defined_names(body))
    return not _imports_itself(name, body, language), defines, len(body)


def _imports_itself(path: str, body: str, language: str) -> bool:
    """A Python block that imports the module it would be saved as (``from parity import is_even`` as
    ``parity.py``): code using the module, never the module."""
    if language != "python" or not path.endswith(".py") or path.endswith("__init__.py"):
        return False
    return python_files.imports_module(body, _module_names(path))


def _obvious_name(body: str, language: str, context: FileContext) -> str:
    mentioned = file_names.mentioned_files(context.mentioned, context.languages)
    if context.writes_tests:
        module = _module_under_test(context, language, mentioned)
        return file_names.test_name(body, language, module, mentioned, context.user_tests, context.languages)
    return file_names.code_name(body, language, context.code, mentioned, context.languages)


def _is_source(body: str, language: str, context: FileContext) -> bool:
    """Whether a block is code of the project (not a command, program output or a config snippet)."""
    if not body.strip() or language in NON_SOURCE or language in {"json", "yaml", "toml"}:
        return False
    if language in SHELLS and context.language != "bash":
        return False
    lines = [line for line in body.splitlines() if line.strip()]
    return not all(_PROMPT_LINE.match(line) for line in lines)


def _module_under_test(context: FileContext, language: str, mentioned: list[str]) -> str:
    """The code the tests are for: the code file the task or plan mentions, else the first one; before any code
    exists (the Programmer writes it while the Tester does), the code file the task or plan names."""
    known = context.languages
    code = [p for p in context.code if known.of_path(p) == language] or list(context.code)
    named = [m for m in mentioned if m in code]
    planned = [m for m in mentioned if known.of_path(m) == language and not known.looks_like_test(m)]
    return (named or code or planned or [""])[0]


# -- paths ----------------------------------------------------------------------------------------


def _accepted(named: list[_Read], context: FileContext, notices: list[str]) -> dict[str, str]:
    """The files whose paths may be written, each checked alone and against the others; of several copies of one
    file the last whole one."""
    copies: dict[str, list[_Read]] = {}
    named = _meant_files(named, context, notices)
    for read in named:
        if read.problem:
            notices.append(f"Not saved: {read.problem}.")
            continue
        if not read.body.strip():
            continue
        if not context.writes_tests and _imports_itself(read.path, read.body, read.language):
            module = read.path.removesuffix(".py").replace("/", ".")
            notices.append(f"Not saved: a block for {read.path} imports {module} itself: it shows how the module is "
                           f"used, it is not the module; send {read.path} whole.")
            continue
        if _copied_example(read, context):
            notices.append(f"Not saved: {read.path}, the instructions' example of the format, not a file of the task.")
            continue
        try:
            copies.setdefault(project_path(read.path), []).append(read)
        except UnsafePath as error:
            notices.append(f"Not saved: {error}.")
    files: dict[str, str] = {}
    existing = [*context.code, *context.tests]
    for path, reads in copies.items():
        why = clash([*existing, *files, path])
        if why:
            notices.append(f"Not saved: {path} ({why}).")
            continue
        python = context.languages.of_path(path) == "python"
        body: str | None = _last_whole(path, reads, notices, python)
        if body is not None and python:
            body = _python_file(path, body, context, notices)
        if body is not None:
            files[path] = body
    return files


def _copied_example(read: _Read, context: FileContext) -> bool:
    """The instructions' format example written back: its path, holding its function, where neither the work nor
    the task and plan have such a file."""
    return (read.path == FORMAT_EXAMPLE_PATH and _normal(FORMAT_EXAMPLE_CODE) in _normal(read.body)
            and read.path not in context.code and read.path not in context.tests
            and FORMAT_EXAMPLE_PATH not in context.mentioned)


def _meant_files(named: list[_Read], context: FileContext, notices: list[str]) -> list[_Read]:
    """Python blocks named as a file that does not exist (``# task.py``) but writing functions one current file
    holds still to be written (stubs), and no other file, are that file: the name was a guess, the functions say
    which file was meant. A name the task or plan gives, or one the reply also uses for that file, is taken as
    written; a function a file already has is no sign (a new module may well have its own ``main``)."""
    owners = {path: set(python_files.stubs(code)) for path, code in context.code.items()
              if context.languages.of_path(path) == "python"}
    written = {read.path for read in named}
    meant = []
    for read in named:
        new = read.path not in context.code and read.path not in context.tests and read.path not in context.mentioned
        if new and not context.writes_tests and read.language == "python" and not read.problem:
            names = python_files.defined(read.body)
            holders = [path for path, defined in owners.items() if names & defined]
            if len(holders) == 1 and holders[0] not in written:
                notices.append(f"A block named {read.path}, a file that does not exist, holds "
                               f"{', '.join(sorted(names & owners[holders[0]]))} of {holders[0]}: it was read as "
                               f"{holders[0]}.")
                read = _Read(holders[0], read.body, read.language, notice=read.notice)
        meant.append(read)
    return meant


def _last_whole(path: str, reads: list[_Read], notices: list[str], python: bool) -> str:
    """Of the copies of one file in a reply, the last one that is whole (for Python: that parses)."""
    if len(reads) == 1:
        return reads[0].body
    whole = [r for r in reads if not python or not python_files.syntax_problem(r.body)] or reads
    notices.append(f"{path} was written {len(reads)} times in the reply; the last whole copy was kept.")
    return whole[-1].body


def _python_file(path: str, body: str, context: FileContext, notices: list[str]) -> str | None:
    """A Python file as the reply meant it: a repeated stub dropped, a lone function merged into the file it
    belongs in; None (with the reason) when it does not parse, so a broken file never becomes the current one."""
    body, left_out = python_files.without_trailing_text(body)
    if left_out:
        notices.append(f"{path} ended with text that is not Python (from {left_out[:60]!r} on); the code above it was "
                       "kept, and the rest left out.")
    body, stubs = python_files.without_repeated_stubs(body)
    if stubs:
        notices.append(f"{path} repeated the stub of {', '.join(stubs)} above the answer; the answer was kept.")
    if not context.writes_tests:
        body, examples = python_files.examples_as_main(body)
        if examples:
            notices.append(f"{path} ended with {examples} example call(s); they now run only when it is run as a "
                           'script (under if __name__ == "__main__":), not when it is imported.')
    current = context.code.get(path)
    if current is not None and not context.writes_tests:
        body = _merged(path, current, body, context, notices)
    if current is not None and _normal(current) == _normal(body):
        todo = python_files.stubs(body)
        if todo and not context.writes_tests:  # the stub it was to complete, echoed: no answer at all
            notices.append(f"Not saved: {path} {ECHOED} ({', '.join(todo)} still only a signature and a docstring); "
                           "write the body.")
            return None
        notices.append(f"{path} came back unchanged: the reply made none of the changes asked for.")
    problem = python_files.syntax_problem(body)
    if problem:
        kept = "the file stays as it was" if path in context.code or path in context.tests else "it was not written"
        notices.append(f"Not saved: {path} {NOT_PYTHON} ({problem}); {kept}.")
        return None
    return body


def _merged(path: str, current: str, body: str, context: FileContext, notices: list[str]) -> str:
    """A code file as the reply meant it: the definitions of a reply that is part of the file put into it (a fix of
    one function, functions to add); else the reply as the whole file, saying which definitions it left out."""
    tested = set().union(*(python_files.imported_from(test, _module_names(path)) for test in context.tests.values()))
    merged = python_files.merged_into(current, body, tested)
    if merged is None:
        dropped = sorted(python_files.defined(current) - python_files.defined(body))
        if dropped and python_files.defined(body):
            notices.append(f"{path} was taken as the whole file; it no longer defines {', '.join(dropped)}.")
        return body
    done = ([f"{', '.join(merged.replaced)} put in place of the old version"] if merged.replaced else []) + (
        [f"{', '.join(merged.added)} added to the file"] if merged.added else [])
    notices.append(f"{path}: the reply held only {', '.join(merged.replaced + merged.added)} ({'; '.join(done)}); "
                   f"the rest of the file ({', '.join(merged.kept)}) was kept.")
    return merged.code


def _module_names(path: str) -> set[str]:
    """The names a Python file is imported by: ``src/pkg/mod.py`` as ``mod``, ``pkg.mod`` or ``src.pkg.mod``."""
    parts = path.removesuffix(".py").removesuffix("/__init__").split("/")
    return {".".join(parts[i:]) for i in range(len(parts))}


def _normal(code: str) -> str:
    """Code without its blank lines and indentation changes, to tell a repeated file from a changed one."""
    return "\n".join(line.strip() for line in code.splitlines() if line.strip())


def _example(context: FileContext, name: str, body: str) -> str:
    """The model's own code in the documented form, cut to a few lines, for a format reminder."""
    language = context.languages.of_path(name) or context.language or "python"
    lines = body.rstrip("\n").splitlines()
    shown = "\n".join(lines[:EXAMPLE_LINES]) if lines else "...the whole file..."
    more = "\n...the rest of the file..." if len(lines) > EXAMPLE_LINES else ""
    return f"```{language} path={name}\n{shown}{more}\n```"
