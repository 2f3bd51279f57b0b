"""A claim's verdict, computed from its runs by a stated rule (no verdict is typed in).

Input: the runs of a claim's experiment (:mod:`speedtrap.experiments.claims`), one row per sample ×
arm × seed, with the columns ``sample`` (0: the defaults, the base scenario itself; 1, 2, …: the
Latin-hypercube samples of the levers and uncertainties), ``arm`` (0: the baseline), ``seed``, one
column per sampled path and one per outcome.

**The defaults.** With the defaults' runs under the members of a calibrated ensemble
(``ensemble_runs``: the same layout, ``sample`` numbering the members, each member on the claim's
seeds) the defaults *are* the ensemble: the effect is the mean over members and seeds, with the two
95% intervals every comparison prints (:func:`speedtrap.analysis.intervals.two_intervals`, a
one-way random-effects split): **seed noise** on the ensemble's mean, and **behavioural
uncertainty**, the prediction interval for the effect under a member drawn from the ensemble.
The samples s ≥ 1 are then paired with members, and there is no sample 0. Without an ensemble the
defaults are sample 0, the scenario file's own parameter set (``scenario_file`` too), and the
behavioural slot says so (:data:`NO_ENSEMBLE`).

**Per test and arm** (a *part* of the claim):

1. The statistic per seed: arm − baseline (``difference``), arm / baseline (``ratio``) — paired on
   the seed (and member), so common random numbers cancel — or the arm's own value (``level``,
   judged for every arm, the baseline included).
2. **At the defaults**: the part *holds* when the seed interval lies in the test's region, *fails*
   when none of it does, and is *unresolved* otherwise (``at_defaults``); the behavioural interval
   is placed the same way (``across_members``).
3. **Over the samples**: the statistic's mean over the seeds at each sample, and whether it lies in
   the region. The cases of interest are the samples that disagree with the defaults (where it fails
   if it holds at the defaults, and the other way round; where it holds when unresolved). PRIM finds
   the box of inputs that holds them, and a depth-limited CART tree cross-checks it
   (:mod:`speedtrap.analysis.scenario_discovery`).
4. **Verdict**: ``true`` when the part holds at the defaults, across the members (when there are
   members) and no flip box counts; ``false`` when it fails at the defaults and across the members
   and no flip box counts; ``depends`` otherwise, with ``depends_on`` saying on what (seed noise,
   the calibrated behaviour, the sampled assumptions). A flip box counts when it holds at least
   :data:`MIN_FLIP_COVERAGE` of the flip cases, at least :data:`MIN_FLIP_DENSITY` of its samples are
   flip cases, and it holds at least :data:`MIN_FLIP_SAMPLES` of them.

**The claim's verdict** (``combine = "all"``): ``false`` when any part is false, else ``depends`` when
any part depends, else ``true``. With ``combine = "each"`` the same rule is applied to each arm's
parts (a verdict per arm), and the claim's verdict is the arms' common verdict, or ``depends`` when
they differ.

Pure: DataFrames and specs in, plain results out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from speedtrap.analysis.intervals import MIN_MEMBERS, two_intervals
from speedtrap.analysis.scenario_discovery import Box, box_agreement, cart_box, prim_box
from speedtrap.analysis.statistics import ci_caveat, mean_ci
from speedtrap.config.claim import ClaimSpec, ClaimTest

SAMPLE, ARM = "sample", "arm"
"""Columns of a claim's runs: the design sample (0: the scenario file's own set; in the defaults'
runs under an ensemble, the member) and the arm (0: the baseline)."""
MIN_FLIP_COVERAGE = 0.2
"""A flip box must hold at least this share of the samples that disagree with the defaults."""
MIN_FLIP_DENSITY = 0.5
"""… and disagree with the defaults in at least this share of its own samples …"""
MIN_FLIP_SAMPLES = 2
"""… and hold at least this many of them (one sample is not a region)."""
NO_ENSEMBLE = "not available: the scenario's own single parameter set (--single), not the calibrated ensemble"
"""The behavioural-uncertainty slot of a verdict without a calibrated ensemble."""
VERDICTS = ("true", "false", "depends")
RULE = (
    f"true/false: the 95% seed interval at the defaults and the behavioural interval over the "
    f"calibrated ensemble lie inside/outside the region and no box of the "
    f"sampled inputs holding ≥ {MIN_FLIP_COVERAGE:g} of the disagreeing samples (density ≥ "
    f"{MIN_FLIP_DENSITY:g}, ≥ {MIN_FLIP_SAMPLES} samples) flips it; depends otherwise"
)


@dataclass(frozen=True)
class Effect:
    """A statistic's mean over ``n`` values with its 95% interval (and why not to trust it, if so)."""

    mean: float
    ci_low: float
    ci_high: float
    n: int
    caveat: str | None


