"""The app's settings as files and command lines that reproduce its runs outside the browser.

Pure (no Solara): each arm the controls build (:func:`speedtrap.app.settings.build_arms`) is one
scenario run with one seed, so the export is, per arm, a scenario file that ``speedtrap run
FILE.toml --seed S`` runs to the same result, and the equivalent ``speedtrap run`` command line
(the chosen scenario file, ``--backend``, ``--seed`` and one ``--set`` per control that changes
it). Without what-ifs, the replicated economics are ``speedtrap compare`` over both backends.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

from speedtrap.app.settings import (
    UPLOADED,
    Arms,
    Settings,
    arm_overrides,
    build_arms,
    bundled_scenarios,
    common_overrides,
    load_base,
)
from speedtrap.config.scenario import Scenario

__all__ = ["UPLOADED_FILE", "Export", "export_settings", "file_name"]

UPLOADED_FILE = "your-scenario.toml"
"""What the command line calls the scenario file dropped on the page (the app keeps its text only)."""


@dataclass(frozen=True)
class Export:
    """Per arm (by name): its scenario file's text and its ``speedtrap run`` command line; and
    the ``speedtrap compare`` command line of the replicated economics (None with what-ifs, which
    act on B alone, or with a single arm)."""

    files: dict[str, str]
    commands: dict[str, str]
    compare: str | None
    seed: int


def file_name(arm: str) -> str:
    """The file name an arm's scenario is exported under."""
    return f"speedtrap-{re.sub(r'[^A-Za-z0-9_.-]+', '_', arm)}.toml"


def _toml_value(value: Any) -> str:
    """``value`` as the TOML text ``--set`` reads back (speedtrap.cli.common.parse_set)."""
    return tomli_w.dumps({"v": value}).removeprefix("v = ").strip()


def _scenario_argument(settings: Settings) -> list[str]:
    if settings.scenario == UPLOADED:
        return [UPLOADED_FILE]
    path = bundled_scenarios().get(settings.scenario)
    if path is None:
        return []  # the built-in defaults: no file
    try:
        return [str(path.relative_to(Path.cwd()))]
    except ValueError:
        return [str(path)]


def _sets(base: Scenario, overrides: dict[str, Any]) -> list[str]:
    """``--set path=value`` for each override that changes ``base`` (in order; each applied to the
    scenario the previous ones gave)."""
    sets = []
    scenario = base
    for path, value in overrides.items():
        if path == "policy":
            kind = value["kind"]
            sets.append(f"policy.kind={kind}")
            sets.extend(f"policy.{k}={_toml_value(v)}" for k, v in value.items() if k != "kind")
            scenario = scenario.with_overrides({path: value})
            continue
        changed = scenario.with_overrides({path: value})
        if changed == scenario:
            continue
        if value is None:
            raise ValueError(f"{path} cannot be cleared from the command line")
        sets.append(f"{path}={_toml_value(value)}")
        scenario = changed
    return sets


def _command(program: str, settings: Settings, options: list[str]) -> str:
    return shlex.join(["speedtrap", program, *_scenario_argument(settings), *options])


def export_settings(settings: Settings) -> Export:
    """The export of the controls' arms; raises ``ValueError`` with the controls' messages when they
    do not build, or when an arm cannot be written as a command line."""
    arms: Arms = build_arms(settings)
    if not arms.ok or arms.seed is None:
        raise ValueError("; ".join(f"{k}: {v}" for k, v in arms.errors.items()) or "nothing to export")
    seed = arms.seed
    base = load_base(settings)
    common = common_overrides(settings, base)
    names = list(arms.scenarios)
    files, commands = {}, {}
    for name, scenario in arms.scenarios.items():
        served = base.with_backend(name)
        shared = served.with_overrides(common)
        changes = arm_overrides(shared, name, settings, what_if=name == names[-1])
        sets = [*_sets(served, common), *_sets(shared, changes)]
        options = ["--backend", name, "--seed", str(seed), *(f"--set={s}" for s in sets)]
        commands[name] = _command("run", settings, options)
        header = (
            f"# Exported by speedtrap app: the arm {name!r} of scenario {settings.scenario!r}, seed {seed}.\n"
            f"# Run it with: speedtrap run {file_name(name)} --seed {seed}\n"
        )
        files[name] = header + scenario.to_toml()
    compare = None
    what_ifs = settings.decode_speedup != 1.0 or settings.failure_multiplier != 1.0
    if len(names) == 2 and not what_ifs and settings.policy == "always":
        sets = _sets(base, common)
        options = [
            *(x for name in names for x in ("--backend", name)),
            "--seed",
            str(seed),
            "--replications",
            str(settings.replications),
            *(f"--set={s}" for s in sets),
        ]
        compare = _command("compare", settings, options)
    return Export(files, commands, compare, seed)
