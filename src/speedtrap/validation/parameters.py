"""The uncertain behavioural parameters and the calibration targets as history matching sees them.

``data/behaviour_parameters.csv`` lists every uncertain behavioural parameter of the workflow model
that the calibration targets can inform, one row each: ``path`` (a scenario field, as
``Scenario.with_overrides`` takes it), its range ``low``–``high`` on a ``linear`` or ``log`` scale,
the calibration ``scenarios`` it applies to (``headline``, ``metr`` or ``both``), and its ``source``
(``url``, ``note``); a range no source gives is marked "assumption: …" with what bounds it
(docs/calibration.md, "Parameter ranges"). :func:`load_parameters` checks the table itself and
:func:`check_parameter_paths` checks it against the calibration scenarios: every path a numeric
field of each scenario it applies to, both ends of its range valid values there.

:func:`calibration_targets` reads the targets table (``data/workflow_targets.csv``) with its
observation and discrepancy standard deviations (``obs_sd``, ``discrepancy_sd``) as
:class:`speedtrap.analysis.history_matching.Target` s, named by the statistic each compares.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import ValidationError

from speedtrap.analysis.history_matching import Parameter, Target
from speedtrap.config.base import describe_errors
from speedtrap.config.experiment import UnknownFieldError, check_scenario_path
from speedtrap.config.scenario import Scenario
from speedtrap.validation.workflow import FITTED_ROLES, load_targets

__all__ = [
    "CONSTANTS_FILE",
    "PARAMETERS_FILE",
    "PARAMETER_COLUMNS",
    "SCOPES",
    "applies_to",
    "calibration_parameters",
    "calibration_targets",
    "check_parameter_paths",
    "load_parameters",
    "scenario_value",
]

PARAMETERS_FILE = "behaviour_parameters.csv"
CONSTANTS_FILE = "unfitted_constants.csv"
"""Constants the calibration does not vary, each with the range it could take (mostly assumptions):
the decision-flip check (:mod:`speedtrap.experiments.decision_flips`) runs their ends too."""
PARAMETER_COLUMNS = ("path", "low", "high", "scale", "scenarios", "source", "url", "note")
SCOPES: dict[str, tuple[str, ...]] = {
    "headline": ("headline",),
    "metr": ("metr",),
    "both": ("headline", "metr"),
}
"""The ``scenarios`` column's values and the calibration scenarios each names."""


def load_parameters(path: str | Path | None = None) -> pd.DataFrame:
    """The parameter ranges table (default ``data/behaviour_parameters.csv``; :data:`CONSTANTS_FILE`:
    the packaged table of unfitted constants, in the same columns), checked: the
    columns of :data:`PARAMETER_COLUMNS`, one row per path, finite ``low < high``, a ``linear`` or
    ``log`` scale (``low > 0`` for log), a known ``scenarios`` value and a source on every row."""
    if path is None or path == CONSTANTS_FILE:
        name = PARAMETERS_FILE if path is None else CONSTANTS_FILE
        with resources.files("speedtrap.validation.data").joinpath(name).open("rb") as f:
            table = pd.read_csv(f, keep_default_na=False, na_values={"low": [""], "high": [""]})
    else:
        table = pd.read_csv(path, keep_default_na=False, na_values={"low": [""], "high": [""]})
    missing = [c for c in PARAMETER_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"parameter table: missing columns {', '.join(missing)}")
    if table.empty:
        raise ValueError("parameter table: no parameters")
    repeated = table["path"][table["path"].duplicated()].tolist()
    if repeated:
        raise ValueError(f"parameter table: {repeated[0]!r} is listed twice")
    for row in table.itertuples(index=False):
        where = f"parameter {row.path!r}"
        low, high = float(row.low), float(row.high)
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise ValueError(f"{where}: need finite low < high, got [{row.low}, {row.high}]")
        if row.scale not in ("linear", "log"):
            raise ValueError(f"{where}: scale must be linear or log, got {row.scale!r}")
        if row.scale == "log" and low <= 0:
            raise ValueError(f"{where}: a log scale needs low > 0, got {low}")
        if row.scenarios not in SCOPES:
            raise ValueError(f"{where}: scenarios must be one of {', '.join(SCOPES)}, got {row.scenarios!r}")
        if not str(row.source).strip():
            raise ValueError(f"{where}: give a source (or 'assumption: ...' with what bounds it)")
        if row.url and not str(row.url).startswith("http"):
            raise ValueError(f"{where}: url must be a web address or empty, got {row.url!r}")
    return table


