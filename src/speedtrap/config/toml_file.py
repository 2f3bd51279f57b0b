"""Reading a TOML file the user gave: every failure is one line that names the file.

Scenario, experiment and hardware/model spec files all come through :func:`read_toml`, so a file
that is missing, unreadable, not UTF-8, not TOML or nested absurdly deep gives a
:class:`TomlFileError` (a ``ValueError``) naming the path and what is wrong with it, never a
traceback or a decoder's message without the file.
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_NESTING",
    "MAX_TOML_BYTES",
    "TomlFileError",
    "file_problem",
    "nesting_depth",
    "parse_toml",
    "read_toml",
    "shown_path",
]

MAX_NESTING = 32
"""Deepest nesting of tables and arrays accepted: a scenario file needs five or six levels."""

MAX_TOML_BYTES = 64 * 2**20
"""Largest TOML file read, bytes (64 MiB): a scenario or experiment file is a few kilobytes, and a
larger one (or an endless device such as /dev/zero) would only exhaust memory."""

SHOWN_PATH_CHARS = 160
"""Longest path an error message shows whole; a longer one is shortened in the middle."""

BOM = "\ufeff"

LONG_DOTTED_KEY = re.compile(
    rf"""(?<![^\s\[{{,])(?>(?:[A-Za-z0-9_-]++|"[^"\n]*+"|'[^'\n]*+')[ \t]*+\.[ \t]*+){{{MAX_NESTING}}}"""
)
"""A key of more than :data:`MAX_NESTING` dotted parts (``a.b.c…``, in a header or before ``=``):
refused before parsing, since tomllib's time and memory grow with the square of the parts (a key of
100,000 parts took more memory than the machine had). The search takes time linear in the text: a
key starts only where a key can (at the start, after white space, ``[``, ``{`` or ``,``), so a run of
n name characters is scanned once, not from each of its n positions, and parts and the group are
atomic (nothing is scanned again on backtracking). 2 MB of name characters take 0.05 s, where the
pattern before took 84 s for 100 kB (measured on a shared 2-core machine)."""


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
    except ValueError as exc:  # an integer of more digits than Python converts (4,300)
        raise TomlFileError(f"{source}: a number with too many digits ({exc})") from None
    if nesting_depth(data) > MAX_NESTING:
        raise TomlFileError(f"{source}: nested deeper than {MAX_NESTING} levels of tables or arrays")
    return data


def shown_path(path: str | Path) -> str:
    """``path`` for an error message: whole up to :data:`SHOWN_PATH_CHARS` characters, else its start
    and end around "…" (a path of thousands of characters would bury the message)."""
    text = os.fsdecode(path) if not isinstance(path, str) else path
    if len(text) <= SHOWN_PATH_CHARS:
        return text
    half = SHOWN_PATH_CHARS // 2
    return f"{text[:half]}…{text[-half:]} ({len(text):,} characters)"


def file_problem(path: str | Path, what: str = "file") -> str | None:
    """What stops ``path`` being read as a ``what`` (a regular file), in a few words, or ``None``:
    nothing there, a directory, a named pipe (reading one waits for a writer for ever), a device or a
    socket, a name longer than the system allows, no permission."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return f"no such {what}"
    except NotADirectoryError:
        return f"no such {what} (a part of the path is not a directory)"
    except (OSError, ValueError) as exc:  # a name too long, a loop of links, no permission, a NUL byte
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return f"cannot read it ({reason})"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        kind = "a directory"
    elif stat.S_ISFIFO(mode):
        kind = "a named pipe (FIFO)"
    elif stat.S_ISSOCK(mode):
        kind = "a socket"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "a device"
    else:  # pragma: no cover - every kind of file is named above
        kind = "not a regular file"
    article = "an" if what[:1] in ("a", "e", "i", "o", "u") else "a"
    return f"is {kind}, not {article} {what}"


def read_toml(path: str | Path) -> dict[str, Any]:
    """The TOML document in ``path``; :class:`TomlFileError` naming the file when it is not a regular
    file (:func:`file_problem`), cannot be read, is larger than :data:`MAX_TOML_BYTES`, is not UTF-8
    text, or is not TOML."""
    path = Path(path)
    shown = shown_path(path)
    problem = file_problem(path, "TOML file")
    if problem is not None:
        raise TomlFileError(f"{shown}: {problem.replace('no such TOML file', 'no such file')}")
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_TOML_BYTES + 1)
    except OSError as exc:
        raise TomlFileError(f"{shown}: cannot read it ({exc.strerror or exc})") from None
    if len(raw) > MAX_TOML_BYTES:
        raise TomlFileError(
            f"{shown}: larger than {MAX_TOML_BYTES // 2**20} MiB; not a scenario or spec file"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise TomlFileError(
            f"{shown}: not UTF-8 text (byte 0x{raw[exc.start]:02x} on line {line}); save it as UTF-8"
        ) from None
    return parse_toml(text, source=shown)
