"""An experiment: a design over scenario parameters × replications with common random numbers.

An experiment file names a base scenario, the **factors** (scenario fields to vary), a
**design** (every combination, a Latin hypercube or a scrambled Sobol sequence), how many
**replications** each design point gets and the root **seed** they are drawn from. Every design
point uses the same replication seeds, so the same task stream meets every backend. Example::

    name = "flow_threshold"
    scenario = "../scenarios/headline.toml"   # relative to this file; or an inline table
    replications = 10
    seed = 2026

    [design]
    kind = "full_factorial"

    [[factors]]
    path = "developer.attention.flow_threshold_s"
    values = [1.0, 10.0, 60.0]

    [[factors]]
    path = "backend"                          # special: Scenario.with_backend(value)
    values = ["gpu-batched", "gpu-fast"]

    [quick]                                   # applied by `speedtrap sweep --quick`
    replications = 2
    scenario = { developers = 2, horizon_s = 28800.0 }

A factor path names a field that exists in the base scenario (``developer.attention.
flow_threshold_s``, ``backends.gpu-batched.quality.failure_multiplier``, ``policy``), or is the
special path ``backend``. Every factor value is applied to the base scenario when the file is
loaded, so a typo or an invalid value fails at once with the factor named.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, Self

import numpy as np
from pydantic import Field, StrictBool, ValidationError, ValidationInfo, field_validator, model_validator

from speedtrap.config.base import Spec, describe_errors
from speedtrap.config.outcomes import SUMMARY_KEYS
from speedtrap.config.scenario import Scenario
from speedtrap.config.toml_file import TomlFileError, read_toml

BACKEND_PATH = "backend"
"""The special factor path that serves a design point by one backend: ``Scenario.with_backend(value)``."""

WHOLE_VALUE_PATHS = frozenset({"policy"})
"""Scenario paths whose table values replace the whole field rather than merging into it."""

RESERVED_COLUMNS = ("point", "replication", "seed")
"""Columns of an experiment's results table that are not factors or outcomes."""

NAME_MAX = 255
"""Longest experiment name: its results go to a directory of that name, and file systems allow
names of at most 255 bytes (the name is ASCII)."""

QUICK_SUFFIX = "-quick"
"""Appended to an experiment's name by :meth:`Experiment.quick_variant`, so that quick results are
stored apart from full ones (``results/<name>-quick/``)."""

DesignKind = Literal["full_factorial", "lhs", "sobol"]


class UnknownFieldError(ValueError):
    """A dotted path that names no field of the base scenario."""


def check_scenario_path(scenario: Scenario, path: str) -> None:
    """Raise :class:`UnknownFieldError` unless ``path`` names a field of ``scenario`` (or is ``backend``).

    The walk stops at a field whose value is ``None`` (an optional sub-spec such as speculative
    decoding): below it, validation of the overridden scenario decides.
    """
    if path == BACKEND_PATH:
        return
    node: Any = scenario.model_dump(mode="python")
    parts = path.split(".")
    for i, part in enumerate(parts):
        if not isinstance(node, dict):
            raise UnknownFieldError(f"unknown scenario field {path!r}: {'.'.join(parts[:i])} is not a table")
        if part not in node:
            where = ".".join(parts[:i]) or "a scenario"
            known = ", ".join(sorted(node)) or "nothing"
            raise UnknownFieldError(f"unknown scenario field {path!r} ({where} has: {known})")
        node = node[part]
        if node is None:
            return


def apply_overrides(scenario: Scenario, overrides: Mapping[str, Any]) -> Scenario:
    """``scenario`` with dotted-path overrides applied and validated, then ``backend`` (if given).

    Dotted paths replace whole values (``with_overrides``); ``backend`` comes last so that
    overrides of that backend's fields (``backends.<name>.quality...``) are kept by
    ``Scenario.with_backend``.
    """
    rest = {path: value for path, value in overrides.items() if path != BACKEND_PATH}
    if rest:
        scenario = scenario.with_overrides(rest)
    if BACKEND_PATH in overrides:
        scenario = scenario.with_backend(overrides[BACKEND_PATH])
    return scenario


