"""Global sensitivity analysis through the experiment engine: sample, run, average, analyse.

:func:`run_sobol` and :func:`run_morris` draw a SALib sample over an experiment's factors
(:mod:`speedtrap.analysis.sensitivity`), run every point through :func:`run_experiment` with
``points=`` (so the executors, the result store and resuming work unchanged), average each outcome
over the replication seeds per point (common random numbers: every point runs the same seeds) and
return the indices with the raw runs. Results are stored under ``<results_dir>/<name>-sobol-n<n>/``
(``-morris-n<n>``; second-order samples add ``-s2``, Morris options ``-best<k>`` / ``-levels<p>``),
apart from the experiment's own design and from samples of other sizes. A rerun with another sample
seed or model finds the store holding other runs and says so (``StoreMismatchError``).

The headline question has its own model function, :func:`productivity_gap`: the same scenario and
seed on ``wafer-distilled`` and on ``gpu-batched`` (``Scenario.with_backend``), returning the
differences. Its factors name fields of either backend (``backends.wafer-distilled.decode_speedup``),
so the base scenario must hold both: ``experiments/scenarios/two_backends.toml`` does (its policy is
a placeholder; the model function serves each run by one backend). Example::

    spec = Experiment.from_toml("experiments/sweeps/sensitivity.toml")
    result = run_sobol(spec, model=productivity_gap, outcome="gap_tasks_per_dev_day",
                       executor="processes")
    result.indices          # outcome, factor, S1, S1_conf, ST, ST_conf
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from speedtrap.analysis.emulator import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_SOBOL_N,
    MIN_Q2,
    Emulator,
    emulated_sobol,
    emulator_inputs,
    predictive_q2,
    training_sample,
)
from speedtrap.analysis.sensitivity import (
    ATTRS_KEY,
    DEFAULT_MORRIS_LEVELS,
    morris_indices,
    morris_sample,
    output_vector,
    points_from_unit,
    sobol_indices,
    sobol_sample,
)
from speedtrap.config.experiment import Experiment
from speedtrap.config.scenario import Scenario
from speedtrap.experiments.executors import Executor
from speedtrap.experiments.runner import Model, run_experiment
from speedtrap.models.workflow import simulate_summary

WAFER = "wafer-distilled"
"""The fast, less accurate backend of the headline question (docs/design.md §1)."""
BATCHED = "gpu-batched"
"""The baseline backend: the full frontier model at large batch (docs/design.md §1)."""

GAP_KEYS: tuple[str, ...] = (
    "tasks_per_dev_day",
    "usd_per_task",
    "usd_per_dev_day",
    "waiting_share",
    "fixing_share",
)
"""Run-summary outcomes that :func:`backend_gap` compares (units in :mod:`speedtrap.models.results`)."""


class SensitivityResult(NamedTuple):
    """What :func:`run_sobol` / :func:`run_morris` return (unpacks as ``indices, table, points``).

    * ``indices``: one row per outcome × factor (``outcome`` first, then the analysis' columns);
    * ``table``: the runs, one row per point × replication (:func:`run_experiment`'s table);
    * ``points``: the sample (``point`` and one column per factor, with its ``attrs``).
    """

    indices: pd.DataFrame
    table: pd.DataFrame
    points: pd.DataFrame


def backend_gap(scenario: Scenario, seed: int, backend: str, baseline: str) -> dict[str, float]:
    """Run ``scenario`` with ``seed`` served by ``backend`` and by ``baseline`` (same task stream).

    For each key ``k`` of :data:`GAP_KEYS`: ``backend_<k>``, ``baseline_<k>`` and ``gap_<k>`` =
    backend − baseline (units of ``k``), plus ``relative_gap_tasks_per_dev_day`` = backend /
    baseline − 1 (unitless; NaN when the baseline completed nothing). NaN outcomes (``usd_per_task``
    without a completed task) give NaN gaps.
    """
    ours = simulate_summary(scenario.with_backend(backend), seed)
    base = simulate_summary(scenario.with_backend(baseline), seed)
    out: dict[str, float] = {}
    for key in GAP_KEYS:
        out[f"gap_{key}"] = ours[key] - base[key]
    base_rate = base["tasks_per_dev_day"]
    out["relative_gap_tasks_per_dev_day"] = (
        ours["tasks_per_dev_day"] / base_rate - 1.0 if base_rate > 0 else math.nan
    )
    for key in GAP_KEYS:
        out[f"backend_{key}"] = ours[key]
        out[f"baseline_{key}"] = base[key]
    return out


def productivity_gap(scenario: Scenario, seed: int) -> dict[str, float]:
    """The headline model: :func:`backend_gap` of ``wafer-distilled`` (backend) against ``gpu-batched``
    (baseline). ``gap_tasks_per_dev_day`` > 0 means the fast, less accurate backend completes more
    tasks per developer-day; ``gap_usd_per_task`` is the US$ per completed task difference.

    Module-level, so process and Dask executors can pickle it. Factors may change either backend's
    fields as long as the base scenario holds both (``experiments/scenarios/two_backends.toml``).
    """
    return backend_gap(scenario, seed, WAFER, BATCHED)


def _n(spec: Experiment, n: int | None) -> int:
    if n is not None:
        return n
    if spec.design.points is None:
        raise ValueError(
            "give n (base samples or trajectories), or use a sobol/lhs design whose points set it"
        )
    return spec.design.points


def _renamed(spec: Experiment, suffix: str) -> Experiment:
    data = spec.model_dump(mode="python")
    data["name"] = f"{spec.name}-{suffix}"
    data["scenario"] = spec.scenario
    return Experiment.model_validate(data)


def point_means(table: pd.DataFrame, outcomes: Sequence[str]) -> pd.DataFrame:
    """Per design point, the mean of each outcome over its replications (NaN runs left out), indexed
    by point number."""
    missing = [o for o in outcomes if o not in table.columns]
    if missing:
        known = table.attrs.get("outcomes") or [c for c in table.columns if c not in ("point", "seed")]
        raise KeyError(f"no outcome {missing[0]!r} in the runs (outcomes: {', '.join(map(str, known))})")
    return table.groupby("point", sort=True)[list(outcomes)].mean()


def _outcomes(outcome: str | Sequence[str]) -> list[str]:
    outcomes = [outcome] if isinstance(outcome, str) else list(outcome)
    if not outcomes:
        raise ValueError("name at least one outcome")
    return outcomes


def _run(
    spec: Experiment,
    points: pd.DataFrame,
    suffix: str,
    model: Model,
    executor: str | Executor,
    workers: int | None,
    scheduler: str | None,
    results_dir: str | Path | None,
    progress: bool,
) -> pd.DataFrame:
    return run_experiment(
        _renamed(spec, suffix),
        executor=executor,
        workers=workers,
        scheduler=scheduler,
        results_dir=results_dir,
        progress=progress,
        model=model,
        points=points,
    )


def run_sobol(
    spec: Experiment,
    n: int | None = None,
    *,
    model: Model = simulate_summary,
    outcome: str | Sequence[str] = "tasks_per_dev_day",
    executor: str | Executor = "serial",
    workers: int | None = None,
    scheduler: str | None = None,
    results_dir: str | Path | None = "results",
    progress: bool = True,
    calc_second_order: bool = False,
    confidence: float = 0.95,
    seed: int | None = None,
) -> SensitivityResult:
    """Sobol' indices of ``outcome`` (one name or several) over ``spec``'s factors, by simulation.

    ``n`` base samples (a power of two; default ``spec.design.points``) give ``n·(D + 2)`` design
    points, each run ``spec.replications`` times with the experiment's replication seeds by
    ``model`` on ``executor``; runs are stored in ``<results_dir>/<spec.name>-sobol-n<n>/`` and a
    rerun resumes. ``seed`` seeds the sample (default ``spec.design.seed``). The indices (columns
    ``outcome, factor, S1, S1_conf, ST, ST_conf``; ``_conf`` = half-width of the ``confidence``
    interval) are of the per-point means over replications (see :mod:`speedtrap.analysis.sensitivity`
    on what the remaining noise does).
    """
    n = _n(spec, n)
    outcomes = _outcomes(outcome)
    points = sobol_sample(spec, n, calc_second_order=calc_second_order, seed=seed)
    suffix = f"sobol-n{n}" + ("-s2" if calc_second_order else "")
    table = _run(spec, points, suffix, model, executor, workers, scheduler, results_dir, progress)
    return SensitivityResult(_sobol_by_outcome(spec, points, table, outcomes, confidence), table, points)


def _sobol_by_outcome(
    spec: Experiment, points: pd.DataFrame, table: pd.DataFrame, outcomes: Sequence[str], confidence: float
) -> pd.DataFrame:
    """The Sobol' indices of each outcome's per-point means over the Saltelli sample ``points``
    (second-order or not as the sample was drawn), ``outcome`` first."""
    means = point_means(table, outcomes)
    frames = []
    for name in outcomes:
        indices = sobol_indices(points, means[name], spec, confidence)
        indices.insert(0, "outcome", name)
        frames.append(indices)
    return pd.concat(frames, ignore_index=True)


def sobol_indices_from_first(
    result: SensitivityResult, spec: Experiment, n: int, *, confidence: float = 0.95
) -> pd.DataFrame:
    """:func:`run_sobol`'s indices recomputed from the first ``n`` base samples of its Saltelli
    sample (``n`` a power of two, 2 ≤ n ≤ the sample's): the first n base samples of a sample of N
    are the sample of n, so this is the study at size n without running anything — with N/2, the
    convergence check of a direct study (how much the indices and their half-widths move from N/2
    to N). Columns as :func:`run_sobol`'s indices."""
    settings = result.points.attrs.get(ATTRS_KEY) or {}
    if settings.get("method") != "sobol":
        raise ValueError("these runs are not a Sobol' (Saltelli) study: pass run_sobol's result")
    size = int(settings["n"])
    if n < 2 or n & (n - 1) or n > size:
        raise ValueError(f"n must be a power of two between 2 and the study's {size} base samples, got {n}")
    d = len(spec.factors)
    rows = n * (2 * d + 2 if settings.get("calc_second_order") else d + 2)
    outcomes = list(dict.fromkeys(result.indices["outcome"]))
    return _sobol_by_outcome(spec, result.points.iloc[:rows], result.table, outcomes, confidence)


def index_convergence(smaller: pd.DataFrame, larger: pd.DataFrame) -> pd.DataFrame:
    """How far a direct Sobol' study's indices still move with its size: per outcome, the widest
    half-width of an S1 or ST (``widest_conf_smaller``, ``widest_conf_larger``) and the largest change
    of an S1 or ST (``max_change``) between ``smaller`` and ``larger`` (indices tables of the same
    factors and outcomes, e.g. :func:`sobol_indices_from_first` at N/2 and :func:`run_sobol` at N).
    Shares of the variance (unitless)."""
    both = smaller.merge(larger, on=["outcome", "factor"], suffixes=("_a", "_b"))
    if both.empty:
        raise ValueError("the two index tables share no outcome and factor")
    rows = []
    for outcome, group in both.groupby("outcome", sort=False):
        rows.append(
            {
                "outcome": outcome,
                "widest_conf_smaller": float(group[["S1_conf_a", "ST_conf_a"]].to_numpy().max()),
                "widest_conf_larger": float(group[["S1_conf_b", "ST_conf_b"]].to_numpy().max()),
                "max_change": float(
                    np.abs(group[["S1_b", "ST_b"]].to_numpy() - group[["S1_a", "ST_a"]].to_numpy()).max()
                ),
            }
        )
    return pd.DataFrame(rows)


def run_morris(
    spec: Experiment,
    n: int | None = None,
    *,
    model: Model = simulate_summary,
    outcome: str | Sequence[str] = "tasks_per_dev_day",
    executor: str | Executor = "serial",
    workers: int | None = None,
    scheduler: str | None = None,
    results_dir: str | Path | None = "results",
    progress: bool = True,
    num_levels: int = DEFAULT_MORRIS_LEVELS,
    optimal_trajectories: int | None = None,
    confidence: float = 0.95,
    seed: int | None = None,
) -> SensitivityResult:
    """Morris screening of ``outcome`` over ``spec``'s factors, by simulation.

    ``n`` trajectories (default ``spec.design.points``) of ``D + 1`` points each, run like
    :func:`run_sobol` and stored in ``<results_dir>/<spec.name>-morris-n<n>/``. The indices (columns
    ``outcome, factor, mu, mu_star, mu_star_conf, sigma``) are in outcome units per full range of the
    factor, computed from the per-point means over replications.
    """
    n = _n(spec, n)
    outcomes = _outcomes(outcome)
    points = morris_sample(
        spec, n, num_levels=num_levels, optimal_trajectories=optimal_trajectories, seed=seed
    )
    suffix = f"morris-n{n}" + (f"-best{optimal_trajectories}" if optimal_trajectories else "")
    suffix += f"-levels{num_levels}" if num_levels != DEFAULT_MORRIS_LEVELS else ""
    table = _run(spec, points, suffix, model, executor, workers, scheduler, results_dir, progress)
    means = point_means(table, outcomes)
    frames = []
    for name in outcomes:
        indices = morris_indices(points, means[name], spec, confidence, num_levels=num_levels)
        indices.insert(0, "outcome", name)
        frames.append(indices)
    return SensitivityResult(pd.concat(frames, ignore_index=True), table, points)


SCREENING_TRAJECTORIES = 16
"""Morris trajectories of ``experiments/screening.py``'s full run (16 × 9 points × 2 replications =
288 calls of :func:`productivity_gap`)."""

DEFAULT_TRAINING_RUNS = 256
"""Training points of :func:`run_emulated_sobol`: 32 per input for the eight inputs of
``sensitivity.toml``, about three times the ``n = 10·d`` that Loeppky, Sacks & Welch (2009,
"Choosing the sample size of a computer experiment: a practical guide", Technometrics 51(4))
recommend to start a GP emulator with; the indices from the first half show the convergence."""


class EmulatedSensitivityResult(NamedTuple):
    """What :func:`run_emulated_sobol` returns.

    * ``indices``: one row per outcome × training size × factor: ``outcome``, ``n_train``, then
      :data:`speedtrap.analysis.emulator.EMULATOR_COLUMNS` (S1, ST and their percentile bounds);
    * ``diagnostics``: one row per outcome × training size: ``q2`` (cross-validated), ``noise_share``,
      ``mc_half_width``, ``trustworthy`` (q2 ≥ :data:`MIN_Q2`);
    * ``table``: the runs (:func:`run_experiment`'s table); ``points``: the training design;
    * ``emulators``: the emulator fitted to all points, per outcome (to predict other runs).
    """

    indices: pd.DataFrame
    diagnostics: pd.DataFrame
    table: pd.DataFrame
    points: pd.DataFrame
    emulators: dict[str, Emulator]


def run_emulated_sobol(
    spec: Experiment,
    n: int = DEFAULT_TRAINING_RUNS,
    *,
    model: Model = simulate_summary,
    outcome: str | Sequence[str] = "tasks_per_dev_day",
    executor: str | Executor = "serial",
    workers: int | None = None,
    scheduler: str | None = None,
    results_dir: str | Path | None = "results",
    progress: bool = True,
    sobol_n: int = DEFAULT_SOBOL_N,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    confidence: float = 0.95,
    seed: int | None = None,
) -> EmulatedSensitivityResult:
    """Sobol' indices of ``outcome`` over ``spec``'s factors through a GP emulator of the simulation
    (:func:`speedtrap.analysis.emulator.emulated_sobol`).

    Runs ``n`` points of a scrambled Sobol' sequence (a power of two ≥ 8; seeded by ``seed``, default
    ``spec.design.seed``), each ``spec.replications`` times, by ``model`` on ``executor``; runs are
    stored in ``<results_dir>/<spec.name>-emulator-n<n>/`` and a rerun resumes. Emulators are fitted
    to the per-point means of the first ``n/2`` points and of all ``n`` (the sequence is nested, so
    both are balanced designs): the two sets of indices show how far the design size still moves
    them. ``sobol_n``, ``bootstrap``, ``confidence``: see ``emulated_sobol``.
    """
    if n < 8:
        raise ValueError(f"n must be at least 8 training points (its half is fitted too), got {n}")
    outcomes = _outcomes(outcome)
    sample_seed = spec.design.seed if seed is None else seed
    unit = training_sample(n, len(spec.factors), seed=sample_seed)
    points = points_from_unit(spec, unit)
    points.attrs[ATTRS_KEY] = {"method": "emulator", "n": n}
    table = _run(spec, points, f"emulator-n{n}", model, executor, workers, scheduler, results_dir, progress)
    means = point_means(table, outcomes)
    index_frames, rows = [], []
    emulators: dict[str, Emulator] = {}
    for name in outcomes:
        y = output_vector(points, means[name])
        for size in (n // 2, n):
            result = emulated_sobol(
                spec.factors,
                unit[:size],
                y[:size],
                n=sobol_n,
                bootstrap=bootstrap,
                confidence=confidence,
                seed=sample_seed,
            )
            emulators[name] = result.emulator  # the last (all points) stays
            frame = result.indices.copy()
            frame.insert(0, "n_train", size)
            frame.insert(0, "outcome", name)
            index_frames.append(frame)
            rows.append(
                {
                    "outcome": name,
                    "n_train": size,
                    "q2": result.q2,
                    "noise_share": result.noise_share,
                    "mc_half_width": result.mc_half_width,
                    "trustworthy": result.trustworthy,
                }
            )
    return EmulatedSensitivityResult(
        pd.concat(index_frames, ignore_index=True), pd.DataFrame(rows), table, points, emulators
    )


def external_q2(
    spec: Experiment, result: EmulatedSensitivityResult, check: SensitivityResult
) -> dict[str, float]:
    """Each outcome's emulator (``result``, over ``spec``'s factors) checked at another design's runs
    of the same factors: Q² at the per-point means of ``check`` (e.g. :func:`run_morris`'s, whose
    points reach the corners of the input space that a Sobol' sequence rarely does). Outcomes
    ``check`` lacks are left out."""
    settings = check.points.attrs.get(ATTRS_KEY) or {}
    if "unit" not in settings:
        raise ValueError("the check's points lack their unit coordinates (use run_morris's result)")
    unit = np.asarray(settings["unit"], dtype=float)
    paths = [f.path for f in spec.factors]
    checked = [c for c in check.points.columns if c != "point"]
    if checked != paths:
        raise ValueError(f"the check varies {checked}, the emulators {paths}")
    x = emulator_inputs(spec.factors, unit)
    out = {}
    for name, emulator in result.emulators.items():
        if name in check.table.columns:
            means = point_means(check.table, [name])[name]
            out[name] = predictive_q2(emulator, x, output_vector(check.points, means))
    return out


def compare_direct(emulated: EmulatedSensitivityResult, direct: SensitivityResult) -> pd.DataFrame:
    """The emulated indices (largest training size) beside a direct Sobol' study's of the same
    factors and outcomes (:func:`run_sobol`): per outcome and factor, ``direct_S1``,
    ``direct_S1_conf``, ``emulated_S1`` with its interval ``emulated_S1_low`` / ``emulated_S1_high``
    (likewise ST), ``S1_inside`` / ``ST_inside``: whether the emulated index lies within the direct
    study's confidence interval (index ± half-width), and ``S1_overlap`` / ``ST_overlap``: whether
    the two intervals overlap (the weaker check, which counts both studies' uncertainty)."""
    size = emulated.indices["n_train"].max()
    ours = emulated.indices[emulated.indices["n_train"] == size].set_index(["outcome", "factor"])
    theirs = direct.indices.set_index(["outcome", "factor"])
    common = theirs.index.intersection(ours.index)
    if common.empty:
        raise ValueError("the direct study and the emulators share no outcome and factor")
    table = pd.DataFrame(index=common)
    for key in ("S1", "ST"):
        table[f"direct_{key}"] = theirs.loc[common, key]
        table[f"direct_{key}_conf"] = theirs.loc[common, f"{key}_conf"]
        table[f"emulated_{key}"] = ours.loc[common, key]
        table[f"emulated_{key}_low"] = ours.loc[common, f"{key}_low"]
        table[f"emulated_{key}_high"] = ours.loc[common, f"{key}_high"]
        direct, half = table[f"direct_{key}"], table[f"direct_{key}_conf"]
        table[f"{key}_inside"] = (table[f"emulated_{key}"] - direct).abs() <= half
        table[f"{key}_overlap"] = (table[f"emulated_{key}_low"] <= direct + half) & (
            table[f"emulated_{key}_high"] >= direct - half
        )
    return table.reset_index()


def emulated_finding(result: EmulatedSensitivityResult, outcome: str, *, title: str) -> str:
    """:func:`run_emulated_sobol`'s indices of ``outcome`` in words, from the largest training size:
    each input's first-order and total share of the variance (%, with the percentile bounds), the
    share left to interactions (1 − ΣS1), the cross-validated Q², how much the indices moved from
    half the training runs (largest change of an S1 or ST, in percentage points) and the widest
    interval at both sizes."""
    indices = result.indices[result.indices["outcome"] == outcome]
    if indices.empty:
        raise KeyError(f"no emulated indices for outcome {outcome!r}")
    sizes = sorted(indices["n_train"].unique())
    full = indices[indices["n_train"] == sizes[-1]].sort_values("ST", ascending=False)
    diag = result.diagnostics.set_index(["outcome", "n_train"]).loc[(outcome, sizes[-1])]

    def pct(v: float) -> str:
        return f"{100 * v:.0f}"

    parts = [
        f"{factor_label(str(r.factor))} {pct(r.S1)}% [{pct(r.S1_low)}–{pct(r.S1_high)}] alone, "
        f"{pct(r.ST)}% [{pct(r.ST_low)}–{pct(r.ST_high)}] in all"
        for r in full.itertuples()
        if r.ST_high >= 0.02
    ]
    small = [factor_label(str(r.factor)) for r in full.itertuples() if r.ST_high < 0.02]
    text = (
        f"Gap in {title} (emulator of {sizes[-1]} runs, held-out Q² = {diag['q2']:.2f}; share of its "
        f"variance over the inputs' ranges, 95% bootstrap interval): {'; '.join(parts)}."
    )
    if small:
        text += f" Under 2% in all: {', '.join(small)}."
    text += f" Interactions: {pct(1.0 - float(full['S1'].sum()))}% (1 − ΣS1)."
    if len(sizes) > 1:
        half = indices[indices["n_train"] == sizes[0]].set_index("factor")
        moved = max(float((full.set_index("factor")[key] - half[key]).abs().max()) for key in ("S1", "ST"))
        widths = [
            max(float((rows[f"{key}_high"] - rows[f"{key}_low"]).max()) for key in ("S1", "ST"))
            for rows in (half, full)
        ]
        text += (
            f" From {sizes[0]} runs the indices moved by at most {100 * moved:.1f} pp and the widest "
            f"interval narrowed from {100 * widths[0]:.1f} to {100 * widths[1]:.1f} pp."
        )
    if not bool(diag["trustworthy"]):
        text += (
            f" Q² < {MIN_Q2}: the emulator does not predict held-out runs well; these indices cannot "
            "mean much."
        )
    return text


SCREENING_OUTCOMES: dict[str, tuple[str, str, float]] = {
    "gap_tasks_per_dev_day": ("tasks per developer-day", "tasks per developer-day", 1.0),
    "gap_usd_per_task": ("US$ per task", "US$ per task", 1.0),
    "gap_waiting_share": ("waiting share", "pp of time", 100.0),
    "gap_fixing_share": ("fixing share", "pp of time", 100.0),
}
"""Outcomes of :func:`productivity_gap` that ``experiments/screening.py`` screens: title, unit of
the shown numbers and the scale from the run summary's unit to it (shares: fractions → pp)."""


def screening_table(indices: pd.DataFrame) -> pd.DataFrame:
    """:func:`run_morris`'s indices of the :data:`SCREENING_OUTCOMES` in the units shown (μ, μ*, its
    half-width and σ times each outcome's scale), with a ``unit`` column."""
    table = indices[indices["outcome"].isin(SCREENING_OUTCOMES)].copy()
    table["unit"] = ""
    for outcome, (_, unit, scale) in SCREENING_OUTCOMES.items():
        rows = table["outcome"] == outcome
        table.loc[rows, ["mu", "mu_star", "mu_star_conf", "sigma"]] *= scale
        table.loc[rows, "unit"] = unit
    return table


def factor_label(path: str) -> str:
    """A short name for a factor path: its last two parts (``review.detect_prob``)."""
    return ".".join(path.split(".")[-2:])


def screening_finding(indices: pd.DataFrame, outcome: str, *, unit: str) -> str:
    """The Morris screening of ``outcome`` in words: the inputs ranked by μ* (mean absolute
    elementary effect over each input's full range, in ``unit``: e.g. :func:`screening_table`'s) with
    the half-widths of their intervals, the direction where the effects agree in sign (|μ| ≥ 0.9 μ*),
    which inputs cannot be told apart from the strongest (intervals overlapping its interval) and
    which act nonlinearly or through interactions (σ > μ*).

    ``indices``: :func:`run_morris`'s, with an ``outcome`` column. Morris ranks inputs; it does not
    apportion the output's variance (Sobol' indices do).
    """
    rows = indices[indices["outcome"] == outcome].sort_values("mu_star", ascending=False)
    if rows.empty:
        raise KeyError(f"no Morris indices for outcome {outcome!r}")
    mu_star = rows["mu_star"].to_numpy(float)
    conf = rows["mu_star_conf"].to_numpy(float)
    mu = rows["mu"].to_numpy(float)
    sigma = rows["sigma"].to_numpy(float)
    names = [factor_label(str(f)) for f in rows["factor"]]
    parts = []
    for name, m_star, c, m in zip(names, mu_star, conf, mu, strict=True):
        direction = ""
        if m_star > 0 and abs(m) >= 0.9 * m_star:
            direction = ", raising it raises the gap" if m > 0 else ", raising it lowers the gap"
        parts.append(f"{name} {m_star:.3g} ± {c:.2g}{direction}")
    top_low = mu_star[0] - conf[0]
    tied = [n for n, m, c in zip(names[1:], mu_star[1:], conf[1:], strict=True) if m + c >= top_low]
    lead = names[0] + (f" (not separable from {', '.join(tied)})" if tied else "")
    nonlinear = [n for n, m, s in zip(names, mu_star, sigma, strict=True) if s > m > 0]
    text = (
        f"Gap in {outcome.removeprefix('gap_')} ({unit}; Morris μ* per full input range ± 95% bootstrap "
        f"half-width): {'; '.join(parts)}. Strongest: {lead}."
    )
    if nonlinear:
        text += f" Nonlinear or interacting (σ > μ*): {', '.join(nonlinear)}."
    return text


__all__ = [
    "BATCHED",
    "DEFAULT_TRAINING_RUNS",
    "GAP_KEYS",
    "SCREENING_OUTCOMES",
    "SCREENING_TRAJECTORIES",
    "WAFER",
    "EmulatedSensitivityResult",
    "SensitivityResult",
    "backend_gap",
    "compare_direct",
    "emulated_finding",
    "external_q2",
    "factor_label",
    "index_convergence",
    "point_means",
    "productivity_gap",
    "run_emulated_sobol",
    "run_morris",
    "run_sobol",
    "screening_finding",
    "screening_table",
    "sobol_indices_from_first",
]
