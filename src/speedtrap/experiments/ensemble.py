"""The calibrated ensemble: parameter sets that history matching could not rule out, as data.

**Format.** ``ensemble.csv`` (written by ``experiments/calibrate.py``, by default to
``experiments/calibration/``): a ``member`` column (0, 1, … — unique whole numbers) and one column
per parameter, named by its scenario path (``developer.attention.patience_s.median``), holding the
value that member gives it. Nothing else: the members' implausibilities and simulated outputs are
in ``check.csv`` beside it. A member is applied as scenario overrides, each value on every
calibration scenario whose field the path names (``Scenario.with_overrides``); which calibration
scenario a parameter belongs to is in ``validation/data/behaviour_parameters.csv``.

:func:`load_ensemble` reads and checks an ensemble file: the columns, finite numbers, and — when
given — each path against the parameter ranges table (a known parameter, inside its range) and
against a scenario (a field of it; every member's overrides validate).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import ValidationError

from speedtrap.config.base import describe_errors
from speedtrap.config.experiment import UnknownFieldError, check_scenario_path
from speedtrap.config.scenario import Scenario

__all__ = [
    "DEFAULT_ENSEMBLE",
    "ENSEMBLE_FILE",
    "MEMBER",
    "EnsembleChoice",
    "choose_members",
    "default_ensemble",
    "load_ensemble",
    "member_overrides",
    "plan_lines",
    "resolve_ensemble",
    "write_ensemble",
]

ENSEMBLE_FILE = "ensemble.csv"
DEFAULT_ENSEMBLE = "calibrated_ensemble.csv"
"""The stored calibrated ensemble, package data in ``speedtrap/validation/data/`` (written there
from the calibration's ``ensemble.csv``): what every command uses unless told otherwise."""
MEMBER = "member"
RANGE_SLACK = 1e-9
"""Relative slack on a range's ends when checking members (values written as text and read back)."""


def write_ensemble(members: pd.DataFrame, path: str | Path) -> Path:
    """Write ``members`` (a ``member`` column and one column per parameter path) as an ensemble
    file, after the checks :func:`load_ensemble` makes on the columns and values."""
    path = Path(path)
    _check_frame(members, str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    members.to_csv(path, index=False)
    return path


def _check_frame(frame: pd.DataFrame, where: str) -> list[str]:
    if MEMBER not in frame.columns or frame.columns[0] != MEMBER:
        raise ValueError(f"{where}: the first column must be {MEMBER!r}")
    paths = [str(c) for c in frame.columns[1:]]
    if not paths:
        raise ValueError(f"{where}: no parameter columns")
    if len(set(paths)) != len(paths):
        raise ValueError(f"{where}: a parameter column repeats")
    if frame.empty:
        raise ValueError(f"{where}: no members (the calibration's final check kept no parameter set)")
    member = pd.to_numeric(frame[MEMBER], errors="coerce")
    if member.isna().any() or (member % 1 != 0).any() or (member < 0).any() or member.duplicated().any():
        raise ValueError(f"{where}: {MEMBER} must be unique whole numbers ≥ 0")
    for column in paths:
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = values.isna() | ~values.map(lambda v: math.isfinite(v) if not pd.isna(v) else False)
        if bad.any():
            row = int(bad.to_numpy().nonzero()[0][0])
            raise ValueError(
                f"{where}: {column}: member row {row} is not a finite number ({frame[column].iloc[row]!r})"
            )
    return paths


def load_ensemble(
    path: str | Path,
    *,
    parameters: pd.DataFrame | None = None,
    scenario: Scenario | Mapping[str, Scenario] | None = None,
) -> list[dict[str, float]]:
    """The members of an ensemble file, in ``member`` order: one ``{path: value}`` dict each, to
    apply as scenario overrides.

    Checks the file's format (see the module docstring); with ``parameters`` (the behaviour
    parameters table), that every column is one of its paths and every value lies in its range;
    with ``scenario`` (one scenario, or a mapping of the calibration scenarios by name), that every
    path is a field of at least one of them and that every member's overrides of the paths it has
    validate there. Raises ``FileNotFoundError`` or ``ValueError`` naming the problem.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no ensemble file {path}: run `python experiments/calibrate.py` to make one, or give a "
            "single parameter set instead"
        )
    try:
        frame = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a readable CSV file ({exc})") from None
    paths = _check_frame(frame, str(path))
    frame = frame.assign(**{MEMBER: frame[MEMBER].astype(int)}).sort_values(MEMBER, ignore_index=True)
    members = [{p: float(row[p]) for p in paths} for _, row in frame.iterrows()]
    if parameters is not None:
        ranges = parameters.set_index("path")
        for p in paths:
            if p not in ranges.index:
                raise ValueError(f"{path}: {p!r} is not a parameter of the ranges table")
            low, high = float(ranges.loc[p, "low"]), float(ranges.loc[p, "high"])
            slack = RANGE_SLACK * max(abs(low), abs(high))
            outside = [m[p] for m in members if not low - slack <= m[p] <= high + slack]
            if outside:
                raise ValueError(f"{path}: {p} = {outside[0]} lies outside its range [{low:g}, {high:g}]")
    if scenario is not None:
        _check_scenarios(
            members, paths, scenario if isinstance(scenario, Mapping) else {"scenario": scenario}, path
        )
    return members


def _check_scenarios(
    members: list[dict[str, float]], paths: list[str], scenarios: Mapping[str, Scenario], where: Path
) -> None:
    holds: dict[str, list[str]] = {name: [] for name in scenarios}
    for p in paths:
        for name, scenario in scenarios.items():
            try:
                check_scenario_path(scenario, p)
            except UnknownFieldError:
                continue
            holds[name].append(p)
        if not any(p in held for held in holds.values()):
            raise ValueError(f"{where}: {p!r} is a field of no scenario given ({', '.join(scenarios)})")
    for i, member in enumerate(members):
        for name, scenario in scenarios.items():
            overrides: dict[str, Any] = {p: _as_field(scenario, p, member[p]) for p in holds[name]}
            try:
                scenario.with_overrides(overrides)
            except ValidationError as exc:
                raise ValueError(f"{where}: member {i} on {name}: {describe_errors(exc)}") from None


def _as_field(scenario: Scenario, path: str, value: float) -> float | int:
    """``value`` as an int where the scenario's field holds one and the value is whole."""
    node: Any = scenario.model_dump(mode="python")
    for part in path.split("."):
        node = node[part]
    return (
        int(value) if isinstance(node, int) and not isinstance(node, bool) and value.is_integer() else value
    )


def default_ensemble_path() -> Path:
    """Where the stored calibrated ensemble lives (it may not exist yet)."""
    from importlib import resources

    return Path(str(resources.files("speedtrap.validation.data").joinpath(DEFAULT_ENSEMBLE)))


def default_ensemble() -> list[dict[str, float]] | None:
    """The stored calibrated ensemble's members (checked against the parameter ranges table), or
    ``None`` while the calibration has not stored one."""
    from speedtrap.validation.parameters import load_parameters

    path = default_ensemble_path()
    if not path.is_file():
        return None
    return load_ensemble(path, parameters=load_parameters())


@dataclass(frozen=True)
class EnsembleChoice:
    """Which parameter sets a command runs: ``members`` (empty: the scenario's own single set),
    where they came from, and a one-line ``note`` saying so."""

    members: list[dict[str, float]]
    source: str
    note: str


def resolve_ensemble(path: str | Path | None, *, single: bool) -> EnsembleChoice:
    """The ensemble a command uses: ``--single`` → none; ``--ensemble FILE`` → that file (an error
    naming the problem when missing or bad); otherwise the stored default, or none with a note
    while it does not exist."""
    if single and path is not None:
        raise ValueError("--single and --ensemble exclude each other: give one")
    if single:
        return EnsembleChoice([], "single", "behaviour: the scenario's own single parameter set (--single)")
    if path is not None:
        from speedtrap.validation.parameters import load_parameters

        given = load_ensemble(path, parameters=load_parameters())
        return EnsembleChoice(given, str(path), f"behaviour: {len(given)} members of {path}")
    members = default_ensemble()
    if members is None:
        return EnsembleChoice(
            [],
            "none",
            "behaviour: no calibrated ensemble stored yet "
            f"(speedtrap/validation/data/{DEFAULT_ENSEMBLE}): the scenario's own single parameter set",
        )
    return EnsembleChoice(members, "default", f"behaviour: {len(members)} members of the calibrated ensemble")


def plan_lines(
    first: str, members: int, applied: set[str], left: Mapping[str, str], *, fewer: str
) -> list[str]:
    """The lines a command prints about the members it runs: ``first`` (which members, how many
    seeds), ``fewer`` when only one member runs (no behavioural interval), the paths ``applied``
    and those ``left`` out with why."""
    lines = [first]
    if members < 2:
        lines.append(f"one member only: no behavioural interval ({fewer})")
    lines.append(f"applied: {', '.join(sorted(applied)) or 'none'}")
    if left:
        lines.append("left out: " + "; ".join(f"{p} ({why})" for p, why in sorted(left.items())))
    return lines


def choose_members(count: int, replications: int) -> tuple[list[int], int]:
    """(member indices, seeds per member) for ``replications`` runs per arm over an ensemble of
    ``count`` members: K = min(count, replications // 2) members, evenly spaced through the file
    (its members are draws from the non-implausible space, so any even spread is a fair sample), with
    r = replications // K ≥ 2 seeds each so that the seed variance within a member is estimable.
    Fewer than 4 replications give one member (no behavioural interval)."""
    if count < 1 or replications < 1:
        raise ValueError("need at least one member and one replication")
    k = max(1, min(count, replications // 2))
    index = np.unique(np.round(np.linspace(0, count - 1, k)).astype(int)).tolist()
    return index, replications // len(index)


def scenario_kind(scenario: Scenario) -> str:
    """Which calibration scenario a scenario is like, for the parameters table's ``scenarios``
    column: ``metr`` for the METR-like scenario (named ``metr``), else ``headline``."""
    return "metr" if scenario.name == "metr" else "headline"


def _on_every_backend(
    scenario: Scenario, member: Mapping[str, float], scopes: Mapping[str, str], kind: str
) -> dict[str, tuple[float, str]]:
    """The member as {path: (value, the parameters table's row it comes from)}, with each
    backend-quality value for this kind of scenario (``backends.<calibrated>.quality.<field>``: the
    success curve of the model the calibration scenario's backend serves) put on every backend of
    ``scenario`` instead: every arm of a comparison serves that model, each keeping its own
    ``failure_multiplier`` (a distilled model keeps its m× the mistakes of the member's curve), so a
    faster arm is never compared under another curve than its baseline's."""
    from speedtrap.validation.parameters import applies_to

    out: dict[str, tuple[float, str]] = {}
    for path, value in member.items():
        parts = path.split(".")
        scope = scopes.get(path)
        if (
            len(parts) == 4
            and parts[0] == "backends"
            and parts[2] == "quality"
            and scope is not None
            and kind in applies_to(scope)
        ):
            for name in scenario.backends:
                out[f"backends.{name}.quality.{parts[3]}"] = (value, path)
        else:
            out.setdefault(path, (value, path))
    return out


def member_overrides(
    scenario: Scenario, member: Mapping[str, float], *, keep: Sequence[str] = ()
) -> tuple[dict[str, Any], dict[str, str]]:
    """(overrides, left out): the member's values that apply to ``scenario`` — paths that are fields
    of it, marked in the parameters table for its kind (:func:`scenario_kind`) and not among ``keep``
    (paths the user set) — and each left-out path with the reason."""
    from speedtrap.validation.parameters import applies_to, load_parameters

    table = load_parameters().set_index("path")
    scopes = {str(k): str(v) for k, v in table["scenarios"].items()}
    kind = scenario_kind(scenario)
    overrides: dict[str, Any] = {}
    left: dict[str, str] = {}
    for path, (value, row) in _on_every_backend(scenario, member, scopes, kind).items():
        if path in keep:
            left[path] = "set by you"
            continue
        if row in scopes and kind not in applies_to(scopes[row]):
            left[path] = f"marked for {scopes[row]} scenarios only"
            continue
        try:
            check_scenario_path(scenario, path)
        except UnknownFieldError:
            left[path] = "not a field of this scenario"
            continue
        overrides[path] = _as_field(scenario, path, value)
    return overrides, left