def flatten_overrides(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested tables as dotted paths: ``{"developer": {"review": {"detect_prob": 0.5}}}`` becomes
    ``{"developer.review.detect_prob": 0.5}``.

    Tables under :data:`WHOLE_VALUE_PATHS` (``policy``) stay whole.
    """
    flat: dict[str, Any] = {}
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and path not in WHOLE_VALUE_PATHS:
            flat.update(flatten_overrides(value, prefix=f"{path}."))
        else:
            flat[path] = value
    return flat


def value_label(value: Any) -> Any:
    """How a factor value appears in a results table: scalars as themselves, tables and lists as
    compact JSON text (so that they can be grouped and compared)."""
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return value


class Factor(Spec):
    """One scenario field varied by the design.

    Exactly one of ``values`` (an explicit list: the levels of a full factorial; categorical
    levels of a Latin hypercube or Sobol design), ``range`` (``[low, high]``: continuous, for
    Latin hypercube and Sobol designs, or ``levels`` evenly spaced points for a full factorial)
    or ``choices`` (a categorical list; the unit interval is split into equal parts). ``log``
    spaces a range log-uniformly; ``integer`` rounds range values to whole numbers.
    """

    path: str = Field(min_length=1, description="Dotted scenario path, or 'backend'.")
    values: list[Any] | None = Field(default=None, min_length=1)
    range: tuple[float, float] | None = None
    choices: list[Any] | None = Field(default=None, min_length=1)
    levels: int | None = Field(default=None, ge=2, description="Evenly spaced levels of a range (factorial).")
    log: StrictBool = False
    integer: StrictBool = False

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        given = [name for name in ("values", "range", "choices") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(
                f"give exactly one of values, range or choices (got: {', '.join(given) or 'none'})"
            )
        if self.range is not None:
            low, high = self.range
            if not (math.isfinite(low) and math.isfinite(high) and low < high):
                raise ValueError(f"range must be [low, high] with low < high, got {list(self.range)}")
            if self.log and low <= 0:
                raise ValueError(f"a log range needs low > 0, got {low}")
            if self.integer and (low != int(low) or high != int(high)):
                raise ValueError(f"an integer range needs whole-number bounds, got {list(self.range)}")
        else:
            for name in ("levels", "log", "integer"):
                if getattr(self, name):
                    raise ValueError(f"{name} applies to a range only")
        levels = self.categories
        if levels is not None:
            labels = [value_label(v) for v in levels]
            if len(set(map(repr, labels))) != len(labels):
                raise ValueError(f"{'values' if self.values is not None else 'choices'} repeat a level")
        return self

    @property
    def categories(self) -> list[Any] | None:
        """The explicit levels (``values`` or ``choices``), or ``None`` for a range."""
        return self.values if self.values is not None else self.choices

    def grid(self) -> list[Any]:
        """The levels of a full factorial design: the explicit list, or ``levels`` points of the range."""
        levels = self.categories
        if levels is not None:
            return list(levels)
        if self.range is None or self.levels is None:
            raise ValueError("a full factorial design needs values, choices, or range with levels")
        low, high = self.range
        points = np.geomspace(low, high, self.levels) if self.log else np.linspace(low, high, self.levels)
        if self.integer:
            return list(dict.fromkeys(round(float(x)) for x in points))
        return [float(x) for x in points]

    def from_unit(self, u: np.ndarray) -> list[Any]:
        """Map unit-interval samples ``u`` (in [0, 1)) to this factor's values.

        Categories: ``categories[floor(u·k)]``. Range: ``low + u·(high − low)`` (log: uniform in
        log space); integer ranges pick each of ``low..high`` with equal probability.
        """
        u = np.clip(np.asarray(u, dtype=float), 0.0, np.nextafter(1.0, 0.0))
        levels = self.categories
        if levels is not None:
            return [levels[int(i)] for i in np.floor(u * len(levels))]
        assert self.range is not None
        low, high = self.range
        if self.integer and not self.log:
            # min: at u just below 1, low + u·(high − low + 1) can round up to high + 1 in floating point
            return [int(x) for x in np.minimum(np.floor(low + u * (high - low + 1)), high)]
        x = np.exp(np.log(low) + u * np.log(high / low)) if self.log else low + u * (high - low)
        if self.integer:
            return [int(v) for v in np.clip(np.round(x), low, high)]
        return [float(v) for v in x]

    def check_values(self) -> Iterator[tuple[str, Any]]:
        """(field, value) pairs that exercise this factor at load time: every level, or the range ends."""
        levels = self.categories
        if levels is not None:
            name = "values" if self.values is not None else "choices"
            for i, value in enumerate(levels):
                yield f"{name}.{i}", value
        else:
            ends = self.grid() if self.levels else self.from_unit(np.array([0.0, 1.0]))
            yield "range.0", ends[0]
            yield "range.1", ends[-1]

    def value_for(self, label: Any) -> Any:
        """The scenario value behind a results-table entry (undoes :func:`value_label`)."""
        levels = self.categories
        if levels is not None and any(isinstance(v, dict | list) for v in levels):
            for value in levels:
                if value_label(value) == label:
                    return value
            raise ValueError(f"{self.path}: {label!r} is not one of this factor's values")
        if isinstance(label, np.generic):
            return label.item()
        return label


class Design(Spec):
    """How design points are chosen: every combination of the factors' levels, a Latin hypercube
    or a scrambled Sobol sequence (``scipy.stats.qmc``) of ``points`` points seeded by ``seed``."""

    kind: DesignKind = "full_factorial"
    points: int | None = Field(
        default=None, ge=1, le=1_000_000, description="Points of an lhs or sobol design (at most 10^6)."
    )
    seed: int = Field(
        default=0, ge=0, description="Seed of the lhs/sobol sampler (assumption: any fixed seed)."
    )

    @field_validator("points")
    @classmethod
    def _points(cls, points: int | None, info: ValidationInfo) -> int | None:
        kind = info.data.get("kind")
        if kind == "full_factorial" and points is not None:
            raise ValueError("a full_factorial design takes every combination; remove points")
        if kind in ("lhs", "sobol") and points is None:
            raise ValueError(f"a {kind} design needs a number of points")
        if kind == "sobol" and points is not None:
            check_sobol_points(points)
        return points


def check_sobol_points(points: int) -> None:
    """Raise ``ValueError`` unless ``points`` is a power of two (Sobol sequences keep their balance
    only at powers of two)."""
    if points & (points - 1):
        below = 1 << (points.bit_length() - 1)
        raise ValueError(f"a sobol design needs a power of 2, got {points} (use {below} or {below * 2})")


class Quick(Spec):
    """A reduced variant for a fast look (``speedtrap sweep --quick``): fewer replications, fewer
    points (lhs/sobol), scenario overrides (dotted paths; nested tables merge into the base) and
    fewer levels of named factors (``values = { "path.of.factor" = [...] }``, factorial designs)."""

    replications: int | None = Field(default=None, ge=1, le=10_000)
    points: int | None = Field(default=None, ge=1, le=1_000_000)
    scenario: dict[str, Any] = Field(default_factory=dict)
    values: dict[str, list[Any]] = Field(default_factory=dict)


class Experiment(Spec):
    """A design over scenario parameters × replications (common random numbers); see the module doc."""

    name: str = Field(
        max_length=NAME_MAX,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$",
        description="Results go to results/<name>/ (a directory: at most 255 characters).",
    )
    scenario: Scenario = Field(
        description="The base scenario: a table, or a path to a scenario TOML (relative to the experiment "
        "file with from_toml, otherwise to the working directory)."
    )
    factors: list[Factor] = Field(default_factory=list)
    design: Design = Field(default_factory=Design)
    replications: int = Field(
        default=10,
        ge=1,
        le=10_000,
        description="Runs per design point, at most 10 000 (assumption: a starting point; check CI widths).",
    )
    seed: int = Field(default=0, ge=0, description="Root seed of the replication seeds (assumption: any).")
    outcomes: list[str] | None = Field(
        default=None, min_length=1, description="Summary keys to keep (default: all)."
    )
    quick: Quick | None = None

    @field_validator("scenario", mode="before")
    @classmethod
    def _scenario_file(cls, value: Any) -> Any:
        if isinstance(value, str | Path):
            try:
                return read_toml(value)
            except TomlFileError as exc:
                raise ValueError(f"scenario file {exc}") from None
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        paths = [f.path for f in self.factors]
        for i, path in enumerate(paths):
            if path in paths[:i]:
                raise ValueError(f"factors.{i}.path: {path!r} is already a factor")
        for i, factor in enumerate(self.factors):
            self._check_factor(i, factor)
        self._check_outcomes()
        if self.factors:
            self._check_first_point()
        if self.quick is not None:
            self._check_quick(self.quick)
        return self

    def _check_factor(self, i: int, factor: Factor) -> None:
        if factor.path in RESERVED_COLUMNS:
            raise ValueError(
                f"factors.{i}.path: {factor.path!r} names a results column, not a scenario field"
            )
        if self.design.kind == "full_factorial" and factor.range is not None and factor.levels is None:
            raise ValueError(
                f"factors.{i}.levels: a range in a full_factorial design needs levels (or use values)"
            )
        if self.design.kind != "full_factorial" and factor.levels is not None:
            raise ValueError(f"factors.{i}.levels: levels apply to full_factorial designs only")
        try:
            check_scenario_path(self.scenario, factor.path)
        except UnknownFieldError as exc:
            raise ValueError(f"factors.{i}.path: {exc}") from None
        for field, value in factor.check_values():
            try:
                apply_overrides(self.scenario, {factor.path: value})
            except ValidationError as exc:
                raise ValueError(f"factors.{i}.{field}: {describe_errors(exc)}") from None
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"factors.{i}.{field}: {str(exc).strip(chr(39) + chr(34))}") from None

    def _check_outcomes(self) -> None:
        if self.outcomes is None:
            return
        paths = {f.path for f in self.factors}
        for i, key in enumerate(self.outcomes):
            if key not in SUMMARY_KEYS:
                raise ValueError(f"outcomes.{i}: unknown outcome {key!r} (known: {', '.join(SUMMARY_KEYS)})")
            if key in self.outcomes[:i]:
                raise ValueError(f"outcomes.{i}: {key!r} is listed twice")
            if key in paths:
                raise ValueError(f"outcomes.{i}: {key!r} is also a factor column; drop it from outcomes")

    def _check_first_point(self) -> None:
        factorial = self.design.kind == "full_factorial"
        first = {f.path: f.grid()[0] if factorial else f.from_unit(np.zeros(1))[0] for f in self.factors}
        try:
            apply_overrides(self.scenario, first)
        except (ValidationError, ValueError, KeyError) as exc:
            text = describe_errors(exc) if isinstance(exc, ValidationError) else str(exc)
            raise ValueError(f"factors: the first design point {first} is invalid: {text}") from None

    def _check_quick(self, quick: Quick) -> None:
        if quick.points is not None:
            if self.design.kind == "full_factorial":
                raise ValueError(
                    "quick.points: a full_factorial design takes every combination; remove points"
                )
            if self.design.kind == "sobol":
                try:
                    check_sobol_points(quick.points)
                except ValueError as exc:
                    raise ValueError(f"quick.points: {exc}") from None
        overrides = flatten_overrides(quick.scenario)
        for path in overrides:
            try:
                check_scenario_path(self.scenario, path)
            except UnknownFieldError as exc:
                raise ValueError(f"quick.scenario: {exc}") from None
        try:
            apply_overrides(self.scenario, overrides)
        except ValidationError as exc:
            raise ValueError(f"quick.scenario: {describe_errors(exc)}") from None

    @property
    def base_scenario(self) -> Scenario:
        """The resolved base scenario every design point starts from (the ``scenario`` field)."""
        return self.scenario

    @property
    def factor_paths(self) -> list[str]:
        """The factors' paths, in order: the factor columns of the results table."""
        return [f.path for f in self.factors]

    def quick_variant(self) -> Experiment:
        """The reduced experiment of the ``quick`` table, named ``<name>-quick`` so that its results
        are stored apart from the full experiment's (``results/<name>-quick/``).

        Without a ``quick`` table, the same experiment under the ``-quick`` name.
        """
        data = self.model_dump(mode="python")
        quick = self.quick or Quick()
        data["name"] = self.name + QUICK_SUFFIX
        data["quick"] = None
        if quick.replications is not None:
            data["replications"] = quick.replications
        if quick.points is not None:
            data["design"]["points"] = quick.points
        data["scenario"] = apply_overrides(self.scenario, flatten_overrides(quick.scenario))
        paths = [factor["path"] for factor in data["factors"]]
        for path, values in quick.values.items():
            if path not in paths:
                raise ValueError(f"quick.values.{path}: not a factor of this experiment ({', '.join(paths)})")
            factor = data["factors"][paths.index(path)]
            factor.update(values=values, range=None, levels=None, choices=None)
        return type(self).model_validate(data)

    @classmethod
    def from_toml(cls, path: str | Path) -> Experiment:
        """Load and validate an experiment file; a scenario path in it is relative to the file."""
        path = Path(path)
        data = read_toml(path)
        scenario = data.get("scenario")
        if isinstance(scenario, str):
            data["scenario"] = str(path.parent / scenario)
        return cls.model_validate(data)
