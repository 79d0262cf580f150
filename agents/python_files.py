"""What a Python file in a reply means, read with the parser rather than guessed from its text.

A small model answers in ways that keep the right code in a shape that would break the file:

- the prompt's stub repeated above the answer (the docstring-only ``def`` first, the whole one after):
  ``without_repeated_stubs`` keeps the whole one;
- only the function that was asked for, where the file holds more (imports, helpers, other functions), or only
  the functions to add (a follow-up's ``mul`` for a file holding ``add``): ``merged_into`` puts each in its place
  in the file, or after the file's own, and keeps the rest; and a rewrite that leaves out a function the tests
  import keeps that function (``imported_from`` tells which);
- example calls after the code (``print(f(3))  # Output: 5``), which run, and may fail, whenever the module is
  imported: ``examples_as_main`` has them run only when the file is run as a script;
- the test output it was shown, pasted after the code: ``without_trailing_text`` keeps the code above it;
- a file that does not parse: ``syntax_problem`` says where, so it is never taken as the current file.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Collection
from dataclasses import dataclass, field

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_IMPORTS = (ast.Import, ast.ImportFrom)


KEPT_TREE_CHARS = 64 * 1024  # a module up to this size keeps its tree (a few MB at most) for the next reader


def parsed(code: str) -> ast.Module:
    """``code``'s syntax tree (``SyntaxError`` or ``ValueError`` when it is no module). A reply's module is read by
    several functions in turn, so the trees of the last few modules of ordinary size are kept; callers only read
    them, never change them."""
    return _kept_tree(code) if len(code) <= KEPT_TREE_CHARS else ast.parse(code)


_kept_tree = functools.lru_cache(maxsize=16)(ast.parse)


def syntax_problem(code: str) -> str:
    """Why ``code`` is no Python module ("" when it parses): the parser's message and line."""
    try:
        parsed(code)
    except SyntaxError as error:
        return f"{error.msg} (line {error.lineno})"
    except ValueError as error:  # a NUL byte, say
        return str(error)
    return ""


_DEFINITION = re.compile(r"(?:async\s+def|def|class)\s")


def without_trailing_text(code: str) -> tuple[str, str]:
    """A module followed by what is not Python (the test output it was shown, a transcript pasted after it): the
    module, and the first line of what was left out. Only a tail that starts at a top-level line and defines
    nothing is left out, and only when the module before it parses; else ``code`` as it is, and ""."""
    try:
        parsed(code)
        return code, ""
    except SyntaxError as error:
        broken = (error.lineno or 1) - 1
    except ValueError:
        return code, ""
    lines = code.splitlines(keepends=True)
    for start in range(min(broken, len(lines) - 1), 0, -1):
        line = lines[start]
        if not line.strip() or line[0] in " \t#":
            continue
        tail = lines[start:]
        if any(_DEFINITION.match(text) for text in tail):
            return code, ""  # a definition after the cut: not a tail of output, leave it to the syntax check
        head = "".join(lines[:start])
        if head.strip() and not syntax_problem(head):
            return head.rstrip("\n") + "\n", line.strip()
    return code, ""


def defined(code: str) -> set[str]:
    """The names of the top-level functions and classes of ``code`` (none when it does not parse)."""
    try:
        tree = parsed(code)
    except (SyntaxError, ValueError):
        return set()
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}


