"""Where the experiment and scenario files are: the package's own copy, or the source checkout's.

A wheel ships ``experiments/*.toml``, ``experiments/scenarios/`` and ``experiments/sweeps/`` as
package data under ``speedtrap/_data/experiments/`` (see ``pyproject.toml``). A source checkout
(an editable install) has no such copy and reads the checkout's ``experiments/`` directly, so
edits there take effect at once.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

PACKAGE_DATA = ("_data", "experiments")
"""The experiments' directory inside the installed package."""
CHECKOUT_EXPERIMENTS = Path(__file__).resolve().parents[3] / "experiments"
"""``experiments/`` of a source checkout (``src/speedtrap/experiments/files.py`` → the root)."""


def experiments_dir() -> Path:
    """The directory holding the canonical experiment files, ``scenarios/`` and ``sweeps/``.

    Raises ``FileNotFoundError`` naming both places looked at when neither has them.
    """
    packaged = resources.files("speedtrap").joinpath(*PACKAGE_DATA)
    if packaged.is_dir():
        return Path(str(packaged))
    if (CHECKOUT_EXPERIMENTS / "scenarios").is_dir():
        return CHECKOUT_EXPERIMENTS
    raise FileNotFoundError(
        f"no experiment files: neither {packaged} (an installed package) nor {CHECKOUT_EXPERIMENTS} "
        "(a source checkout) exists; reinstall speedtrap"
    )
