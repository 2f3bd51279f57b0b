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
   the box of inputs that holds them, reported only when it survives resampling
   (:func:`speedtrap.analysis.stable_boxes.stable_prim_box`: a minimum mass, quasi-p values, half-sample
   reruns and a bootstrap; else "no stable box"), and a depth-limited CART tree cross-checks it
   (:mod:`speedtrap.analysis.scenario_discovery`). A claim with a stated point (``[stated]``) adds the
   **distance from the stated point** as an input: max over its coordinates of |log(x / value)| /
   log(spread), 0 at the point and 1 at the neighbourhood's edge.
4. **Verdict**: ``true`` when the part holds at the defaults, across the members (when there are
   members) and fewer than :data:`MIN_FLIP_SHARE` of the samples disagree; ``false`` when it fails
   the same way; ``depends`` otherwise, with ``depends_on`` saying on what (seed noise, the
   calibrated behaviour, the sampled assumptions). A part that depends on the sampled assumptions
   is **not identified** when an input that decides it — when every sample disagrees with the
   defaults, one whose defaults sit at an end of its sampled range (a fit at its bound); else a
   restricted input of its stable box; else the input of highest EVPPI — is one the fitted data does
   not identify (``identified = false`` in the claim file, with what would identify it).
5. **What a team would measure** (each part that depends on the samples): the decision analysis of
   :func:`speedtrap.analysis.decisions.analyse_decision` on the samples, with +½ where the part
   holds and −½ where it does not in place of the net benefit: the share of samples where it holds
   with its Wilson 95% interval, each input's EVPPI — then E[max(P(holds | input), ½)] −
   max(P(holds), ½), the gain in the probability of calling a sample's verdict right by knowing the
   input (a margin in the statistic's unit would let a few far-off samples outweigh the rest) — and
   the boundary: the stable PRIM box of the holding samples over the inputs of highest EVPPI, or "no
   stable box".

**The tie rule.** A statistic holds only strictly inside the region: a value on a bound, or within
the test's ``resolution`` of a one-sided bound, is "no effect" — for "the fast model completes fewer
tasks", a difference of exactly 0 is no effect, not fewer.

**One verdict vocabulary** (:data:`VERDICTS`): true, false, depends, not identified. The claim's
verdict (``combine = "all"``): ``false`` when any part is false, else ``not identified`` when any
part is, else ``depends`` when any part depends, else ``true``. With ``combine = "each"`` the same rule
gives each arm's verdict, printed beside the claim's, which is the arms' common verdict, or
``depends`` when they differ; where the claim states a verdict per arm (``expected``: claim 2 says
fast mode *is* low batch and is *not* the other mechanisms), the claim's verdict is the conjunction,
by the same rule, of "this arm's verdict is the stated one" (:func:`as_stated`).

Pure: DataFrames and specs in, plain results out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from speedtrap.analysis.decisions import analyse_decision
from speedtrap.analysis.intervals import MIN_MEMBERS, two_intervals
from speedtrap.analysis.scenario_discovery import Box, box_agreement, cart_box
from speedtrap.analysis.stable_boxes import STABILITY_RULE, StableBox, stable_prim_box
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
MIN_FLIP_SHARE = 0.1
"""A part depends on the sampled assumptions when at least this share of the samples disagree with
the defaults (assumption: one sample in ten, the smallest box mass reported,
:data:`speedtrap.analysis.stable_boxes.MIN_BOX_MASS`), whether or not a stable box holds them."""
DISTANCE = "distance_from_stated_point"
"""The input added for a claim with a stated point (module docstring, step 3)."""
DISTANCE_LABEL = "distance from the stated point (0: at it; 1: the neighbourhood's edge)"
NOT_IDENTIFIED = "not identified"
NO_ENSEMBLE = "not available: the scenario's own single parameter set (--single), not the calibrated ensemble"
"""The behavioural-uncertainty slot of a verdict without a calibrated ensemble."""
VERDICTS = ("true", "false", "depends", NOT_IDENTIFIED)
TIE_RULE = (
    "a statistic holds only strictly inside the region: on a bound, or within the test's resolution "
    "of a one-sided bound, it is no effect"
)
RULE = (
    f"true/false: the 95% seed interval at the defaults and the behavioural interval over the "
    f"calibrated ensemble lie inside/outside the region and fewer than {MIN_FLIP_SHARE:.0%} of the "
    f"sampled assumptions disagree; not identified: it depends on the samples and an input that "
    f"decides it (when every sample disagrees, one whose defaults sit at an end of its range; else "
    f"its stable box's; else the highest EVPPI) is not identified by the fitted data; "
    f"depends otherwise. Tie rule: {TIE_RULE}. Boxes: {STABILITY_RULE}"
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
    stable: bool = False
    """Whether the PRIM box survives resampling (``flip`` holds its statistics either way)."""
    decision: dict[str, Any] | None = None
    """For a part that depends on the samples: the share holding, EVPPI per input, the boundary."""
    identify: list[str] = field(default_factory=list)
    """For a part not identified: what would identify each deciding input."""


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
    quick: bool = False
    """A quick (small) variant: its verdicts are not the study's."""
    scenario: dict[str, Any] = field(default_factory=dict)
    """The scenario run: its name, why it is not the headline one, and how it differs from it."""
    stated: dict[str, Any] | None = None
    """The claim's stated point, where it states one (the defaults are that point)."""

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON (NaN stays NaN: the caller writes it as null)."""
        return asdict(self)


def in_region(value: float, region: tuple[float, float]) -> bool:
    """Whether ``value`` lies strictly inside ``region`` (the tie rule, :data:`TIE_RULE`)."""
    low, high = region
    return bool(low < value < high) if not math.isnan(value) else False


def margin(value: float, region: tuple[float, float]) -> float:
    """How far ``value`` lies inside ``region`` (the statistic's unit; ≤ 0 outside or on a bound)."""
    low, high = region
    return float(min(value - low, high - value))


def at_defaults(found: Effect, region: tuple[float, float]) -> str:
    """``holds``, ``fails`` or ``unresolved``: where the defaults' 95% interval lies against the
    region (one value without an interval: where the mean lies; no value: unresolved)."""
    low, high = (found.ci_low, found.ci_high) if not math.isnan(found.ci_low) else (found.mean, found.mean)
    if math.isnan(low):
        return "unresolved"
    r_low, r_high = region
    if r_low < low and high < r_high:
        return "holds"
    if high <= r_low or low >= r_high:
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


def _boxes(x: pd.DataFrame, cases: np.ndarray) -> tuple[StableBox | None, Box | None]:
    if x.shape[1] == 0 or len(cases) < 2 or not cases.any():
        return None, None
    return stable_prim_box(x, cases), cart_box(x, cases)


def _counts(found: StableBox | None) -> bool:
    """Whether a box is reported: stable, and large and dense enough among the disagreeing samples."""
    box = found.box if found is not None and found.stable else None
    if box is None or math.isnan(box.coverage) or math.isnan(box.density):
        return False
    return (
        box.coverage >= MIN_FLIP_COVERAGE
        and box.density >= MIN_FLIP_DENSITY
        and round(box.density * box.n_inside) >= MIN_FLIP_SAMPLES
    )


def distance_from_stated(claim: ClaimSpec, inputs: pd.DataFrame) -> np.ndarray | None:
    """Each sample's distance from the claim's stated point (module docstring), or ``None``."""
    if claim.stated is None:
        return None
    parts = []
    for v in claim.stated.values:
        if v.scenario_value is None or v.path not in inputs:
            return None
        x = inputs[v.path].to_numpy(dtype=float)
        parts.append(np.abs(np.log(x / v.scenario_value)) / math.log(v.spread))
    return np.max(np.vstack(parts), axis=0)


def _decision(x: pd.DataFrame, margins: np.ndarray, labels: dict[str, str]) -> dict[str, Any] | None:
    """The decision analysis of the samples (module docstring, step 5)."""
    if x.shape[1] == 0 or not len(margins):
        return None
    index = pd.RangeIndex(len(margins))
    stakes = np.where(margins > 0, 0.5, -0.5)  # module docstring, step 5
    found = analyse_decision("holds", pd.Series(stakes, index=index), x.set_index(index))
    ranked = found.evppi.dropna()
    boundary = None
    if len(ranked) and found.share_paying not in (0.0, 1.0):
        chosen = list(ranked.index[:2])
        boundary = stable_prim_box(x[chosen], margins > 0)
    return {
        "share_holding": found.share_paying,
        "share_low": found.share_low,
        "share_high": found.share_high,
        "interval": "Wilson 95% interval over the samples",
        "evppi": {str(k): float(v) for k, v in found.evppi.items()},
        "evppi_unit": "gain in the probability of calling a sample's verdict right by knowing the input",
        "measure_first": [labels.get(str(k), str(k)) for k in ranked.index[:2] if ranked[k] > 0],
        "boundary": boundary.as_dict() if boundary is not None else None,
        "boundary_words": boundary.describe("holds", labels) if boundary is not None else None,
        "notes": list(found.notes),
    }


def _defaults_value(claim: ClaimSpec, path: str) -> float | None:
    node: Any = claim.scenario.model_dump(mode="python")
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return float(node) if isinstance(node, int | float) and not isinstance(node, bool) else None


def _at_range_end(claim: ClaimSpec, paths: Sequence[str]) -> list[str]:
    """Those of ``paths`` whose value at the defaults is an end of their sampled range (a fitted value
    at a bound): when every sample disagrees with the defaults, moving off that end is what flips it."""
    ends = []
    for f in claim.sampled:
        if f.path in paths and f.range is not None and _defaults_value(claim, f.path) in f.range:
            ends.append(f.path)
    return ends


def _deciding(
    claim: ClaimSpec,
    found: StableBox | None,
    decision: dict[str, Any] | None,
    unknown: Sequence[str],
    *,
    all_disagree: bool,
) -> list[str]:
    """The inputs that decide a part: when every sample disagrees with the defaults, the unidentified
    inputs whose defaults sit at an end of their range (moving off it is what every sample does);
    else its stable box's restricted inputs; else the input of highest EVPPI."""
    if all_disagree:
        ends = _at_range_end(claim, unknown)
        if ends:
            return ends
    if found is not None and found.stable and found.box is not None and found.box.bounds:
        return [b.path for b in found.box.bounds]
    if decision is not None:
        ranked = [(k, v) for k, v in decision["evppi"].items() if math.isfinite(v) and v > 0]
        if ranked:
            return [max(ranked, key=lambda kv: kv[1])[0]]
    return []


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
    distance = distance_from_stated(claim, inputs) if len(sampled) else None
    if distance is not None:
        x[DISTANCE] = distance
    what = "fails" if status == "holds" else "holds"
    cases = ~holds if status == "holds" else holds
    labels = claim.labels() | {DISTANCE: DISTANCE_LABEL}
    prim, cart = _boxes(x, cases)
    counted = _counts(prim)
    depends_on = []
    if status == "unresolved":
        depends_on.append("seed noise at the defaults")
    if across == "unresolved" or (across is not None and status != "unresolved" and across != status):
        depends_on.append("the calibrated behaviour (the members disagree)")
    if status == "unresolved":  # no side at the defaults: the samples matter when they are mixed
        share = float(holds.mean()) if len(holds) else 0.0
        on_samples = min(share, 1 - share) >= MIN_FLIP_SHARE
        seen = f"{share:.0%} of samples hold"
    else:
        share = float(cases.mean()) if len(cases) else 0.0
        on_samples = share >= MIN_FLIP_SHARE
        seen = f"{share:.0%} of samples disagree"
    if on_samples:
        depends_on.append(f"the sampled assumptions ({seen}; {'a' if counted else 'no'} stable box)")
    decision = None
    if on_samples:
        decision = _decision(x, np.array([margin(v, region) for v in sampled.to_numpy()]), labels)
    if not depends_on and status in ("holds", "fails"):
        verdict = "true" if status == "holds" else "false"
    else:
        verdict = "depends"
    identify: list[str] = []
    if on_samples:
        unknown = {f.path: f for f in claim.sampled if not f.identified}
        every = status != "unresolved" and bool(cases.all())
        reported_box = prim if counted else None
        deciding = _deciding(claim, reported_box, decision, list(unknown), all_disagree=every)
        deciding = [p for p in deciding if p in unknown]
        if deciding:
            verdict = NOT_IDENTIFIED
            identify = [
                f"{labels.get(p, p)}: {unknown[p].identify or 'no measurement named'}" for p in deciding
            ]
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
        flip=prim.box.as_dict() if prim is not None and prim.box is not None else None,
        flip_words=prim.describe(what, labels) if prim is not None else None,
        cart=cart.as_dict() if cart is not None else None,
        cart_words=cart.describe(what, labels) if cart is not None else None,
        agreement=(
            box_agreement(prim.box, cart, x)
            if prim is not None and prim.box is not None and prim.stable and cart is not None
            else None
        ),
        stable=bool(prim is not None and prim.stable),
        decision=decision,
        identify=identify,
    )


def combine(verdicts: Sequence[str]) -> str:
    """A conjunction's verdict: false if any is false, else not identified if any is, else depends if
    any depends, else true."""
    unknown = [v for v in verdicts if v not in VERDICTS]
    if unknown:
        raise ValueError(f"not a verdict: {', '.join(map(repr, unknown))} (verdicts: {', '.join(VERDICTS)})")
    for verdict in ("false", NOT_IDENTIFIED, "depends"):
        if verdict in verdicts:
            return verdict
    return "true"


def as_stated(verdict: str, stated: str) -> str:
    """Whether an arm's ``verdict`` is the one the claim ``stated`` for it ("true" or "false"), as a
    verdict: the same for a stated true, true and false swapped for a stated false; depends and not
    identified stay what they are."""
    if stated not in ("true", "false"):
        raise ValueError(f"a stated verdict is true or false, got {stated!r}")
    swap = {"true": "false", "false": "true"}
    return verdict if stated == "true" else swap.get(verdict, verdict)


def tested_arms(claim: ClaimSpec, test: ClaimTest) -> list[int]:
    """The arms a test judges (:meth:`ClaimSpec.judged_arms`)."""
    return claim.judged_arms(test)


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
    elif claim.expected is not None:
        verdict = combine([as_stated(v, claim.expected[arm]) for arm, v in arm_verdicts.items()])
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
    "DISTANCE",
    "DISTANCE_LABEL",
    "MIN_FLIP_COVERAGE",
    "MIN_FLIP_DENSITY",
    "MIN_FLIP_SAMPLES",
    "MIN_FLIP_SHARE",
    "NOT_IDENTIFIED",
    "NO_ENSEMBLE",
    "RULE",
    "SAMPLE",
    "TIE_RULE",
    "VERDICTS",
    "ClaimResult",
    "Effect",
    "Part",
    "Reported",
    "at_defaults",
    "combine",
    "defaults_effect",
    "distance_from_stated",
    "effect",
    "judge_claim",
    "judge_part",
    "margin",
    "statistic_values",
    "tested_arms",
]
