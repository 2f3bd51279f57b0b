"""Which build of the serving pool is in use: compiled with mypyc, or the pure-Python modules; and
whether the typed core (Cython, :mod:`speedtrap.models.typed_core`) is.

The serving pool's modules (:data:`COMPILED_MODULES`) are compiled with mypyc when the package is
installed where a C compiler and mypyc are present (the build hook ``hatch_build.py``); their
Python sources ship beside them and are the fallback. The pure-Python sources are used instead of
the compiled modules when

* ``SPEEDTRAP_PURE`` is set (to anything but ``""`` or ``"0"``): at install, nothing is compiled;
  at run time, the compiled modules are left unused (how CI runs the suite on both builds);
* the compiled modules are older than their sources (an editable install whose sources changed
  since): with a :class:`StaleBuildWarning`, as running stale code silently would mislead.

Standard library only: ``speedtrap --version`` reports the build without loading the pool, and
the build hook loads this file by path.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import sys
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

__all__ = [
    "COMPILED_MODULES",
    "CORE_DIGEST_FILE",
    "CORE_INCLUDES",
    "CORE_MODULE",
    "PURE_ENV",
    "SOURCES_DIGEST_FILE",
    "StaleBuildWarning",
    "build_description",
    "core_build",
    "core_digest",
    "core_sources",
    "core_state",
    "pool_build",
    "pure_requested",
    "sources_digest",
    "use_sources_where_needed",
]

PURE_ENV = "SPEEDTRAP_PURE"
"""Environment variable that asks for the pure-Python build (at install and at run time)."""

COMPILED_MODULES = ("request", "replica_clock", "admission", "decode_rate", "pool")
"""The modules of ``speedtrap.serving`` that are compiled, in the order they import each other."""

SOURCES_DIGEST_FILE = "compiled_sources.sha256"
"""Written beside the compiled modules at build time: :func:`sources_digest` of their sources."""

SERVING = Path(__file__).resolve().parent / "serving"
MODELS = Path(__file__).resolve().parent / "models"

CORE_MODULE = "_typed_core"
"""The typed core's module in ``speedtrap.models`` (compiled with Cython from ``_typed_core.pyx``)."""
CORE_DIGEST_FILE = "typed_core_source.sha256"
"""Written beside the compiled typed core at build time: the SHA-256 of its Cython source
(:func:`core_digest`)."""
CORE_INCLUDES = "_core_*.pxi"
"""The Cython files ``_typed_core.pyx`` includes (its parts by concern), beside it."""

COMPILED = "compiled pool (mypyc)"
PURE = "pure Python"


class StaleBuildWarning(UserWarning):
    """The compiled serving pool was built from other sources than those beside it: the sources run."""


def pure_requested(environ: dict[str, str] | None = None) -> bool:
    """Whether ``SPEEDTRAP_PURE`` asks for the pure-Python build."""
    value = (os.environ if environ is None else environ).get(PURE_ENV, "")
    return value not in ("", "0")


def sources_digest(directory: Path = SERVING, modules: Sequence[str] = COMPILED_MODULES) -> str:
    """SHA-256 of the compiled modules' Python sources in ``directory`` (in :data:`COMPILED_MODULES`
    order)."""
    digest = hashlib.sha256()
    for name in modules:
        digest.update(name.encode() + b"\0" + (directory / f"{name}.py").read_bytes() + b"\0")
    return digest.hexdigest()


def _compiled_files(directory: Path = SERVING) -> dict[str, Path]:
    """The compiled extension module of each of :data:`COMPILED_MODULES` found in ``directory``."""
    found = {}
    for name in COMPILED_MODULES:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = directory / f"{name}{suffix}"
            if path.is_file():
                found[name] = path
                break
    return found


def _compiled_state(directory: Path = SERVING) -> str:
    """``"absent"``, ``"fresh"`` or ``"stale"``: the compiled modules in ``directory`` against the
    sources beside them."""
    if len(_compiled_files(directory)) < len(COMPILED_MODULES):
        return "absent"
    recorded = directory / SOURCES_DIGEST_FILE
    try:
        fresh = recorded.read_text(encoding="ascii").strip() == sources_digest(directory)
    except OSError:
        fresh = False
    return "fresh" if fresh else "stale"


def pool_build() -> str:
    """The build of the serving pool this process runs or will run: ``"compiled pool (mypyc)"`` or
    ``"pure Python"``."""
    if "speedtrap.serving.pool" in sys.modules:
        origin = getattr(sys.modules["speedtrap.serving.pool"], "__file__", "") or ""
        return COMPILED if not origin.endswith(".py") else PURE
    if pure_requested():
        return PURE
    return COMPILED if _compiled_state() == "fresh" else PURE


def core_sources(directory: Path = MODELS) -> list[Path]:
    """The typed core's Cython source in ``directory``: ``_typed_core.pyx``, then the parts it includes
    (:data:`CORE_INCLUDES`) in name order."""
    return [directory / f"{CORE_MODULE}.pyx", *sorted(directory.glob(CORE_INCLUDES))]


def core_digest(directory: Path = MODELS) -> str:
    """The SHA-256 of the typed core's source in ``directory``: its files' bytes one after another
    (:func:`core_sources`; with no parts, the digest of ``_typed_core.pyx`` alone)."""
    digest = hashlib.sha256()
    for path in core_sources(directory):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def core_state(directory: Path = MODELS) -> str:
    """``"absent"``, ``"fresh"`` or ``"stale"``: the compiled typed core in ``directory``
    (``speedtrap.models._typed_core``) against the Cython source beside it."""
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    if not any((directory / f"{CORE_MODULE}{suffix}").is_file() for suffix in suffixes):
        return "absent"
    try:
        fresh = (directory / CORE_DIGEST_FILE).read_text(encoding="ascii").strip() == core_digest(directory)
    except OSError:
        fresh = False
    return "fresh" if fresh else "stale"


def core_build() -> str:
    """Whether the typed core (``speedtrap.models.typed_core``) is in use: ``"typed core (Cython)"``
    or ``"no typed core"`` (not built, stale, or ``SPEEDTRAP_PURE`` set)."""
    if pure_requested() or core_state() != "fresh":
        return "no typed core"
    return "typed core (Cython)"


def build_description() -> str:
    """What ``speedtrap --version`` says of the build: the pool's and the typed core's, e.g.
    ``"compiled pool (mypyc), typed core (Cython)"``."""
    return f"{pool_build()}, {core_build()}"


class _SourceFinder:
    """A meta-path finder that imports the compiled modules from their Python sources."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.names = {f"speedtrap.serving.{name}": name for name in COMPILED_MODULES}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        name = self.names.get(fullname)
        if name is None:
            return None
        return importlib.util.spec_from_file_location(fullname, self.directory / f"{name}.py")


def use_sources_where_needed(directory: Path = SERVING) -> None:
    """Make ``speedtrap.serving``'s compiled modules import from their Python sources when the pure
    build is asked for or the compiled modules are stale (module docstring). Called by
    ``speedtrap.serving`` before it imports them."""
    if any(isinstance(finder, _SourceFinder) for finder in sys.meta_path):
        return
    state = _compiled_state(directory)
    if state == "absent":
        return
    if state == "stale" and not pure_requested():
        warnings.warn(
            f"the compiled serving pool in {directory} was built from other sources than those beside "
            "it; running the Python sources (reinstall speedtrap to compile them again, or set "
            f"{PURE_ENV}=1 to silence this)",
            StaleBuildWarning,
            stacklevel=2,
        )
    elif state == "fresh" and not pure_requested():
        return
    sys.meta_path.insert(0, _SourceFinder(directory))