def imports_module(code: str, modules: set[str]) -> bool:
    """Whether ``code`` imports one of ``modules`` (dotted names; ``from .name import`` counts for the last part)."""
    try:
        tree = parsed(code)
    except (SyntaxError, ValueError):
        return False
    last = {module.rpartition(".")[2] for module in modules}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(alias.name in modules for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module and (
                node.module in modules if not node.level else node.module in last):
            return True
    return False


def stubs(code: str) -> list[str]:
    """The top-level functions of ``code`` that are only a signature and a docstring (or ``pass``, ``...``)."""
    try:
        tree = parsed(code)
    except (SyntaxError, ValueError):
        return []
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    return [node.name for node in tree.body if isinstance(node, functions) and _is_stub(node)]


def without_repeated_stubs(code: str) -> tuple[str, list[str]]:
    """``code`` without a function or class defined again further down whose first definition is only a stub
    (a docstring, ``pass`` or ``...``), and the names whose stubs were dropped."""
    try:
        tree = parsed(code)
    except (SyntaxError, ValueError):
        return code, []
    last = {node.name: node for node in tree.body if isinstance(node, _DEFINITIONS)}
    stubs = [node for node in tree.body
             if isinstance(node, _DEFINITIONS) and last[node.name] is not node and _is_stub(node)]
    if not stubs:
        return code, []
    lines = code.splitlines(keepends=True)
    for node in reversed(stubs):
        del lines[_first_line(node) - 1:node.end_lineno]
    return "".join(lines).lstrip("\n"), [node.name for node in stubs]


def examples_as_main(code: str) -> tuple[str, int]:
    """``code`` with the calls and asserts that follow its last definition moved under
    ``if __name__ == "__main__":`` (a script run as before; an import runs none), and how many were moved."""
    try:
        tree = parsed(code)
    except (SyntaxError, ValueError):
        return code, 0
    last_definition = max((i for i, n in enumerate(tree.body) if isinstance(n, _DEFINITIONS)), default=None)
    if last_definition is None:
        return code, 0
    trailing = tree.body[last_definition + 1:]
    if not trailing or not all(_is_example(node) for node in trailing):
        return code, 0
    lines = code.splitlines(keepends=True)
    start = tree.body[last_definition].end_lineno or 0  # the comments above the calls go with them
    moved = "".join("    " + line if line.strip() else line for line in lines[start:]).lstrip("\n")
    guarded = "".join(lines[:start]).rstrip("\n") + '\n\n\nif __name__ == "__main__":\n' + moved.rstrip("\n") + "\n"
    return (guarded, len(trailing)) if not syntax_problem(guarded) else (code, 0)


def _is_example(node: ast.stmt) -> bool:
    return isinstance(node, ast.Assert) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call))


@dataclass(frozen=True)
class Merged:
    code: str
    replaced: list[str]  # the definitions the reply gave again, put in place of the file's
    kept: list[str]  # what the file held that the reply left out
    added: list[str] = field(default_factory=list)  # the definitions new to the file, added after its own


def merged_into(current: str, reply: str, keep: Collection[str] = ()) -> Merged | None:
    """The file ``current`` with the definitions ``reply`` gives put in it, when ``reply`` is a part of the file
    rather than a file of its own: nothing but definitions (with their imports, say), where the file holds more (an
    import or a definition ``reply`` leaves out), and either one definition the file has (a fix of it), or only
    definitions the file lacks (an addition, as a follow-up asks), or one that would drop a name of ``keep`` (what
    the tests import from the file). None when ``reply`` is a file of its own (several definitions that keep some
    of the file's and drop others, or statements besides definitions), or either does not parse."""
    try:
        old, new = parsed(current), parsed(reply)
    except (SyntaxError, ValueError):
        return None
    if not all(isinstance(node, (*_DEFINITIONS, *_IMPORTS)) or _is_docstring(node) or _is_main(node)
               for node in new.body):
        return None
    new_by_key = {_key(node): node for node in new.body}
    old_keys = [_key(node) for node in old.body]
    replaced = [key for key in old_keys if key in new_by_key and key.startswith("def ")]
    left_out = [key for node, key in zip(old.body, old_keys, strict=True)
                if key not in new_by_key and isinstance(node, (*_DEFINITIONS, *_IMPORTS))]
    defined = [node for node in new.body if isinstance(node, _DEFINITIONS)]
    dropped = {key.removeprefix("def ") for key in left_out if key.startswith("def ")}
    part = (len(defined) == 1 and replaced) or (defined and not replaced) or dropped & set(keep)
    if not defined or not left_out or not part:
        return None
    reply_lines = reply.splitlines(keepends=True)
    chunks = _chunks(current, old.body)
    for index, key in enumerate(old_keys):
        if key in new_by_key and key.startswith("def "):
            chunks[index] = _source(reply_lines, new_by_key[key]) + "\n\n"
    added = [node for node in new.body if _key(node) not in old_keys and not _is_docstring(node) and not _is_main(node)]
    imports = "".join(_source(reply_lines, n) for n in added if isinstance(n, _IMPORTS))
    rest = "\n\n".join(_source(reply_lines, n) for n in added if not isinstance(n, _IMPORTS))
    main = chunks.pop() if old.body and _is_main(old.body[-1]) else ""  # new definitions go above the script part
    main = next((_source(reply_lines, n) for n in new.body if _is_main(n)), main)  # the reply's, when it has one
    code = imports + "".join(chunks).rstrip("\n") + "\n" + ("\n\n" + rest if rest else "")
    code += "\n\n" + main.lstrip("\n") if main else ""
    if syntax_problem(code):
        return None
    return Merged(code.rstrip("\n") + "\n", [k.removeprefix("def ") for k in replaced],
                  [k.removeprefix("def ") if k.startswith("def ") else "its imports" for k in left_out],
                  [n.name for n in added if isinstance(n, _DEFINITIONS)])


