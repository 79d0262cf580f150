"""Reads TOML tables into frozen dataclasses, strictly: unknown keys, wrong types and values out of range
are errors that name the key.

Kept apart from the config's content so each section is nothing but a dataclass declaration. A field
states what it accepts where it is declared, with ``Annotated``::

    timeout_s: Annotated[float, Range(0, 3600, low_open=True)] = 120.0
    mode: Annotated[str, OneOf("socket", "http")] = "socket"

Every ``int`` or ``float`` field must carry a ``Range`` or ``OneOf`` (a section missing one fails when it is made),
so no number can be NaN, infinite, negative where that switches a limit off, or absurdly large.
Sections derive from ``Checked``: their constraints hold however an instance is made (``config.toml``,
``dataclasses.replace`` with a command-line value, a test). ``number_argument`` gives argparse the
same checks for a command-line number.
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import math
import re
import tomllib
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, TypeVar, get_args, get_origin
from urllib.parse import urlsplit

T = TypeVar("T")


class SettingsError(ValueError):
    """One bad value: ``key`` is its dotted path in the file."""

    def __init__(self, key: str, problem: str, fix: str = "") -> None:
        self.key, self.problem, self.fix = key, problem, fix
        super().__init__(f"{key}: {problem}" + (f" ({fix})" if fix else ""))

    def moved(self, old_prefix: str, new_prefix: str) -> SettingsError:
        """The same error for a table read at ``new_prefix`` rather than ``old_prefix``."""
        relative = self.key.removeprefix(old_prefix + ".") if old_prefix else self.key
        return SettingsError(_join(new_prefix, relative), self.problem, self.fix)


# -- constraints ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Range:
    """A finite number from ``low`` to ``high`` (both included, ``low`` excluded when ``low_open``)."""

    low: float
    high: float
    low_open: bool = False

    def problem(self, value: Any, section: object) -> str | None:
        if isinstance(value, bool):
            return "expected a number, got true/false"
        if not math.isfinite(value):
            return f"must be a finite number, got {value}"
        if value < self.low or (self.low_open and value == self.low) or value > self.high:
            return f"{self.describe()}, got {_shown_number(value)}"
        return None

    def describe(self) -> str:
        low, high = _shown_number(self.low), _shown_number(self.high)
        if self.low_open:
            return f"must be greater than {low} and at most {high}"
        return f"must be between {low} and {high}"


@dataclass(frozen=True)
class OneOf:
    """One of a fixed set of values; ``noun`` names what they are ("a role") for the message."""

    choices: tuple[Any, ...]
    noun: str = ""

    def __init__(self, *choices: Any, noun: str = "") -> None:
        object.__setattr__(self, "choices", choices)
        object.__setattr__(self, "noun", noun)

    def problem(self, value: Any, section: object) -> str | None:
        if value in self.choices:
            return None
        if self.noun:  # choosing a name (a role, say): the names as written in a table header
            return f"not {self.noun} (use one of: {', '.join(_shown_choice(c, False) for c in self.choices)})"
        return f"must be one of {', '.join(_shown_choice(c, True) for c in self.choices)}, got {value!r}"


@dataclass(frozen=True)
class StartsWith:
    """Text starting with one of ``prefixes`` (a URL's scheme, a path's slash); empty when ``optional``."""

    prefixes: tuple[str, ...]
    example: str
    optional: bool = False

    def problem(self, value: Any, section: object) -> str | None:
        if (self.optional and value == "") or value.startswith(self.prefixes):
            return None
        return f"must start with {' or '.join(self.prefixes)}, e.g. {self.example}" + (
            " (or be empty)" if self.optional else "")


@dataclass(frozen=True)
class HttpUrl:
    """An http(s) URL naming a host (``example`` shows one), or empty: anything else (``ftp://``, a word, a URL
    with no host) could never be reached, and is better refused at start than retried as if a server were down.
    The message never repeats the value, which may carry credentials."""

    example: str

    def problem(self, value: Any, section: object) -> str | None:
        problem = http_url_problem(value)
        return f"{problem}, e.g. {self.example} (or be empty)" if value and problem else None


def http_url_problem(url: str) -> str:
    """Why ``url`` is no http(s) URL with a host; empty when it is one."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018  (reading it checks the port is a number in range)
    except ValueError:
        return "must be an http:// or https:// URL with a host and, if any, a port from 0 to 65535"
    if parts.scheme.lower() not in ("http", "https"):
        return "must be an http:// or https:// URL"
    return "" if parts.hostname else "must name a host after http:// or https://"


@dataclass(frozen=True)
class NoCredentials:
    """A URL with no user name or password in it: a token there would be sent where git or PyGithub send the
    URL (a clone's config on disk, an error line); the token is given in the environment instead."""

    instead: str

    def problem(self, value: Any, section: object) -> str | None:
        try:
            parts = urlsplit(value)
            found = parts.username is not None or parts.password is not None
        except ValueError:
            return "is not a URL that can be read"
        return f"holds credentials (user:token@); remove them and export {self.instead} instead" if found else None