def effect(values: Sequence[float] | np.ndarray) -> Effect:
    """:class:`Effect` of ``values`` (NaNs left out)."""
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    mean, low, high = mean_ci(x)
    return Effect(mean, low, high, int(x.size), ci_caveat(int(x.size), low, high))


@dataclass(frozen=True)
class Part:
    """One test on one arm: its verdict and the numbers behind it (module docstring)."""

    test: str
    outcome: str
    statistic: str
    holds: str
    bounds: list[float]
    arm: str
    verdict: str
    depends_on: list[str]
    at_defaults: str
    across_members: str | None
    defaults: Effect
    behavioural: dict[str, Any]
    scenario_file: Effect | None
    """The effect on the scenario file's own parameter set (sample 0), where it was run (without an
    ensemble: the same as ``defaults``)."""
    samples: int
    holds_share: float
    flip_what: str | None
    flip: dict[str, Any] | None
    flip_words: str | None
    cart: dict[str, Any] | None
    cart_words: str | None
    agreement: float | None


@dataclass(frozen=True)
class Reported:
    """An outcome summarised without a verdict: arm − baseline at the defaults, with its seed interval
    and its behavioural slot (as a part's)."""

    outcome: str
    arm: str
    baseline_mean: float
    difference: Effect
    behavioural: dict[str, Any]


@dataclass(frozen=True)
class ClaimResult:
    """A claim's verdict, its arms' verdicts, its parts and reported outcomes."""

    name: str
    statement: str
    verdict: str
    arm_verdicts: dict[str, str]
    parts: list[Part]
    reported: list[Reported]
    runs: int
    samples: int
    rule: str = RULE
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON (NaN stays NaN: the caller writes it as null)."""
        return asdict(self)


def in_region(value: float, region: tuple[float, float]) -> bool:
    low, high = region
    return bool(low <= value <= high) if not math.isnan(value) else False


def at_defaults(found: Effect, region: tuple[float, float]) -> str:
    """``holds``, ``fails`` or ``unresolved``: where the defaults' 95% interval lies against the
    region (one value without an interval: where the mean lies; no value: unresolved)."""
    low, high = (found.ci_low, found.ci_high) if not math.isnan(found.ci_low) else (found.mean, found.mean)
    if math.isnan(low):
        return "unresolved"
    r_low, r_high = region
    if r_low <= low and high <= r_high:
        return "holds"
    if high < r_low or low > r_high:
        return "fails"
    return "unresolved"


def statistic_values(runs: pd.DataFrame, test: ClaimTest, arm: int) -> pd.DataFrame:
    """Per (sample, seed): the test's statistic for ``arm`` (columns ``sample``, ``seed``, ``value``)."""
    mine = runs[runs[ARM] == arm][[SAMPLE, "seed", test.outcome]]
    if test.statistic == "level":
        return mine.rename(columns={test.outcome: "value"}).reset_index(drop=True)
    base = runs[runs[ARM] == 0][[SAMPLE, "seed", test.outcome]]
    pairs = mine.merge(base, on=[SAMPLE, "seed"], suffixes=("", "_base"))
    a, b = pairs[test.outcome].to_numpy(dtype=float), pairs[f"{test.outcome}_base"].to_numpy(dtype=float)
    if test.statistic == "difference":
        value = a - b
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            value = np.where(b != 0, a / b, np.nan)
    return pd.DataFrame({SAMPLE: pairs[SAMPLE], "seed": pairs["seed"], "value": value})


