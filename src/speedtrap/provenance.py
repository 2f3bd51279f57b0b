"""Where a result came from: the package version, the git commit of a checkout, and the versions of
Python and the libraries that shape the numbers (recorded in every JSON output), and where the caller
gives them, the engine each scenario ran on (the typed core or the Mesa model)."""

from __future__ import annotations

import platform
import subprocess
from collections.abc import Mapping
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

KEY_LIBRARIES = ("mesa", "numpy", "pandas", "scipy", "pydantic")
"""Libraries whose versions are recorded beside results."""


@cache
def git_commit() -> str | None:
    """The commit of the checkout the package runs from (with ``-dirty`` when changed), or ``None``
    when it is not a git checkout or git is missing."""
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=40"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def provenance(engines: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """``{"speedtrap": version, "git_commit": str | None, "python": version, "libraries": {name:
    version}}``, and with ``engines`` (a label, e.g. a scenario's or an arm's, → ``{"engine": "typed
    core" | "mesa", "engine_reason": str | None}``, as
    :func:`speedtrap.models.typed_core.engines_of` gives them) ``"engines"``: which engine ran each
    and why not the typed core where it did not."""
    from speedtrap import __version__

    record: dict[str, Any] = {
        "speedtrap": __version__,
        "git_commit": git_commit(),
        "python": platform.python_version(),
        "libraries": {name: _version(name) for name in KEY_LIBRARIES},
    }
    if engines is not None:
        record["engines"] = {label: dict(engine) for label, engine in engines.items()}
    return record
