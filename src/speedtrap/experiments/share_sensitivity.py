"""Which behavioural constants set the headline waiting and fixing shares? Sobol' indices of the
calibration's emulators (``speedtrap validate workflow --sensitivity``).

**Runs.** The history-matching calibration (:mod:`speedtrap.experiments.calibration`) records, at
every design point, the headline's waiting and fixing shares of the day
(:data:`speedtrap.validation.workflow.HEADLINE_SHARES`) beside the targets' statistics. This report
reads **wave 1 only** (``wave1.csv`` of the calibration's outputs, ``experiments/calibration/`` by
default): wave 1 is a Latin hypercube over the full sourced range of every parameter, which is the
domain the indices are defined on (each parameter uniform, or log-uniform, over its range in
``parameters.csv``). Later waves sample only the region that wave 1 left non-implausible; added to
the training runs they would make the emulator better there and no better elsewhere, and would pull
its length scales towards that region, so they are left out.

**Indices.** For each share and for each target's statistic a Gaussian-process emulator is fitted to
the wave-1 runs (:func:`speedtrap.analysis.emulator.emulated_sobol`; rows with a non-finite output
left out) and checked by leave-one-out Q² in closed form (below :data:`speedtrap.analysis.emulator.
MIN_Q2` the share's indices get a warning). First-order and total indices of its mean are
computed by Saltelli's estimators (SALib) on ``n`` base samples (``n·(D + 2)`` evaluations), with
percentile bootstrap intervals over ``bootstrap`` refits on resampled runs, each on a fresh Saltelli
sample (so the intervals cover the design's error and the Monte Carlo error, not the
hyperparameters'). The targets' indices decide which parameters are fitted
(:mod:`speedtrap.analysis.share_sensitivity`: the rule, the thresholds and the flag).

``--quick`` runs a tiny wave 1 itself (:data:`speedtrap.experiments.calibration.QUICK`: 8 points of 3
developers × 1 day), for tests: its indices mean nothing.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from speedtrap.analysis.emulator import MIN_Q2, emulated_sobol
from speedtrap.analysis.history_matching import Parameter
from speedtrap.analysis.share_sensitivity import (
    DOMINANCE_THRESHOLD,
    FIT_THRESHOLD,
    MIN_TARGET_Q2,
    dominance_table,
)
from speedtrap.config.scenario import Scenario
from speedtrap.experiments.calibration import QUICK, HistoryMatchingResult, run_history_matching
from speedtrap.validation.parameters import calibration_parameters, load_parameters
from speedtrap.validation.workflow import FITTED_ROLES, HEADLINE_SHARES, load_targets

__all__ = [
    "CALIBRATE_COMMAND",
    "DEFAULT_BOOTSTRAP",
    "DEFAULT_SOBOL_N",
    "SHARE_LABELS",
    "TABLE_COLUMNS",
    "WAVES_USED",
    "CalibrationRuns",
    "ShareSensitivity",
    "load_calibration_runs",
    "markdown_table",
    "quick_runs",
    "runs_from_result",
    "sensitivity_finding",
    "share_sensitivity",
    "table_rows",
]

CALIBRATE_COMMAND = "python experiments/calibrate.py"
"""The command that makes the calibration runs this report reads."""
WAVES_USED = (1,)
"""The waves whose runs train the emulators (the module docstring says why wave 1 alone)."""
DEFAULT_SOBOL_N = 1024
"""Saltelli base samples per emulator: 1024·(D + 2) = 33,792 evaluations for the 31 parameters
(assumption: the Monte Carlo error at this size, within the bootstrap intervals, is a few hundredths
of an index, well below the 0.20 bar; each evaluation of a 256-run emulator costs microseconds)."""
DEFAULT_BOOTSTRAP = 30
"""Bootstrap refits per emulator (as :data:`speedtrap.analysis.emulator.DEFAULT_BOOTSTRAP`)."""
SHARE_RESTARTS = 2
"""Extra optimizer starts of the shares' emulators (:func:`speedtrap.analysis.emulator.fit_emulator`'s
default)."""
TARGET_RESTARTS = 0
"""Extra optimizer starts of the targets' emulators (assumption: they only decide a threshold, and
each start of a 23-input fit to 256 runs costs tens of seconds on two cores)."""
SHARE_LABELS = {"headline_waiting_share": "waiting", "headline_fixing_share": "fixing"}
"""Short names of the recorded shares in tables."""


@dataclass(frozen=True)
class CalibrationRuns:
    """The runs the report reads: the ``parameters`` (as the calibration varied them), their
    ``unit`` coordinates (rows × parameters), the per-point ``outputs`` (one column per target
    statistic and recorded share), the ``waves`` they come from and where (``source``)."""

    parameters: tuple[Parameter, ...]
    unit: np.ndarray
    outputs: pd.DataFrame
    waves: tuple[int, ...]
    source: str


def _parameters(directory: Path, scenarios: Mapping[str, Scenario] | None) -> tuple[Parameter, ...]:
    stored = directory / "parameters.csv"
    if stored.exists():
        table = pd.read_csv(stored, keep_default_na=False)
        return tuple(
            Parameter(
                str(r.path), float(r.low), float(r.high), r.scale, str(r.integer) == "True", str(r.source)
            )
            for r in table.itertuples(index=False)
        )
    if scenarios is None:
        raise ValueError(f"{directory} has no parameters.csv: give the calibration scenarios")
    return tuple(calibration_parameters(load_parameters(), scenarios))


def load_calibration_runs(
    directory: str | Path, scenarios: Mapping[str, Scenario] | None = None
) -> CalibrationRuns:
    """The wave-1 runs of the calibration outputs in ``directory`` (``wave1.csv``, with the ranges of
    its ``parameters.csv``, or, for outputs written before that file existed, the ranges of the
    behaviour parameters table checked against ``scenarios``). Raises ``FileNotFoundError`` naming
    :data:`CALIBRATE_COMMAND` when there are no runs, and ``ValueError`` when they lack the recorded
    shares or a parameter, or hold values outside its range."""
    directory = Path(directory)
    waves = [directory / f"wave{k}.csv" for k in WAVES_USED]
    if not directory.is_dir() or not all(p.exists() for p in waves):
        raise FileNotFoundError(
            f"no calibration runs in {directory} (no {waves[0].name}): `{CALIBRATE_COMMAND}` makes them "
            "(or use --quick)"
        )
    frame = pd.concat([pd.read_csv(p) for p in waves], ignore_index=True)
    missing = [s for s in HEADLINE_SHARES if s not in frame.columns]
    if missing:
        raise ValueError(
            f"{waves[0]} has no {missing[0]} column (runs made before the shares were recorded): "
            f"rerun `{CALIBRATE_COMMAND}` into a fresh --results-dir"
        )
    parameters = _parameters(directory, scenarios)
    absent = [p.name for p in parameters if p.name not in frame.columns]
    if absent:
        raise ValueError(f"{waves[0]} has no column for parameter {absent[0]!r}")
    unit = np.column_stack([p.to_unit(frame[p.name].to_numpy(dtype=float)) for p in parameters])
    outside = ~((unit >= -1e-9) & (unit <= 1.0 + 1e-9)).all(axis=0)
    if outside.any():
        name = parameters[int(np.flatnonzero(outside)[0])].name
        raise ValueError(f"{waves[0]}: values of {name!r} outside its range: runs of other parameter ranges")
    outputs = frame.drop(columns=[p.name for p in parameters] + ["point"], errors="ignore")
    return CalibrationRuns(parameters, np.clip(unit, 0.0, 1.0), outputs, WAVES_USED, str(directory))


def runs_from_result(result: HistoryMatchingResult, source: str = "") -> CalibrationRuns:
    """The wave-1 runs of a history-matching result (as :func:`load_calibration_runs` reads them)."""
    parameters = result.setup.parameters
    rows = result.runs[result.runs["wave"].isin(WAVES_USED)].reset_index(drop=True)
    unit = np.column_stack([p.to_unit(rows[p.name].to_numpy(dtype=float)) for p in parameters])
    outputs = rows.drop(columns=[p.name for p in parameters] + ["point", "wave"], errors="ignore")
    return CalibrationRuns(tuple(parameters), np.clip(unit, 0.0, 1.0), outputs, WAVES_USED, source)


def quick_runs(
    scenarios: Mapping[str, Scenario], results_dir: str | Path, *, progress: bool = False
) -> CalibrationRuns:
    """Run wave 1 of the quick calibration (:data:`~speedtrap.experiments.calibration.QUICK`, on
    ``scenarios`` shrunk to its size; stored under ``<results_dir>/calibration-quick/``, which
    ``experiments/calibrate.py --quick`` shares) and return its runs."""
    small = {
        name: s.with_overrides({"developers": QUICK["developers"], "horizon_s": QUICK["days"] * s.workday_s})
        for name, s in scenarios.items()
    }
    result = run_history_matching(
        small,
        waves=1,
        points=QUICK["points"],
        check_points=QUICK["check_points"],
        check_replications=QUICK["check_replications"],
        candidates=QUICK["candidates"],
        restarts=QUICK["restarts"],
        folds=QUICK["folds"],
        results_dir=results_dir,
        name="calibration-quick",
        progress=progress,
    )
    return runs_from_result(result, f"{Path(results_dir) / 'calibration-quick'} (quick)")


@dataclass(frozen=True)
class ShareSensitivity:
    """What :func:`share_sensitivity` returns.

    * ``table``: :func:`speedtrap.analysis.share_sensitivity.dominance_table` (one row per parameter,
      the shares' columns named by :data:`SHARE_LABELS`);
    * ``indices``: long form, one row per output × parameter: ``output``, ``kind`` (share or
      target), ``parameter`` and the indices with their bounds;
    * ``emulators``: one row per output: ``output``, ``kind``, ``statistic``, ``n_train``, ``q2``
      (leave-one-out), ``noise_share``, ``mc_half_width``, ``counts`` (whether a target's indices
      may constrain: Q² ≥ the rule's minimum);
    * ``warnings``: one sentence per emulator that cannot be trusted;
    * the settings: ``n``, ``bootstrap``, ``confidence``, ``seed``, ``waves``, ``source``.
    """

    table: pd.DataFrame
    indices: pd.DataFrame
    emulators: pd.DataFrame
    n: int
    bootstrap: int
    confidence: float
    seed: int
    waves: tuple[int, ...]
    source: str
    warnings: list[str] = field(default_factory=list)

    @property
    def flagged(self) -> list[str]:
        """The unfitted parameters with a total index above the bar on either share."""
        return [str(p) for p in self.table.loc[self.table["flag"], "parameter"]]


def share_sensitivity(
    runs: CalibrationRuns,
    *,
    n: int = DEFAULT_SOBOL_N,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    confidence: float = 0.95,
    seed: int = 2026,
    targets: pd.DataFrame | None = None,
    progress: Any = None,
) -> ShareSensitivity:
    """Sobol' indices of both headline shares and of every target's statistic over the parameters'
    sourced ranges, through emulators of ``runs`` (see the module docstring), and the table of
    :func:`speedtrap.analysis.share_sensitivity.dominance_table`. ``targets``: the targets table
    (default :func:`speedtrap.validation.workflow.load_targets`); a target whose statistic the runs
    lack is left out. ``progress``: called with (output name, done, total) before each emulator."""
    table = load_targets() if targets is None else targets
    if "role" in table:  # held-out targets are not fitted: no parameter is "fitted to" them
        table = table[table["role"].isin(FITTED_ROLES)]
    outputs: list[tuple[str, str, str]] = [(SHARE_LABELS[s], "share", s) for s in HEADLINE_SHARES]
    outputs += [
        (str(r.id), "target", str(r.statistic))
        for r in table.itertuples(index=False)
        if str(r.statistic) in runs.outputs.columns
    ]
    factors = [p.factor for p in runs.parameters]
    found: dict[str, pd.DataFrame] = {}
    rows, notes, long = [], [], []
    for done, (name, kind, statistic) in enumerate(outputs):
        if progress is not None:
            progress(name, done, len(outputs))
        y = runs.outputs[statistic].to_numpy(dtype=float)
        finite = np.isfinite(y)
        if finite.sum() < 4:
            notes.append(f"{name}: only {int(finite.sum())} runs with a finite {statistic}: no emulator")
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # said below, once, in words
            result = emulated_sobol(
                factors,
                runs.unit[finite],
                y[finite],
                n=n,
                bootstrap=bootstrap,
                confidence=confidence,
                seed=seed,
                restarts=SHARE_RESTARTS if kind == "share" else TARGET_RESTARTS,
                check="loo",
            )
        frame = result.indices.copy()
        found[name] = frame
        counts = kind == "share" or (math.isfinite(result.q2) and result.q2 >= MIN_TARGET_Q2)
        rows.append(
            {
                "output": name,
                "kind": kind,
                "statistic": statistic,
                "n_train": result.n_train,
                "q2": result.q2,
                "noise_share": result.noise_share,
                "mc_half_width": result.mc_half_width,
                "counts": counts,
            }
        )
        long.append(frame.rename(columns={"factor": "parameter"}).assign(output=name, kind=kind))
        if kind == "share" and not result.q2 >= MIN_Q2:
            notes.append(
                f"the {name} share's emulator predicts left-out runs with Q² = {result.q2:.2f} "
                f"(< {MIN_Q2}): its indices cannot mean much; more wave-1 runs would help"
            )
    emulators = pd.DataFrame(rows)
    shares = {label: found[label] for label in SHARE_LABELS.values() if label in found}
    if not shares:
        raise ValueError("neither share could be emulated from these runs")
    q2 = dict(zip(emulators["output"], emulators["q2"], strict=True))
    target_frames = {name: frame for name, frame in found.items() if name not in shares}
    verdicts = dominance_table(shares, target_frames, q2)
    indices = pd.concat(long, ignore_index=True)
    indices = indices[["output", "kind", "parameter", *[c for c in indices.columns if c[0] == "S"]]]
    return ShareSensitivity(
        verdicts, indices, emulators, n, bootstrap, confidence, seed, runs.waves, runs.source, notes
    )


def _two(value: float) -> str:
    """Two decimals, without the sign of an estimate that rounds to zero (−0.001 → 0.00)."""
    return f"{round(float(value), 2) + 0.0:.2f}"


def _interval(row: pd.Series, key: str) -> str:
    return f"{_two(row[key])} [{_two(row[key + '_low'])}, {_two(row[key + '_high'])}]"


def _cells(result: ShareSensitivity, row: pd.Series) -> list[str]:
    cells = [str(row["parameter"])]
    for label in SHARE_LABELS.values():
        for key in ("S1", "ST"):
            column = f"{label}:{key}"
            cells.append(_interval(row, column) if column in row.index else "—")
    cells.append(row["fitted_to"] or "no")
    cells.append("**unfitted, ST > 0.20**" if row["flag"] else "")
    return cells


def table_rows(result: ShareSensitivity) -> list[list[str]]:
    """The report's rows as text: parameter, S1 and ST of each share (index [95% interval]), the
    targets it is fitted to (or "no") and the flag."""
    return [_cells(result, row) for _, row in result.table.iterrows()]


TABLE_COLUMNS = ["parameter", "waiting S1", "waiting ST", "fixing S1", "fixing ST", "fitted to", "flag"]


def markdown_table(result: ShareSensitivity) -> str:
    """The published sensitivity table (docs/validation.md): a caption line with the settings, the
    table in Markdown, then the finding (:func:`sensitivity_finding`) and any warnings."""
    n_train = int(result.emulators["n_train"].max())
    caption = (
        f"Sobol' indices of the headline waiting and fixing shares of the day (fractions of their "
        f"variance; index [{100 * result.confidence:.0f}% bootstrap interval]) over each parameter's "
        f"sourced range, from GP emulators of {n_train} wave-{'/'.join(map(str, result.waves))} runs, "
        f"N = {result.n} Saltelli base samples, {result.bootstrap} bootstrap refits. "
        f'"Fitted to": targets on whose statistic the parameter\'s total index is at least '
        f"{FIT_THRESHOLD:.2f} (lower bound) with an emulator of Q² ≥ {MIN_TARGET_Q2}; flag: unfitted "
        f"with ST > {DOMINANCE_THRESHOLD:.2f} on either share."
    )
    lines = [caption, "", "| " + " | ".join(TABLE_COLUMNS) + " |", "|" + "---|" * len(TABLE_COLUMNS)]
    lines += ["| " + " | ".join(cells) + " |" for cells in table_rows(result)]
    lines += ["", sensitivity_finding(result), *(f"Warning: {note}." for note in result.warnings)]
    return "\n".join(lines) + "\n"


def sensitivity_finding(result: ShareSensitivity) -> str:
    """The report in words: the emulators' checks and which parameters are flagged."""
    shares = result.emulators[result.emulators["kind"] == "share"]
    checks = ", ".join(f"{r.output} Q² = {r.q2:.2f}" for r in shares.itertuples())
    targets = result.emulators[result.emulators["kind"] == "target"]
    counted = int(targets["counts"].sum()) if len(targets) else 0
    text = (
        f"Emulators of {int(result.emulators['n_train'].max())} runs (leave-one-out {checks}); "
        f"{counted} of {len(targets)} targets' emulators reach Q² ≥ {MIN_TARGET_Q2} and may constrain "
        "parameters."
    )
    if result.flagged:
        text += " Unfitted with ST > 0.20 on a share: " + ", ".join(result.flagged) + "."
    else:
        text += " No unfitted parameter has ST > 0.20 on either share."
    return text