@dataclass(frozen=True)
class Matches:
    """Text that matches ``pattern`` whole; ``expected`` says what it should be, for the message."""

    pattern: str
    expected: str

    def problem(self, value: Any, section: object) -> str | None:
        return None if re.fullmatch(self.pattern, value) else f"must be {self.expected}, got {value!r}"


@dataclass(frozen=True)
class SetWith:
    """Set together with another key of the same table, or both left empty."""

    other: str

    def problem(self, value: Any, section: object) -> str | None:
        if bool(value) == bool(getattr(section, self.other)):
            return None
        return f"goes together with {self.other}: set both or neither"


@dataclass(frozen=True)
class IpAddresses:
    """Each item an IP address or a network of them (``10.0.0.0/8``, ``fd00::/8``): never a host name, which
    a peer's address could never equal."""

    def problem(self, value: Any, section: object) -> str | None:
        for item in value:
            try:
                ipaddress.ip_network(item.strip("[]"), strict=False)
            except ValueError:
                return (f"{item!r} is not an IP address or network (e.g. 127.0.0.1, 10.0.0.0/8, ::1): a connection "
                        "comes from an address, never from a name")
        return None


@dataclass(frozen=True)
class HostNames:
    """Each item a host name as a ``Host`` header carries it, with or without its port (``chat.example.com``,
    ``chat.example.com:8443``, ``[::1]:8000``)."""

    def problem(self, value: Any, section: object) -> str | None:
        for item in value:
            if not re.fullmatch(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?", item):
                return f"{item!r} is not a host name as a browser sends it (e.g. chat.example.com or chat.example.com:8443)"
        return None


class Constraint(typing.Protocol):
    def problem(self, value: Any, section: object) -> str | None: ...


# -- sections ---------------------------------------------------------------------------------------


class Checked:
    """Base of a config section (a frozen dataclass): its fields' constraints are checked whenever one
    is made. ``section`` is its key in the file, so a message names the key however the value came."""

    section: ClassVar[str] = ""

    def __init_subclass__(cls, section: str = "", **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.section = section

    def __post_init__(self) -> None:
        for name, hint in _hints(type(self)).items():
            _check(hint, getattr(self, name), _join(self.section, name), self)


def _check(hint: Any, value: Any, key: str, section: object) -> None:
    base, constraints = _unwrap(hint)
    if isinstance(value, str) and "\x00" in value:  # no path, name, address or command can hold one
        raise SettingsError(key, f"holds a NUL character (\\u0000) at position {value.index(chr(0)) + 1}",
                            "remove it")
    origin, args = get_origin(base), get_args(base)
    if origin in (typing.Union, types.UnionType):
        for option in args:
            if option is not type(None) and _is_a(value, _unwrap(option)[0]):
                _check(option, value, key, section)
        return
    if base in (int, float) and not any(isinstance(c, Range | OneOf) for c in constraints):
        raise TypeError(f"{key}: a number setting must declare its Range or OneOf (see bot/config/settings.py)")
    for constraint in constraints:
        problem = constraint.problem(value, section)
        if problem:
            raise SettingsError(key, problem)
    if origin is tuple:
        for i, item in enumerate(value):
            _check(args[0], item, f"{key}[{i}]", section)
    elif origin is dict:
        for name, item in value.items():
            _check(args[0], name, _join(key, name), section)
            if not dataclasses.is_dataclass(item):  # a section checks itself
                _check(args[1], item, _join(key, name), section)


def _is_a(value: Any, base: Any) -> bool:
    if base is float:
        return isinstance(value, int | float)
    return isinstance(value, get_origin(base) or base)


def _unwrap(hint: Any) -> tuple[Any, tuple[Constraint, ...]]:
    if get_origin(hint) is Annotated:
        base, *extras = get_args(hint)
        return base, tuple(e for e in extras if hasattr(e, "problem"))
    return hint, ()


_HINTS: dict[type, dict[str, Any]] = {}  # per class: sections are built on every model call (``Config.agent``)


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:  # resolving the annotations costs a hundred microseconds, and they never change
        fields = {f.name for f in dataclasses.fields(cls) if not f.metadata.get("internal")}
        _HINTS[cls] = {name: hint for name, hint in typing.get_type_hints(cls, include_extras=True).items()
                       if name in fields}
    return _HINTS[cls]


# -- reading a table --------------------------------------------------------------------------------


def build(cls: type[T], data: Any, key: str) -> T:
    """A ``cls`` instance from a TOML table, checking every key, type and value on the way."""
    if not isinstance(data, dict):
        raise SettingsError(key, f"expected a table, got {_kind(data)}")
    hints = _hints(cls)
    for name in data:
        if name not in hints:
            known = ", ".join(sorted(hints))
            raise SettingsError(_join(key, name), "unknown key", f"known keys here: {known}")
    values = {name: _convert(hints[name], data[name], _join(key, name)) for name in data}
    try:
        return cls(**values)
    except SettingsError as error:
        raise error.moved(getattr(cls, "section", ""), key) from None


def _convert(hint: Any, value: Any, key: str) -> Any:
    hint = _unwrap(hint)[0]
    origin, args = get_origin(hint), get_args(hint)
    if origin in (typing.Union, types.UnionType):
        errors = []
        for option in args:
            if option is type(None):
                continue
            try:
                return _convert(option, value, key)
            except SettingsError as error:
                errors.append(error.problem)
        raise SettingsError(key, errors[0] if errors else "unsupported value")
    if dataclasses.is_dataclass(hint):
        return build(hint, value, key)  # type: ignore[arg-type]
    if origin is tuple:
        if not isinstance(value, list):
            raise SettingsError(key, f"expected a list, got {_kind(value)}")
        return tuple(_convert(args[0], item, f"{key}[{i}]") for i, item in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise SettingsError(key, f"expected a table, got {_kind(value)}")
        return {name: _convert(args[1], item, _join(key, name)) for name, item in value.items()}
    return _scalar(hint, value, key)


def _scalar(hint: Any, value: Any, key: str) -> Any:
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint in (int, float) and isinstance(value, bool):
        raise SettingsError(key, f"expected {_NAMES[hint]}, got true/false")
    if hint in (str, int, float, bool) and not isinstance(value, hint):
        raise SettingsError(key, f"expected {_NAMES[hint]}, got {_kind(value)}")
    return value


_SET_TWICE = ("Cannot overwrite", "Cannot declare", "Cannot redefine")  # how tomllib says a key came again
_MAX_SCANNED_LINES = 5000


def parse_toml(text: str) -> dict[str, Any]:
    """The document as a dict. A key given twice is a ``SettingsError`` naming it (``budget.max_rounds:
    set twice (line 3)``), where tomllib would only say "Cannot overwrite a value"."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        twice = _first_key_set_twice(text) if str(error).startswith(_SET_TWICE) else None
        if twice is None:
            raise
        raise SettingsError(twice[0], f"set twice (line {twice[1]})", "keep one of them") from None


def _first_key_set_twice(text: str) -> tuple[str, int] | None:
    """The key and line where the document stops being valid because a key comes again: the shortest
    run of whole lines that tomllib refuses for that reason ends with it."""
    lines = text.splitlines()[:_MAX_SCANNED_LINES]
    table: list[str] = []
    for number, line in enumerate(lines, start=1):
        header = re.match(r"\s*\[\[?(.+?)\]\]?\s*(#.*)?$", line)
        try:
            tomllib.loads("\n".join(lines[:number]))
        except tomllib.TOMLDecodeError as error:
            if str(error).startswith(_SET_TWICE):
                path = _key_path(f"{header.group(1)} = 0" if header else line)
                return ".".join(path if header else [*table, *path]), number
        if header:
            table = _key_path(f"{header.group(1)} = 0")
    return None


def _key_path(line: str) -> list[str]:
    """The dotted path a one-line ``key = value`` assigns (quoted and dotted keys read as TOML does)."""
    try:
        node: Any = tomllib.loads(line)
    except tomllib.TOMLDecodeError:
        return [line.split("=", 1)[0].strip()]
    path = []
    while isinstance(node, dict) and len(node) == 1:
        name, node = next(iter(node.items()))
        path.append(name)
    return path


# -- the command line -------------------------------------------------------------------------------


def number_argument(kind: type[int] | type[float], limits: Range) -> Callable[[str], int | float]:
    """An argparse ``type`` reading a number the way the config reads one: finite, within ``limits``."""
    def parse(text: str) -> int | float:
        try:
            value = kind(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {_NAMES[kind]}, got {text!r}") from None
        problem = limits.problem(value, None)
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return value

    parse.__name__ = _NAMES[kind]  # argparse names the type in some messages
    return parse


def argument_for(section: type, name: str) -> Callable[[str], Any]:
    """An argparse ``type`` for a flag that overrides config field ``name`` of ``section``: a number in the same
    range, or text held to the same rules (``Matches``, ``StartsWith``, ``OneOf``)."""
    base, constraints = _unwrap(_hints(section)[name])
    if base is not str:
        limits = next(c for c in constraints if isinstance(c, Range))
        return number_argument(base, limits)

    def parse(text: str) -> str:
        for constraint in constraints:
            problem = constraint.problem(text, None) if isinstance(constraint, Matches | StartsWith | OneOf) else None
            if problem:
                raise argparse.ArgumentTypeError(problem)
        return text

    parse.__name__ = _NAMES[str]
    return parse


# -- words ------------------------------------------------------------------------------------------

_NAMES = {str: "a string", int: "a whole number", float: "a number", bool: "true or false"}


def _kind(value: Any) -> str:
    names = {str: "a string", int: "a whole number", float: "a number", bool: "true/false",
             list: "a list", dict: "a table"}
    return names.get(type(value), type(value).__name__)


def _shown_number(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    return f"{value:,}" if isinstance(value, int) else str(value)


def _shown_choice(value: Any, quoted: bool) -> str:
    return f'"{value}"' if quoted and isinstance(value, str) else str(value)


def _join(key: str, name: str) -> str:
    return f"{key}.{name}" if key else name