def defaults_effect(values: pd.DataFrame, members: bool) -> tuple[Effect, dict[str, Any]]:
    """The statistic at the defaults (``values`` per sample and seed, :func:`statistic_values`): with
    ``members`` (``sample`` numbering the members) the ensemble's mean with its seed interval, and the
    behavioural interval (module docstring); without, the mean over seeds with its Student-t interval
    and the :data:`NO_ENSEMBLE` slot."""
    if not members:
        return effect(values["value"]), {"available": False, "note": NO_ENSEMBLE}
    two = two_intervals(values["value"].to_numpy(dtype=float), values[SAMPLE].to_numpy())
    seed_caveat = ci_caveat(two.n, two.seed_low, two.seed_high)
    found = Effect(two.mean, two.seed_low, two.seed_high, two.n, seed_caveat)
    if two.members < 2:
        return found, {"available": False, "note": "one member gave a value: no behavioural interval"}
    if two.members < MIN_MEMBERS:
        return found, {
            "available": False,
            "members": two.members,
            "note": f"too few members ({two.members}): no behavioural interval (at least {MIN_MEMBERS})",
        }
    return found, {
        "available": True,
        "members": two.members,
        "mean": two.mean,
        "low": two.behaviour_low,
        "high": two.behaviour_high,
        "dominant": two.dominant,
        "note": "the central 95% of the members' means of the effect over the calibrated ensemble "
        "(docs/intervals.md)",
        "caveats": list(two.notes),
    }


def _boxes(x: pd.DataFrame, cases: np.ndarray) -> tuple[Box | None, Box | None]:
    if x.shape[1] == 0 or len(cases) < 2 or not cases.any():
        return None, None
    return prim_box(x, cases), cart_box(x, cases)


def _counts(box: Box | None) -> bool:
    if box is None or math.isnan(box.coverage) or math.isnan(box.density):
        return False
    return (
        box.coverage >= MIN_FLIP_COVERAGE
        and box.density >= MIN_FLIP_DENSITY
        and round(box.density * box.n_inside) >= MIN_FLIP_SAMPLES
    )


def judge_part(
    claim: ClaimSpec,
    test: ClaimTest,
    arm: int,
    runs: pd.DataFrame,
    ensemble_runs: pd.DataFrame | None = None,
) -> Part:
    """The verdict of ``test`` on ``arm`` from the claim's ``runs`` (module docstring)."""
    region = test.region()
    values = statistic_values(runs, test, arm)
    file_set: Effect | None = None  # under an ensemble there is no sample 0 (module docstring)
    if ensemble_runs is None:
        found, behavioural = defaults_effect(values[values[SAMPLE] == 0], members=False)
        file_set = found
    else:
        found, behavioural = defaults_effect(statistic_values(ensemble_runs, test, arm), members=True)
    status = at_defaults(found, region)
    across = (
        at_defaults(Effect(behavioural["mean"], behavioural["low"], behavioural["high"], 0, None), region)
        if behavioural["available"]
        else None
    )
    sampled = values[values[SAMPLE] > 0].groupby(SAMPLE)["value"].mean()
    holds = np.array([in_region(v, region) for v in sampled.to_numpy()], dtype=bool)
    inputs = (
        runs[runs[SAMPLE] > 0].drop_duplicates(SAMPLE).set_index(SAMPLE).loc[sampled.index]
        if len(sampled)
        else pd.DataFrame()
    )
    numeric = [
        f.path for f in claim.sampled if f.path in inputs and pd.api.types.is_numeric_dtype(inputs[f.path])
    ]
    x = inputs[numeric].reset_index(drop=True) if numeric else pd.DataFrame(index=range(len(sampled)))
    what = "fails" if status == "holds" else "holds"
    cases = ~holds if status == "holds" else holds
    labels = claim.labels()
    prim, cart = _boxes(x, cases)
    flips = _counts(prim)
    depends_on = []
    if status == "unresolved":
        depends_on.append("seed noise at the defaults")
    if across == "unresolved" or (across is not None and status != "unresolved" and across != status):
        depends_on.append("the calibrated behaviour (the members disagree)")
    if flips:
        depends_on.append("the sampled assumptions (a flip box)")
    if not depends_on and status in ("holds", "fails"):
        verdict = "true" if status == "holds" else "false"
    else:
        verdict = "depends"
    return Part(
        test=test.label or f"{test.statistic} of {test.outcome} {test.holds} {test.bounds}",
        outcome=test.outcome,
        statistic=test.statistic,
        holds=test.holds,
        bounds=list(test.bounds),
        arm=claim.compare.labels[arm],
        verdict=verdict,
        depends_on=depends_on,
        at_defaults=status,
        across_members=across,
        defaults=found,
        behavioural=behavioural,
        scenario_file=file_set,
        samples=len(sampled),
        holds_share=float(holds.mean()) if len(holds) else math.nan,
        flip_what=what if prim is not None else None,
        flip=prim.as_dict() if prim is not None else None,
        flip_words=prim.describe(what, labels) if prim is not None else None,
        cart=cart.as_dict() if cart is not None else None,
        cart_words=cart.describe(what, labels) if cart is not None else None,
        agreement=box_agreement(prim, cart, x) if prim is not None and cart is not None else None,
    )


