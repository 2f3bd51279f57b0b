"""Joint calibration of the workflow model by history matching, run through the experiment engine.

Every uncertain behavioural parameter of ``validation/data/behaviour_parameters.csv`` is varied at
once, and every workflow target of ``validation/data/workflow_targets.csv`` (with its observation
error and model discrepancy) judges the result (:mod:`speedtrap.analysis.history_matching`).

**One parameter point, two scenarios.** The targets come from two calibration scenarios,
``headline`` and ``metr`` (the METR-like one is run with AI and by hand on the same seed), as
``speedtrap validate workflow`` runs them. The engine runs one scenario per design point, so the
design's base scenario is a *carrier* (:func:`carrier_scenario`: the METR scenario with the
headline's backends added, so every parameter path exists in it): the engine applies a point's
values to it, and the model function, :class:`CalibrationModel`, reads them back and applies each to
the calibration scenarios its ``scenarios`` column names (``both``, ``headline`` or ``metr``)
before running them (:func:`workflow_statistics`). The carrier itself is never simulated. The
result store's identity covers the carrier and the model's name; ``calibration.json`` in the
calibration's directory covers the rest (both scenarios, the parameter and target tables, the
settings), and a rerun with any of them changed is refused, naming what changed. The scenarios
enter it without the values the calibration varies (:meth:`CalibrationSetup.unvaried`): every run
replaces them, so the scenario files may hold a calibrated member's values.

**Waves, stored and resumable** (:func:`run_history_matching`). Everything lives in
``<results_dir>/<name>/``: wave ``k``'s design (``wave<k>-design.csv``: unit coordinates and
values, written before its runs), its runs (the engine's store ``wave<k>/``, with any executor),
and the final check (``check<K>-design.csv``, ``check<K>/``). A rerun reads the designs it finds
and the runs the stores hold, refits the emulators (seeded: the same fits) and computes only what
is missing; a rerun with more waves goes on from the last. The first design is a Latin hypercube
of the unit cube; each next one a maximin subset of the previous wave's non-implausible
candidates; each wave is fitted to every run so far that the earlier waves keep. The final check
runs a maximin subset of the last wave's candidates ``check_replications`` times and keeps the
points whose simulated means are within the cut-off of every target (seed noise of the mean in
place of the emulator's variance): that is the ensemble.

**Recorded outputs.** Beside the targets' statistics, every run records the headline's waiting and
fixing shares of the day (:data:`speedtrap.validation.workflow.HEADLINE_SHARES`); they rule nothing
out, and the wave and check tables carry their per-point means for the sensitivity report
(:mod:`speedtrap.experiments.share_sensitivity`).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from speedtrap.analysis.emulator import CV_FOLDS
from speedtrap.analysis.history_matching import (
    CUTOFF,
    DEFAULT_CANDIDATES,
    Parameter,
    Target,
    Wave,
    candidate_sample,
    history_matching_wave,
    non_implausible_mask,
    simulated_implausibility,
    space_filling_subset,
)
from speedtrap.config.experiment import Experiment
from speedtrap.config.scenario import Scenario
from speedtrap.experiments.executors import Executor, make_executor
from speedtrap.experiments.runner import run_experiment
from speedtrap.experiments.stage_designs import grown_check_design, stage_design
from speedtrap.validation.parameters import (
    applies_to,
    calibration_parameters,
    calibration_targets,
    load_parameters,
    scenario_value,
)
from speedtrap.validation.workflow import HEADLINE_SHARES, load_targets, run_statistics

__all__ = [
    "CHECK_REPLICATIONS",
    "DEFAULT_CHECK_POINTS",
    "DEFAULT_POINTS",
    "DEFAULT_WAVES",
    "QUICK",
    "CalibrationModel",
    "CalibrationSetup",
    "HistoryMatchingResult",
    "calibration_setup",
    "carrier_scenario",
    "run_history_matching",
    "workflow_statistics",
]

DEFAULT_WAVES = 3
"""Waves of a full calibration (assumption: Andrianakis et al. 2015 needed 9 for 96 inputs; three
waves of a few hundred runs is where the share ruled out per wave shows whether more pay)."""
DEFAULT_POINTS = 256
"""Design points per wave: about 10 per input for the 23 inputs (Loeppky, Sacks & Welch 2009's
n = 10·d), one run each (the emulators' noise term takes the seed noise)."""
DEFAULT_CHECK_POINTS = 100
"""Candidates of the last wave run for the final check: twice the ensemble of 50 the calibration
aims at, since some fail their simulated check."""
CHECK_REPLICATIONS = 4
"""Runs per checked point: the seed noise of their mean (s²/r) takes the emulator's place."""
QUICK: dict[str, int] = {
    "waves": 2,
    "points": 8,
    "check_points": 4,
    "check_replications": 2,
    "candidates": 4096,
    "restarts": 0,
    "folds": 2,
    "developers": 3,
    "days": 1,
}
"""The quick (smoke) size of ``experiments/calibrate.py --quick`` and ``validate workflow
--sensitivity --quick``: 8 points a wave of 3 developers × 1 day (seconds; its results mean nothing)."""
SCENARIOS = ("headline", "metr")
ENSEMBLE_AIM = 50
"""Members the calibration aims at: an ensemble of at least 50 non-implausible parameter sets, so that
the behavioural interval rests on more than a few sets."""


def workflow_statistics(headline: Scenario, metr: Scenario, seed: int) -> dict[str, float]:
    """Every workflow target's statistic for one seed: ``headline`` run once, ``metr`` with AI and
    by hand (as :func:`speedtrap.validation.workflow.run_statistics` runs them), one dict."""
    rows = run_statistics({"headline": headline, "metr": metr}, [seed])
    out: dict[str, float] = {}
    for row in rows.drop(columns=["scenario", "seed"]).to_dict(orient="records"):
        out.update({k: float(v) for k, v in row.items() if not pd.isna(v)})
    for key in rows.columns.drop(["scenario", "seed"]):
        out.setdefault(str(key), math.nan)
    return out


@dataclass(frozen=True)
class CalibrationModel:
    """The engine's model function for a calibration: reads each parameter's value from the
    (carrier) scenario it is given, applies it to the calibration scenarios it applies to and
    returns :func:`workflow_statistics` (picklable, for the processes and Dask executors)."""

    headline: Scenario
    metr: Scenario
    routes: tuple[tuple[str, tuple[str, ...]], ...]

    def scenarios(self, carrier: Scenario) -> dict[str, Scenario]:
        """The headline and METR scenarios with the parameter values of ``carrier`` applied."""
        values = {path: scenario_value(carrier, path) for path, _ in self.routes}
        out = {}
        for name, base in (("headline", self.headline), ("metr", self.metr)):
            overrides = {path: values[path] for path, scopes in self.routes if name in scopes}
            out[name] = base.with_overrides(overrides) if overrides else base
        return out

    def __call__(self, scenario: Scenario, seed: int) -> dict[str, float]:
        both = self.scenarios(scenario)
        return workflow_statistics(both["headline"], both["metr"], seed)


def carrier_scenario(scenarios: Mapping[str, Scenario]) -> Scenario:
    """The METR scenario with the headline's backends added (named ``calibration``): a scenario in
    which every parameter path of either calibration scenario exists, for the engine to apply
    design points to."""
    data = scenarios["metr"].model_dump(mode="python")
    data["backends"] = {**scenarios["headline"].model_dump(mode="python")["backends"], **data["backends"]}
    data["name"] = "calibration"
    return Scenario.model_validate(data)


def unvaried_scenario(base: Scenario, name: str, parameters: pd.DataFrame) -> Scenario:
    """``base`` (calibration scenario ``name``) with every parameter of ``parameters`` that applies
    to it set to its range's low end: what its runs depend on, since every run replaces those values
    (so a scenario file may hold a calibrated member's values without changing a calibration's
    identity or its stores')."""
    overrides = {
        str(row.path): float(row.low)
        for row in parameters.itertuples(index=False)
        if name in applies_to(str(row.scenarios))
    }
    return base.with_overrides(overrides) if overrides else base


@dataclass(frozen=True)
class CalibrationSetup:
    """What a calibration varies and compares: the ``parameters`` (with the tables they came from),
    the ``targets``, the model function and the carrier scenario."""

    parameters: tuple[Parameter, ...]
    targets: tuple[Target, ...]
    model: CalibrationModel
    carrier: Scenario
    parameter_table: pd.DataFrame
    target_table: pd.DataFrame

    def experiment(self, name: str, replications: int, seed: int) -> Experiment:
        """An experiment over the parameters on the carrier (its points are given explicitly)."""
        return Experiment.model_validate(
            {
                "name": name,
                "scenario": self.carrier,
                "factors": [p.factor.model_dump() for p in self.parameters],
                "design": {"kind": "lhs", "points": 1},  # unused: every wave passes its points
                "replications": replications,
                "seed": seed,
            }
        )

    def unvaried(self, name: str) -> Scenario:
        """Calibration scenario ``name`` with every parameter it varies set to its range's low end
        (:func:`unvaried_scenario`)."""
        base = self.model.headline if name == "headline" else self.model.metr
        return unvaried_scenario(base, name, self.parameter_table)

    def identity(self) -> dict[str, Any]:
        """What a calibration directory's runs depend on besides the settings (calibration.json)."""
        record = {
            "scenarios": {
                name: self.unvaried(name).model_dump(mode="json", exclude={"value"}) for name in SCENARIOS
            },
            "parameters": self.parameter_table[["path", "low", "high", "scale", "scenarios"]].to_dict(
                "records"
            ),
            "targets": [
                {
                    "name": t.name,
                    "value": t.value,
                    "obs_sd": t.obs_sd,
                    "discrepancy_sd": t.discrepancy_sd,
                    "scale": t.scale,  # the emulators', so the later waves' designs, depend on it
                }
                for t in self.targets
            ],
            "recorded": list(HEADLINE_SHARES),  # stores whose runs lack them are refused
        }
        result: dict[str, Any] = json.loads(json.dumps(record))
        return result


def calibration_setup(
    scenarios: Mapping[str, Scenario],
    parameters: pd.DataFrame | None = None,
    targets: pd.DataFrame | None = None,
) -> CalibrationSetup:
    """The calibration of ``scenarios`` (headline and metr) over ``parameters`` (default: the
    behaviour parameters table) against ``targets`` (default: the workflow targets table)."""
    missing = [name for name in SCENARIOS if name not in scenarios]
    if missing:
        raise ValueError(f"a calibration needs the {' and '.join(missing)} scenario")
    table = load_parameters() if parameters is None else parameters
    target_table = load_targets() if targets is None else targets
    specs = tuple(calibration_parameters(table, scenarios))
    routes = tuple((str(row.path), applies_to(str(row.scenarios))) for row in table.itertuples(index=False))
    model = CalibrationModel(scenarios["headline"], scenarios["metr"], routes)
    return CalibrationSetup(
        specs,
        tuple(calibration_targets(target_table)),
        model,
        carrier_scenario({name: unvaried_scenario(scenarios[name], name, table) for name in SCENARIOS}),
        table,
        target_table,
    )


@dataclass(frozen=True)
class HistoryMatchingResult:
    """What :func:`run_history_matching` returns.

    * ``summary``: one row per wave: ``wave``, ``design_points``, ``n_train`` (runs its emulators
      were fitted to), ``candidates``, ``non_implausible`` (candidates left), ``remaining_share``
      (± ``remaining_se``), ``ruled_out_share``, ``targets_used``, ``min_q2``;
    * ``diagnostics``: one row per wave × target (:meth:`Wave.diagnostics`);
    * ``runs``: one row per wave × design point: ``wave``, ``point``, the parameter values, each
      target's simulated mean (``<statistic>``) and its wave's emulated implausibility
      (``I:<statistic>``), ``max_implausibility`` and the recorded shares' means
      (``headline_waiting_share``, ``headline_fixing_share``);
    * ``emulator_check``: each wave's emulators at the next stage's runs (the next wave's design,
      or the final check), which they were not fitted to: ``wave``, ``target``, ``point``,
      ``predicted``, ``sd`` (of the expected output), ``simulated``, ``simulated_se``, ``inside``
      (within 3 sd of the prediction, the seed noise of the simulated mean included);
    * ``check``: the final check: ``point``, the parameter values, each target's simulated mean
      (``<statistic>``), the standard error of that mean (``se:<statistic>``) and implausibility
      (``I:<statistic>``), ``max_implausibility``, ``kept`` and the recorded shares' means and
      standard errors;
    * ``ensemble``: the kept points: ``member`` and one column per parameter path;
    * ``waves``: the :class:`Wave` objects; ``stopped``: why fewer waves ran than asked (or "").
    """

    summary: pd.DataFrame
    diagnostics: pd.DataFrame
    runs: pd.DataFrame
    emulator_check: pd.DataFrame
    check: pd.DataFrame
    ensemble: pd.DataFrame
    waves: list[Wave]
    setup: CalibrationSetup
    stopped: str = ""


def _check_identity(state: Path, record: dict[str, Any]) -> None:
    path = state / "calibration.json"
    if path.exists():
        stored = json.loads(path.read_text(encoding="utf-8"))
        changed = [key for key in record if stored.get(key) != record[key] and key != "settings"]
        changed += [
            f"settings.{key}"
            for key, value in record["settings"].items()
            if stored.get("settings", {}).get(key) != value
            and key not in ("waves", "check_points", "grow_check_to", "accepted_aim")
        ]
        if changed:
            raise ValueError(
                f"{state} holds a calibration of other inputs ({', '.join(changed)} changed): "
                "use another results directory or name"
            )
    state.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _recorded(table: pd.DataFrame, names: Sequence[str]) -> list[str]:
    """The targets' statistics ``names`` and the recorded :data:`HEADLINE_SHARES` that ``table`` holds."""
    return [*names, *(share for share in HEADLINE_SHARES if share in table.columns)]


def _point_stats(table: pd.DataFrame, names: Sequence[str], n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per point (0 … n−1): each statistic's mean over replications and the variance of that mean."""
    grouped = table.groupby("point")[list(names)]
    means = grouped.mean().reindex(range(n))
    counts = grouped.count().reindex(range(n))
    variances = (grouped.var(ddof=1).reindex(range(n)) / counts).where(counts > 1)
    return means, variances


def run_history_matching(
    scenarios: Mapping[str, Scenario],
    *,
    parameters: pd.DataFrame | None = None,
    targets: pd.DataFrame | None = None,
    waves: int = DEFAULT_WAVES,
    points: int = DEFAULT_POINTS,
    replications: int = 1,
    check_points: int = DEFAULT_CHECK_POINTS,
    check_replications: int = CHECK_REPLICATIONS,
    grow_check_to: int | None = None,
    accepted_aim: int = ENSEMBLE_AIM,
    candidates: int = DEFAULT_CANDIDATES,
    cutoff: float = CUTOFF,
    order: int = 1,
    seed: int = 2026,
    restarts: int = 2,
    folds: int = CV_FOLDS,
    executor: str | Executor = "serial",
    workers: int | None = None,
    scheduler: str | None = None,
    results_dir: str | Path = "results",
    name: str = "calibration",
    progress: bool = True,
    also_record: Sequence[str] = (),
) -> HistoryMatchingResult:
    """History-match the workflow model to its targets (see the module docstring).

    ``waves`` waves of ``points`` design points × ``replications`` runs, emulators evaluated on
    ``candidates`` candidates per batch (``cutoff``, ``order``, ``restarts``, ``folds``: as
    :func:`speedtrap.analysis.history_matching.history_matching_wave`), then ``check_points``
    points × ``check_replications`` runs for the final check; where it accepts fewer than
    ``accepted_aim`` sets and ``grow_check_to`` is larger, the check grows once to that many points (as
    a rerun with more ``check_points`` would). Runs go through ``executor`` (a name
    with ``workers`` / ``scheduler``, or an executor object) and are stored under
    ``<results_dir>/<name>/``; a rerun resumes. ``also_record``: statistics the runs compute that no
    target fits (a study left out), recorded in the final check's means and standard errors, unjudged.
    """
    if waves < 1 or points < 4 or replications < 1 or check_points < 1 or check_replications < 2:
        raise ValueError(
            "need waves ≥ 1, points ≥ 4 (an emulator's minimum), replications ≥ 1, check_points ≥ 1 "
            "and check_replications ≥ 2 (the seed noise of a checked mean needs two runs)"
        )
    if grow_check_to is not None and grow_check_to < check_points:
        raise ValueError(f"grow_check_to must be at least check_points ({check_points}), got {grow_check_to}")
    setup = calibration_setup(scenarios, parameters, targets)
    state = Path(results_dir) / name
    settings = {
        "points": points,
        "replications": replications,
        "check_points": check_points,
        "check_replications": check_replications,
        "grow_check_to": grow_check_to,
        "accepted_aim": accepted_aim,
        "candidates": candidates,
        "cutoff": cutoff,
        "order": order,
        "seed": seed,
        "restarts": restarts,
        "folds": folds,
        "waves": waves,
    }
    _check_identity(state, {**setup.identity(), "settings": settings})
    names = [t.name for t in setup.targets]
    design, names_of_parameters = setup.experiment("design", 1, 0), [p.name for p in setup.parameters]
    d = len(setup.parameters)

    def run(stage: str, pts: pd.DataFrame, reps: int, pool: Executor) -> pd.DataFrame:
        spec = setup.experiment(stage, reps, seed)
        return run_experiment(
            spec, executor=pool, results_dir=state, progress=progress, model=setup.model, points=pts
        )

    done: list[Wave] = []
    unit_runs, stage_means = np.zeros((0, d)), []
    rows, run_frames, check_frames = [], [], []
    stopped = ""
    made = make_executor(executor, workers, scheduler) if isinstance(executor, str) else None
    pool: Any = made if made is not None else executor
    with made if made is not None else contextlib.nullcontext():
        for k in range(1, waves + 1):
            if k > 1 and len(done[-1].non_implausible) == 0:
                stopped = f"wave {k - 1} left no non-implausible candidates: no parameter set matches"
                break
            previous = done[-1] if done else None

            def make(previous: Wave | None = previous, k: int = k) -> np.ndarray:
                if previous is None:
                    return candidate_sample(points, np.zeros(d), np.ones(d), seed=seed)
                left = previous.non_implausible
                return left[space_filling_subset(left, points, seed=seed + k)]

            unit, pts = stage_design(state / f"wave{k}-design.csv", design, names_of_parameters, make)
            table = run(f"wave{k}", pts, replications, pool)
            means, _ = _point_stats(table, _recorded(table, names), len(unit))
            if previous is not None:
                check_frames.append(_emulator_check(previous, unit, table, names))
            unit_runs = np.vstack([unit_runs, unit])
            stage_means.append(means)
            mean_runs = pd.concat(stage_means, ignore_index=True)
            train = non_implausible_mask(unit_runs, done)
            wave = history_matching_wave(
                unit_runs[train],
                {t: mean_runs[t].to_numpy(dtype=float)[train] for t in names},
                setup.targets,
                setup.parameters,
                number=k,
                previous=done,
                candidates=candidates,
                min_left=2 * max(points, check_points),
                max_batches=8,
                cutoff=cutoff,
                order=order,
                seed=seed,
                restarts=restarts,
                folds=folds,
                jobs=1 if executor == "serial" else (workers or os.cpu_count() or 1),
            )
            done.append(wave)
            rows.append(_summary_row(wave, len(unit)))
            run_frames.append(_wave_runs(wave, pts, unit, means, names))
        check = pd.DataFrame()
        ensemble = pd.DataFrame(columns=["member", *[p.name for p in setup.parameters]])
        last = done[-1]
        if len(last.non_implausible):
            k = last.number

            def make_check() -> np.ndarray:
                left = last.non_implausible
                return left[space_filling_subset(left, check_points, seed=seed + 1000 + k)]

            size = check_points
            while True:
                unit, pts = grown_check_design(
                    state / f"check{k}-design.csv",
                    design,
                    names_of_parameters,
                    make_check,
                    done,
                    size,
                    candidates=candidates,
                    seed=seed,
                )
                table = run(f"check{k}", pts, check_replications, pool)
                check, ensemble = _final_check(setup, pts, table, names, cutoff, also_record)
                if len(ensemble) >= accepted_aim or grow_check_to is None or size >= grow_check_to:
                    break
                size = grow_check_to  # too few accepted: the check grows once
            check_frames.append(_emulator_check(last, unit, table, names))
        elif not stopped:
            stopped = f"wave {last.number} left no non-implausible candidates: no parameter set matches"
    return HistoryMatchingResult(
        pd.DataFrame(rows),
        pd.concat([w.diagnostics() for w in done], ignore_index=True),
        pd.concat(run_frames, ignore_index=True),
        pd.concat(check_frames, ignore_index=True) if check_frames else pd.DataFrame(),
        check,
        ensemble,
        done,
        setup,
        stopped,
    )


def _summary_row(wave: Wave, design_points: int) -> dict[str, Any]:
    q2 = [te.q2 for te in wave.emulators if math.isfinite(te.q2)]
    return {
        "wave": wave.number,
        "design_points": design_points,
        "n_train": max((te.n_train for te in wave.emulators), default=0),
        "candidates": wave.candidates,
        "non_implausible": len(wave.non_implausible),
        "remaining_share": wave.remaining_share,
        "remaining_se": wave.remaining_se,
        "ruled_out_share": wave.ruled_out_share,
        "targets_used": sum(te.used for te in wave.emulators),
        "min_q2": min(q2) if q2 else math.nan,
    }


def _wave_runs(
    wave: Wave, pts: pd.DataFrame, unit: np.ndarray, means: pd.DataFrame, names: Sequence[str]
) -> pd.DataFrame:
    frame = pts.copy()
    frame.insert(0, "wave", wave.number)
    for name in [*names, *(share for share in HEADLINE_SHARES if share in means.columns)]:
        frame[name] = means[name].to_numpy()
    predicted = wave.predict(unit)
    for te in wave.emulators:
        rows = predicted[predicted["target"] == te.target.name]
        t = te.target
        value = np.abs(t.value - rows["mean"].to_numpy()) / np.sqrt(t.variance + rows["variance"].to_numpy())
        frame[f"I:{t.name}"] = value
    used = [f"I:{te.target.name}" for te in wave.emulators if te.used]
    frame["max_implausibility"] = frame[used].max(axis=1) if used else 0.0
    return frame


def _emulator_check(wave: Wave, unit: np.ndarray, table: pd.DataFrame, names: Sequence[str]) -> pd.DataFrame:
    means, variances = _point_stats(table, names, len(unit))
    predicted = wave.predict(unit)
    frames = []
    for t in names:
        rows = predicted[predicted["target"] == t].reset_index(drop=True)
        runs = table.groupby("point")[t].count().reindex(range(len(unit))).to_numpy(dtype=float)
        noise = variances[t].to_numpy(dtype=float)
        noise = np.where(np.isnan(noise), rows["noise_variance"].to_numpy() / np.maximum(runs, 1.0), noise)
        sd = np.sqrt(rows["variance"].to_numpy())
        simulated = means[t].to_numpy(dtype=float)
        frames.append(
            pd.DataFrame(
                {
                    "wave": wave.number,
                    "target": t,
                    "point": np.arange(len(unit)),
                    "predicted": rows["mean"].to_numpy(),
                    "sd": sd,
                    "simulated": simulated,
                    "simulated_se": np.sqrt(variances[t].to_numpy(dtype=float)),
                    "inside": np.abs(simulated - rows["mean"].to_numpy())
                    <= CUTOFF * np.sqrt(rows["variance"].to_numpy() + noise),
                    "used": rows["used"].to_numpy(),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def _final_check(
    setup: CalibrationSetup,
    pts: pd.DataFrame,
    table: pd.DataFrame,
    names: Sequence[str],
    cutoff: float,
    also_record: Sequence[str] = (),
) -> tuple[pd.DataFrame, pd.DataFrame]:
    extra = [s for s in dict.fromkeys(also_record) if s in table.columns and s not in names]
    means, variances = _point_stats(table, [*_recorded(table, names), *extra], len(pts))
    each = simulated_implausibility(
        setup.targets,
        {t: means[t].to_numpy(dtype=float) for t in names},
        {t: variances[t].to_numpy(dtype=float) for t in names},
    )
    check = pts.copy()
    for j, t in enumerate(names):
        check[t] = means[t].to_numpy()
        check[f"se:{t}"] = np.sqrt(variances[t].to_numpy(dtype=float))
        check[f"I:{t}"] = each[:, j]
    for share in [*HEADLINE_SHARES, *extra]:
        if share in means.columns:
            check[share] = means[share].to_numpy()
            check[f"se:{share}"] = np.sqrt(variances[share].to_numpy(dtype=float))
    check["max_implausibility"] = each.max(axis=1)
    check["kept"] = (each < cutoff).all(axis=1)
    members = check.loc[check["kept"], [p.name for p in setup.parameters]].reset_index(drop=True)
    members.insert(0, "member", np.arange(len(members)))
    return check, members
