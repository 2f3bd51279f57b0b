"""Reading a TOML file the user gave: every failure is one line that names the file.

Scenario, experiment and hardware/model spec files all come through :func:`read_toml`, so a file
that is missing, unreadable, not UTF-8, not TOML or nested absurdly deep gives a
:class:`TomlFileError` (a ``ValueError``) naming the path and what is wrong with it, never a
traceback or a decoder's message without the file.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

__all__ = ["MAX_NESTING", "TomlFileError", "nesting_depth", "parse_toml", "read_toml"]

MAX_NESTING = 32
"""Deepest nesting of tables and arrays accepted: a scenario file needs five or six levels."""

BOM = "\ufeff"

LONG_DOTTED_KEY = re.compile(
    rf"""(?:(?:[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')[ \t]*\.[ \t]*){{{MAX_NESTING},}}"""
)
"""A key of more than :data:`MAX_NESTING` dotted parts (``a.b.c…``, in a header or before ``=``):
refused before parsing, since tomllib's time and memory grow with the square of the parts (a key of
100,000 parts took more memory than the machine had)."""


class TomlFileError(ValueError):
    """A TOML file that cannot be used; the message names the file."""


def nesting_depth(value: Any) -> int:
    """Levels of nested tables and arrays in ``value`` (a scalar: 0), counted without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def parse_toml(text: str, *, source: str) -> dict[str, Any]:
    """The TOML document ``text`` (a leading byte-order mark is allowed); ``source`` names it in errors."""
    if LONG_DOTTED_KEY.search(text):
        raise TomlFileError(f"{source}: nested deeper than {MAX_NESTING} levels of tables or arrays")
    try:
        data = tomllib.loads(text.removeprefix(BOM))
    except tomllib.TOMLDecodeError as exc:
        raise TomlFileError(f"{source}: not valid TOML ({exc})") from None
    except RecursionError:
        raise TomlFileError(
            f"{source}: nested deeper than {MAX_NESTING} levels of tables or arrays"
        ) from None
    if nesting_depth(data) > MAX_NESTING:
        raise TomlFileError(f"{source}: nested deeper than {MAX_NESTING} levels of tables or arrays")
    return data


def read_toml(path: str | Path) -> dict[str, Any]:
    """The TOML document in ``path``; :class:`TomlFileError` naming the file when it cannot be read,
    is not UTF-8 text, or is not TOML."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except IsADirectoryError:
        raise TomlFileError(f"{path}: is a directory, not a TOML file") from None
    except FileNotFoundError:
        raise TomlFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise TomlFileError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise TomlFileError(
            f"{path}: not UTF-8 text (byte 0x{raw[exc.start]:02x} on line {line}); save it as UTF-8"
        ) from None
    return parse_toml(text, source=str(path))
