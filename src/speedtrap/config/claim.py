"""A claim of the fast-inference debate as an experiment: arms compared, levers, uncertainties, tests.

A claim file (``experiments/claims/<name>.toml``) states the claim and how it is tested::

    name = "c6_slow_mode"
    statement = "Give me a slow mode that's cheaper instead."
    scenario = "../scenarios/shared_fleet.toml"   # relative to the claim file
    model = "summary"            # the run's flat summary; "fleet": per-tier and provider outcomes
    replications = 5             # per design point, common random numbers
    seed = 2026
    points = 32                  # Latin-hypercube samples of the levers and uncertainties
    design_seed = 1
    report = ["mean_queue_wait_s"]   # outcomes summarised without a verdict

    [compare]                    # one scenario path: the baseline arm first, then the others
    path = "policy"
    labels = ["standard tier", "background on the slow tier"]
    values = [{ kind = "always", tier = "standard" }, { kind = "background_slow" }]

    [[tests]]                    # the claim holds when every test holds
    outcome = "usd_per_dev_day"
    statistic = "ratio"          # arm / baseline, paired by seed; "difference"; "level" (the arm's own)
    holds = "below"              # "above", "below" or "between"
    bounds = [1.0]               # one bound; two for "between"

    [[levers]]                   # what the user chooses, sampled over its range
    path = "developer.attention.max_parallel_sessions"
    range = [1, 3]
    integer = true
    label = "agent sessions a developer keeps open"

    [[uncertainties]]            # behavioural and physical parameters, each with its source
    path = "developers"
    range = [100, 400]
    integer = true
    label = "developers sharing the fleet"
    source = "assumption: the fleet from a quarter to full load"

    [quick]                      # `speedtrap claims --quick`
    points = 6
    replications = 2
    scenario = { developers = 20, horizon_s = 3600.0 }

Every design point runs every arm with the same seeds; the first point is the base scenario itself
(the **defaults**), the others a Latin hypercube over the levers and uncertainties
(:mod:`speedtrap.experiments.claims` runs and judges them). Pure data: nothing here runs.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import Field, StrictBool, model_validator

from speedtrap.config.base import Spec, set_path
from speedtrap.config.experiment import NAME_MAX, Factor, Quick, apply_overrides
from speedtrap.config.scenario import Scenario
from speedtrap.config.toml_file import TomlFileError, read_toml

Statistic = Literal["difference", "ratio", "level"]
NEIGHBOURHOOD = "the neighbourhood of the stated"
Holds = Literal["above", "below", "between"]
ClaimModel = Literal["summary", "fleet"]


class ClaimFactor(Factor):
    """A lever or an uncertainty: a factor (a scenario path and its range or values) with a ``label``
    for boxes in words and the ``source`` of its range (or the assumption behind it)."""

    label: str | None = None
    source: str | None = None
    also: list[str] = Field(
        default_factory=list,
        description="Other scenario paths set to the same value (e.g. the same hardware in two backends).",
    )
    identified: StrictBool = Field(
        default=True,
        description="False: the data the model is fitted on does not identify this parameter (a fitted "
        "value at a bound, or one no measurement separates); a claim it decides is 'not identified'.",
    )
    identify: str | None = Field(default=None, description="What measurement would identify it.")

    def as_factor(self) -> Factor:
        """The plain factor (what the experiment engine records)."""
        return Factor.model_validate(
            self.model_dump(exclude={"label", "source", "also", "identified", "identify"})
        )

    def tied_factors(self) -> list[Factor]:
        """A plain factor for each path in ``also`` (the same range, the same value at every sample)."""
        base = self.as_factor().model_dump()
        return [Factor.model_validate(base | {"path": path}) for path in self.also]


class StatedValue(Spec):
    """One coordinate of the point a claim states (e.g. "6× the speed"): ``value`` at ``path`` — or,
    with ``over``, ``value`` times the per-stream decode speed of backend ``over`` (``path`` is then a
    backend's ``decode_speedup``) — and the neighbourhood sampled around it, ``value / spread`` to
    ``value × spread``, log-uniform."""

    path: str = Field(min_length=1)
    value: float = Field(gt=0)
    spread: float = Field(gt=1, description="The neighbourhood: value ÷ spread to value × spread.")
    over: str | None = Field(default=None, description="value is a speed ratio over this backend.")
    label: str = Field(min_length=1)
    source: str = Field(min_length=1)
    scenario_value: float | None = Field(
        default=None, gt=0, description="The value at path (filled from the physics where over is given)."
    )


class Stated(Spec):
    """The point a claim states, tested first (its defaults), and the neighbourhood around it."""

    label: str = Field(min_length=1)
    values: list[StatedValue] = Field(min_length=1)


class Compare(Spec):
    """The arms: values of one scenario path (``backend``, ``policy``, ``policy.share``, …), the
    baseline first; ``labels`` name them in reports."""

    path: str = Field(min_length=1)
    values: list[Any] = Field(min_length=2)
    labels: list[str] = Field(min_length=2)

    @model_validator(mode="after")
    def _one_label_each(self) -> Self:
        if len(self.labels) != len(self.values):
            raise ValueError(f"labels: {len(self.labels)} labels for {len(self.values)} values")
        if len(set(self.labels)) != len(self.labels):
            raise ValueError("labels: each arm needs its own label")
        return self


class ClaimTest(Spec):
    """One number the claim is judged on: ``statistic`` of ``outcome`` (per seed: arm − baseline, arm
    / baseline, or the arm's own value) lies ``holds`` ``bounds``. ``label`` says it in words."""

    outcome: str = Field(min_length=1)
    statistic: Statistic = "difference"
    holds: Holds
    bounds: list[float] = Field(min_length=1, max_length=2)
    label: str | None = None
    resolution: float = Field(
        default=0.0,
        ge=0,
        description="A one-sided test holds only when the statistic clears its bound by more than this "
        "(in the statistic's unit); closer is 'no effect'.",
    )
    resolution_source: str | None = None
    arms: list[int] | None = Field(
        default=None,
        description="Arms judged (indices; default: every arm for a level, else all but the baseline).",
    )

    @model_validator(mode="after")
    def _bounds_fit(self) -> Self:
        want = 2 if self.holds == "between" else 1
        if len(self.bounds) != want:
            raise ValueError(f"bounds: holds = {self.holds!r} takes {want} bound{'s' * (want > 1)}")
        if not all(math.isfinite(b) for b in self.bounds):
            raise ValueError("bounds must be finite numbers")
        if want == 2 and not self.bounds[0] < self.bounds[1]:
            raise ValueError(f"bounds: need low < high, got {self.bounds}")
        return self

    def region(self) -> tuple[float, float]:
        """The open interval of the statistic in which the test holds (the tie rule: a value on a
        bound, or within ``resolution`` of a one-sided bound, is no effect and does not hold)."""
        if self.holds == "above":
            return (self.bounds[0] + self.resolution, math.inf)
        if self.holds == "below":
            return (-math.inf, self.bounds[0] - self.resolution)
        return (self.bounds[0], self.bounds[1])


class ClaimSpec(Spec):
    """A claim and its experiment (module docstring)."""

    name: str = Field(max_length=NAME_MAX - 16, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    statement: str = Field(min_length=1, description="The claim as people make it.")
    question: str | None = Field(default=None, description="What the experiment asks of it.")
    scenario: Scenario
    scenario_changes: dict[str, Any] = Field(
        default_factory=dict,
        description="Dotted scenario paths and the values that replace them in the scenario file "
        "(e.g. a backend the headline scenario lacks), applied before it is read.",
    )
    scenario_unset: list[str] = Field(
        default_factory=list,
        description="Dotted paths of the scenario file removed before it is read (back to their "
        "documented defaults), e.g. a mix a sampled lever would contradict.",
    )
    scenario_why: str | None = Field(
        default=None, description="Why the claim's scenario is not the headline one as it stands."
    )
    stated: Stated | None = None
    model: ClaimModel = "summary"
    combine: Literal["all", "each"] = Field(
        default="all",
        description="all: the claim holds when every test holds for every arm; each: a verdict per arm.",
    )
    expected: dict[str, Literal["true", "false"]] | None = Field(
        default=None,
        description="With combine = each: the verdict the claim states for each judged arm, by label "
        "(claim 2: low batch true, every other mechanism false); the claim holds when every arm's "
        "verdict is the stated one. Without it, the claim's verdict is the arms' common one.",
    )
    compare: Compare
    tests: list[ClaimTest] = Field(min_length=1)
    report: list[str] = Field(default_factory=list)
    levers: list[ClaimFactor] = Field(default_factory=list)
    uncertainties: list[ClaimFactor] = Field(default_factory=list)
    points: int = Field(
        default=32, ge=0, le=100_000, description="Latin-hypercube samples besides the defaults."
    )
    design_seed: int = Field(default=0, ge=0)
    replications: int = Field(default=5, ge=1, le=10_000)
    seed: int = Field(default=2026, ge=0)
    quick: Quick | None = None

    @classmethod
    def from_toml(cls, path: str | Path) -> ClaimSpec:
        """Load a claim file; its ``scenario`` path is relative to the file."""
        data = read_toml(path)
        scenario = data.get("scenario")
        if isinstance(scenario, str):
            try:
                data["scenario"] = read_toml(Path(path).parent / scenario)
            except TomlFileError as exc:
                raise ValueError(f"{path}: scenario file {exc}") from None
        return cls.model_validate(data)

    @model_validator(mode="before")
    @classmethod
    def _apply_scenario_changes(cls, data: Any) -> Any:
        changes, unset = (
            (data.get("scenario_changes"), data.get("scenario_unset"))
            if isinstance(data, dict)
            else (None, None)
        )
        if (changes or unset) and isinstance(data.get("scenario"), dict):
            scenario = copy.deepcopy(data["scenario"])
            for path in unset or []:
                *parents, last = str(path).split(".")
                node = scenario
                for part in parents:
                    node = node.get(part, {}) if isinstance(node, dict) else {}
                if isinstance(node, dict):
                    node.pop(last, None)
            for path, value in (changes or {}).items():
                set_path(scenario, str(path), copy.deepcopy(value))
            data = {**data, "scenario": scenario}
        return data

    @model_validator(mode="after")
    def _tests_fit_the_arms(self) -> Self:
        arms = len(self.compare.values)
        for i, test in enumerate(self.tests):
            for arm in test.arms or []:
                if not 0 <= arm < arms:
                    raise ValueError(f"tests.{i}.arms: no arm {arm} (arms 0–{arms - 1}, 0 is the baseline)")
                if arm == 0 and test.statistic != "level":
                    raise ValueError(
                        f"tests.{i}.arms: a {test.statistic} compares an arm with the baseline (0)"
                    )
        return self

    def judged_arms(self, test: ClaimTest) -> list[int]:
        """The arms ``test`` judges: its ``arms``, else every arm for a level and the others than the
        baseline (arm 0) for a difference or a ratio."""
        if test.arms is not None:
            return list(test.arms)
        return list(range(0 if test.statistic == "level" else 1, len(self.compare.values)))

    @model_validator(mode="after")
    def _expected_names_the_judged_arms(self) -> Self:
        if self.expected is None:
            return self
        if self.combine != "each":
            raise ValueError("expected: the arms' stated verdicts need combine = 'each'")
        judged = {self.compare.labels[arm] for test in self.tests for arm in self.judged_arms(test)}
        if set(self.expected) != judged:
            missing, extra = sorted(judged - set(self.expected)), sorted(set(self.expected) - judged)
            raise ValueError(
                f"expected: one stated verdict per judged arm (missing: {', '.join(missing) or 'none'}; "
                f"not a judged arm: {', '.join(extra) or 'none'})"
            )
        return self

    @model_validator(mode="after")
    def _distinct_paths(self) -> Self:
        paths = [
            self.compare.path,
            *(p for f in self.sampled for p in (f.path, *f.also)),
            *(v.path for v in (self.stated.values if self.stated else []) if v.scenario_value is None),
        ]
        for i, path in enumerate(paths):
            if path in paths[:i]:
                raise ValueError(f"{path!r} is compared, a lever or an uncertainty more than once")
        return self

    def with_neighbourhood(self, scenario_values: dict[str, float]) -> ClaimSpec:
        """The claim with its stated point as the defaults (``scenario_values``: path → the value the
        scenario takes there) and the neighbourhood sampled as uncertainties (log-uniform, value ÷
        spread to × spread in the stated unit, converted by the same factor)."""
        if self.stated is None:
            return self
        values, factors, overrides = [], [], {}
        for v in self.stated.values:
            at = float(scenario_values[v.path])
            overrides[v.path] = at
            values.append(v.model_copy(update={"scenario_value": at}))
            factors.append(
                ClaimFactor(
                    path=v.path,
                    range=(at / v.spread, at * v.spread),
                    log=True,
                    label=v.label
                    if v.over is None
                    else f"{v.label}, as its decode multiplier ({at:.3g} = {v.value:g}×)",
                    source=f"{NEIGHBOURHOOD} {v.value:g}, ÷/× {v.spread:g}: {v.source}",
                )
            )
        stated = self.stated.model_copy(update={"values": values})
        return self.model_copy(
            update={
                "scenario": apply_overrides(self.scenario, overrides),
                "stated": stated,
                "uncertainties": [*factors, *self.uncertainties],
            }
        )

    @property
    def sampled(self) -> list[ClaimFactor]:
        """The levers, then the uncertainties: the inputs of the Latin hypercube."""
        return [*self.levers, *self.uncertainties]

    def labels(self) -> dict[str, str]:
        """Path → label of every lever and uncertainty (the path where none is given)."""
        return {f.path: f.label or f.path for f in self.sampled}


__all__ = [
    "NEIGHBOURHOOD",
    "ClaimFactor",
    "ClaimModel",
    "ClaimSpec",
    "ClaimTest",
    "Compare",
    "Holds",
    "Stated",
    "StatedValue",
    "Statistic",
]
