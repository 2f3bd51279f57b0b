"""Which inputs decide whether the fast, less accurate backend pays? A Morris screening.

``python experiments/screening.py [--quick] [--trajectories 16] [--executor processes] [--workers N]``

Screens the eight inputs of experiments/sweeps/sensitivity.toml (over
experiments/scenarios/two_backends.toml) with Morris elementary effects: ``--trajectories`` one-at-a-
time paths of D + 1 points each, every point run with the file's replication seeds by
``productivity_gap`` (the same scenario and seed on wafer-distilled and on gpu-batched, their
difference). Runs are stored under ``<results-dir>/<name>-morris-n<n>/`` and a rerun resumes. Writes
``<results-dir>/screening/`` (``screening-quick/`` with ``--quick``): ``screening.csv`` (μ, μ*, its
95% bootstrap half-width and σ per outcome and input, in the units shown) and ``screening.png``, and
prints the ranking and the finding for each outcome with the number of runs and the wall time.
``--quick`` uses the file's quick variant (seconds; rankings from it mean nothing).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd

from speedtrap.config.experiment import Experiment
from speedtrap.experiments.canonical import EXPERIMENTS_DIR
from speedtrap.experiments.sensitivity import (
    SCREENING_OUTCOMES,
    SCREENING_TRAJECTORIES,
    factor_label,
    productivity_gap,
    run_morris,
    screening_finding,
    screening_table,
)
from speedtrap.plots import plot_morris

TRAJECTORIES = SCREENING_TRAJECTORIES  # full size: 16 × 9 points × 2 replications = 288 calls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the file's quick variant (a smoke run)")
    parser.add_argument(
        "--trajectories", type=int, default=None, help=f"Morris trajectories (default {TRAJECTORIES})"
    )
    parser.add_argument(
        "--executor", default=None, help="serial, processes or dask (default processes; serial with --quick)"
    )
    parser.add_argument("--workers", type=int, default=None, help="worker processes")
    parser.add_argument("--results-dir", type=Path, default=Path("results"), help="where runs and outputs go")
    args = parser.parse_args(argv)
    if args.trajectories is not None and args.trajectories < 2:
        parser.error(
            f"--trajectories must be at least 2 (μ* needs effects to average), got {args.trajectories}"
        )

    full = Experiment.from_toml(EXPERIMENTS_DIR / "sweeps" / "sensitivity.toml")
    spec = full.quick_variant() if args.quick else full
    n = args.trajectories or ((spec.design.points or TRAJECTORIES) if args.quick else TRAJECTORIES)
    executor = args.executor or ("serial" if args.quick else "processes")
    d = len(spec.factors)
    runs = n * (d + 1) * spec.replications
    print(
        f"Morris screening of {d} inputs: {n} trajectories × {d + 1} points × {spec.replications} "
        f"replications = {runs} calls of productivity_gap (each two runs of "
        f"{spec.scenario.developer_days:g} developer-days); executor {executor}",
        flush=True,
    )
    start = time.perf_counter()
    result = run_morris(
        spec,
        n,
        model=productivity_gap,
        outcome=list(SCREENING_OUTCOMES),
        executor=executor,
        workers=args.workers,
        results_dir=args.results_dir,
    )
    wall_s = time.perf_counter() - start

    shown = screening_table(result.indices)
    out = args.results_dir / ("screening-quick" if args.quick else "screening")
    out.mkdir(parents=True, exist_ok=True)
    shown.to_csv(out / "screening.csv", index=False)

    fig, axes = plt.subplots(2, 2, figsize=(13, 9.5), layout="constrained")
    labels = {f.path: factor_label(f.path) for f in spec.factors}
    for ax, (outcome, (title, unit, _)) in zip(axes.flat, SCREENING_OUTCOMES.items(), strict=True):
        plot_morris(shown, ax, outcome=outcome, labels=labels, unit=unit, title=f"gap in {title}")
    fig.suptitle(f"wafer-distilled − gpu-batched: Morris screening, {n} trajectories, {runs} calls")
    fig.savefig(out / "screening.png", dpi=110)

    with pd.option_context("display.width", 160, "display.max_columns", 10):
        print(shown.round(4).to_string(index=False))
    for outcome, (_, unit, _) in SCREENING_OUTCOMES.items():
        print(screening_finding(shown, outcome, unit=unit))
    if args.quick:
        print(f"Quick variant ({n} trajectories): a smoke run, the ranking means nothing.")
    print(f"{runs} calls in {wall_s / 60:.1f} min wall ({executor}).")
    print(f"Wrote {out / 'screening.csv'}, {out / 'screening.png'}")
    return 0


if __name__ == "__main__":  # the processes executor starts fresh interpreters that import this file
    sys.exit(main())