def combine(verdicts: Sequence[str]) -> str:
    """A conjunction's verdict: false if any is false, else depends if any depends, else true."""
    if "false" in verdicts:
        return "false"
    if "depends" in verdicts:
        return "depends"
    return "true"


def tested_arms(claim: ClaimSpec, test: ClaimTest) -> list[int]:
    """The arms a test judges: its ``arms``, else every arm for a level and the others than the
    baseline for a difference or a ratio."""
    if test.arms is not None:
        return list(test.arms)
    first = 0 if test.statistic == "level" else 1
    return list(range(first, len(claim.compare.values)))


def judge_claim(
    claim: ClaimSpec, runs: pd.DataFrame, ensemble_runs: pd.DataFrame | None = None
) -> ClaimResult:
    """Every part's verdict, the arms' and the claim's (module docstring)."""
    missing = [c for c in (SAMPLE, ARM, "seed") if c not in runs]
    if missing:
        raise KeyError(f"a claim's runs need the columns sample, arm and seed; missing: {', '.join(missing)}")
    parts = [
        judge_part(claim, test, arm, runs, ensemble_runs)
        for test in claim.tests
        for arm in tested_arms(claim, test)
    ]
    by_arm: dict[str, list[str]] = {}
    for part in parts:
        by_arm.setdefault(part.arm, []).append(part.verdict)
    arm_verdicts = {arm: combine(v) for arm, v in by_arm.items()}
    if claim.combine == "all":
        verdict = combine([p.verdict for p in parts])
    else:
        distinct = set(arm_verdicts.values())
        verdict = distinct.pop() if len(distinct) == 1 else "depends"
    reported = []
    defaults = runs[runs[SAMPLE] == 0] if ensemble_runs is None else ensemble_runs
    for outcome in claim.report:
        test = ClaimTest(outcome=outcome, statistic="difference", holds="above", bounds=[0.0])
        base = defaults[defaults[ARM] == 0][outcome]
        for arm in range(1, len(claim.compare.values)):
            values = statistic_values(defaults, test, arm)
            found, behavioural = defaults_effect(values, members=ensemble_runs is not None)
            reported.append(
                Reported(outcome, claim.compare.labels[arm], float(base.mean()), found, behavioural)
            )
    return ClaimResult(
        name=claim.name,
        statement=claim.statement,
        verdict=verdict,
        arm_verdicts=arm_verdicts,
        parts=parts,
        reported=reported,
        runs=len(runs),
        samples=int((runs[SAMPLE].unique() > 0).sum()),
    )


__all__ = [
    "ARM",
    "MIN_FLIP_COVERAGE",
    "MIN_FLIP_DENSITY",
    "MIN_FLIP_SAMPLES",
    "NO_ENSEMBLE",
    "RULE",
    "SAMPLE",
    "VERDICTS",
    "ClaimResult",
    "Effect",
    "Part",
    "Reported",
    "at_defaults",
    "combine",
    "defaults_effect",
    "effect",
    "judge_claim",
    "judge_part",
    "statistic_values",
    "tested_arms",
]