def applies_to(scenarios: str) -> tuple[str, ...]:
    """The calibration scenarios a ``scenarios`` value names (``both``: headline and metr)."""
    try:
        return SCOPES[scenarios]
    except KeyError:
        raise ValueError(f"scenarios must be one of {', '.join(SCOPES)}, got {scenarios!r}") from None


def scenario_value(scenario: Scenario, path: str) -> Any:
    """The value of the dotted ``path`` in ``scenario`` (KeyError naming the path when it has none)."""
    node: Any = scenario.model_dump(mode="python")
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(f"scenario {scenario.name!r} has no field {path!r}")
        node = node[part]
    return node


def check_parameter_paths(table: pd.DataFrame, scenarios: Mapping[str, Scenario]) -> None:
    """Raise ``ValueError`` unless every row's path is a numeric field of each calibration scenario
    it applies to (``scenarios`` maps headline and metr to their scenarios) and both ends of its
    range are valid values there (integer fields need whole-number ends)."""
    for row in table.itertuples(index=False):
        for name in applies_to(str(row.scenarios)):
            if name not in scenarios:
                raise ValueError(f"parameter {row.path!r}: no {name!r} scenario to apply it to")
            scenario = scenarios[name]
            where = f"parameter {row.path!r} in the {name} scenario"
            try:
                check_scenario_path(scenario, str(row.path))
                value = scenario_value(scenario, str(row.path))
            except (UnknownFieldError, KeyError) as exc:
                raise ValueError(f"{where}: {str(exc).strip(chr(34) + chr(39))}") from None
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{where}: not a number (the field holds {value!r})")
            for end in (row.low, row.high):
                number: float | int = int(end) if isinstance(value, int) and float(end).is_integer() else end
                try:
                    scenario.with_overrides({str(row.path): number})
                except ValidationError as exc:
                    raise ValueError(f"{where}: {end} is not a valid value: {describe_errors(exc)}") from None


def calibration_parameters(table: pd.DataFrame, scenarios: Mapping[str, Scenario]) -> list[Parameter]:
    """The rows of a checked parameter table as :class:`Parameter` s (integer where the scenario
    field holds an integer), after :func:`check_parameter_paths`."""
    check_parameter_paths(table, scenarios)
    out = []
    for row in table.itertuples(index=False):
        first = scenarios[applies_to(str(row.scenarios))[0]]
        integer = isinstance(scenario_value(first, str(row.path)), int)
        out.append(
            Parameter(str(row.path), float(row.low), float(row.high), row.scale, integer, str(row.source))
        )
    return out


def calibration_targets(targets: pd.DataFrame | None = None) -> list[Target]:
    """The calibration targets (default: :func:`speedtrap.validation.workflow.load_targets`) as
    :class:`Target` s named by the statistic each compares, with the published value and the
    observation and discrepancy standard deviations of the table; a target whose tolerance is
    relative (a share of the value) is emulated on the log scale, and one judged inside a published
    interval (``tolerance_kind = inside_interval``) is an interval target (0 inside): ``hard`` (the
    ``interval`` column; an accepted member lies inside it) where the interval is a published
    confidence interval of the statistic itself, ``soft`` where it is a range of sources or rests on an
    assumption (distance to it over the discrepancy sd). Only the fitted roles
    (:data:`speedtrap.validation.workflow.FITTED_ROLES`) are returned: a held-out study's target never
    enters the calibration."""
    table = load_targets() if targets is None else targets
    missing = [c for c in ("statistic", "published", "obs_sd", "discrepancy_sd") if c not in table.columns]
    if missing:
        raise ValueError(f"targets table: missing columns {', '.join(missing)}")
    if "role" in table.columns:  # held-out (validation) targets are never fitted
        table = table[table["role"].isin(FITTED_ROLES)]
    out = []
    for row in table.itertuples(index=False):
        interval = getattr(row, "tolerance_kind", "") == "inside_interval"
        hard = interval and str(getattr(row, "interval", "hard")) == "hard"
        out.append(
            Target(
                str(row.statistic),
                float(row.published),
                float(row.obs_sd),
                float(row.discrepancy_sd),
                f"{row.id}: {row.source}",
                "log" if getattr(row, "tolerance_kind", "") == "relative" else "linear",
                low=float(row.low) if interval else math.nan,
                high=float(row.high) if interval else math.nan,
                hard=hard,
            )
        )
    return out
