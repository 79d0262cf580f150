"""Reads TOML tables into frozen dataclasses, strictly: unknown keys and wrong types are errors.

Kept apart from the config's content so each section is nothing but a dataclass declaration.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, TypeVar, get_args, get_origin

T = TypeVar("T")


class SettingsError(ValueError):
    """One bad value: ``key`` is its dotted path in the file."""

    def __init__(self, key: str, problem: str, fix: str = "") -> None:
        self.key, self.problem, self.fix = key, problem, fix
        super().__init__(f"{key}: {problem}" + (f" ({fix})" if fix else ""))


def build(cls: type[T], data: Any, key: str) -> T:
    """A ``cls`` instance from a TOML table, checking every key and type on the way."""
    if not isinstance(data, dict):
        raise SettingsError(key, f"expected a table, got {_kind(data)}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if not f.metadata.get("internal")}  # type: ignore[arg-type]
    for name in data:
        if name not in fields:
            known = ", ".join(sorted(fields))
            raise SettingsError(_join(key, name), "unknown key", f"known keys here: {known}")
    values = {name: _convert(hints[name], data[name], _join(key, name)) for name in data}
    return cls(**values)


def _convert(hint: Any, value: Any, key: str) -> Any:
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
    if hint is int and isinstance(value, bool):
        raise SettingsError(key, "expected a whole number, got true/false")
    if hint in (str, int, float, bool) and not isinstance(value, hint):
        raise SettingsError(key, f"expected {_NAMES[hint]}, got {_kind(value)}")
    return value


_NAMES = {str: "a string", int: "a whole number", float: "a number", bool: "true or false"}


def _kind(value: Any) -> str:
    names = {str: "a string", int: "a whole number", float: "a number", bool: "true/false",
             list: "a list", dict: "a table"}
    return names.get(type(value), type(value).__name__)


def _join(key: str, name: str) -> str:
    return f"{key}.{name}" if key else name