def imported_from(code: str, modules: Collection[str]) -> set[str]:
    """The names ``code`` takes from one of ``modules``: ``from calc import add`` gives ``add``, and ``import calc``
    (``as c``) then ``calc.mul`` gives ``mul``. None when it does not parse."""
    try:
        tree = parsed(code)
    except (SyntaxError, ValueError):
        return set()
    names, aliases = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in modules and not node.level:
            names |= {alias.name for alias in node.names if alias.name != "*"}
        elif isinstance(node, ast.Import):
            aliases |= {alias.asname or alias.name for alias in node.names if alias.name in modules}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            names.add(node.attr)
    return names


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _is_stub(node: ast.stmt) -> bool:
    body = getattr(node, "body", [])
    return all(isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
               for s in body)


def _key(node: ast.stmt) -> str:
    """What a top-level statement is, so the same one in two versions of a file is found: a definition by its
    name, anything else by its parsed form."""
    if isinstance(node, _DEFINITIONS):
        return f"def {node.name}"
    return ast.dump(node)


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _source(lines: list[str], node: ast.stmt) -> str:
    return "".join(lines[_first_line(node) - 1:node.end_lineno]).rstrip("\n") + "\n"


def _chunks(code: str, body: list[ast.stmt]) -> list[str]:
    """The file cut before each top-level statement (comments and blank lines go with the statement after)."""
    lines = code.splitlines(keepends=True)
    starts = [1 if index == 0 else _first_line(node) for index, node in enumerate(body)]
    ends = [*starts[1:], len(lines) + 1]
    return ["".join(lines[start - 1:end - 1]) for start, end in zip(starts, ends, strict=True)]


OUTLINED = "...  # body left out\n"  # in place of a body, at its indent
SHORT_STATEMENT = 5  # lines: a statement of the module kept whole in an outline (a constant, the ``__main__`` block)


def outline(code: str) -> str:
    """The module as a reader of its interface sees it: its docstring, imports, short statements and its
    ``__main__`` block whole, each function and class by its signature and docstring (a class's methods too), the
    bodies left out (a body on its signature's line stays). Code that does not parse comes back as it is."""
    try:
        tree = parsed(code)
    except (SyntaxError, ValueError):
        return code
    return _outlined(code.splitlines(keepends=True), tree.body, "")


def _outlined(lines: list[str], body: list[ast.stmt], indent: str) -> str:
    shown, done = [], 0  # ``done``: the last line shown (statements sharing a line are shown once)
    for node in body:
        if node.lineno <= done:
            continue
        whole = _source(lines, node)
        short = whole.count("\n") <= SHORT_STATEMENT
        if not isinstance(node, _DEFINITIONS):
            shown.append(whole if short or _is_main(node) else lines[node.lineno - 1].rstrip("\n") + " ...\n")
        elif _body_on_signature_line(lines, node):  # nothing to leave out
            shown.append("\n" + whole)
        else:
            first = node.body[0]
            docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
                first.value.value, str)
            head = "".join(lines[_first_line(node) - 1:first.lineno - 1]) + (_source(lines, first) if docstring else "")
            inner = indent + "    "
            if isinstance(node, ast.ClassDef):
                members = _outlined(lines, node.body[1 if docstring else 0:], inner)
                shown.append("\n" + head + (members or inner + "...\n"))
            else:
                shown.append("\n" + head + inner + OUTLINED)
        done = node.end_lineno or node.lineno
    return "".join(shown)


def _is_main(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":``, which says how the module is run."""
    test = getattr(node, "test", None)
    return (isinstance(node, ast.If) and isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
            and test.left.id == "__name__")


def _body_on_signature_line(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    """``def f(): return 1``, ``def g(a,\n      b): return a``: the body begins on the line that ends the signature."""
    line = lines[node.body[0].lineno - 1]
    return bool(line[:node.body[0].col_offset].strip())
