"""How much of the gap does each input explain? Sobol' indices through a Gaussian-process emulator.

``python experiments/emulated_sobol.py [--quick] [--claims] [--points 256] [--replications 1]
[--bootstrap 30] [--direct N] [--executor processes] [--workers N]``

A direct Sobol' study of experiments/sweeps/sensitivity.toml needs 1,280 points × 2 replications
(≈6.4 CPU-hours here). This runs ``--points`` points of a scrambled Sobol' sequence over the same
eight inputs and ranges instead, each ``--replications`` times by ``productivity_gap`` (the same
scenario and seed on wafer-distilled and on gpu-batched, their difference), fits a Gaussian-process
emulator of each outcome to them and computes the first-order and total Sobol' indices of the
emulator (:mod:`speedtrap.analysis.emulator`), with 95% bootstrap intervals, from the first half of
the points and from all of them. Runs are stored under ``<results-dir>/<name>-emulator-n<points>/``
and a rerun resumes. Writes ``<results-dir>/emulated-sobol/`` (``emulated-sobol-quick/`` with
``--quick``): ``indices.csv``, ``diagnostics.csv`` (held-out Q², noise share, Monte Carlo
half-width per outcome and size) and ``emulated_sobol.png``, and prints the indices and a finding
per outcome with the number of runs and the wall time. Where the full Morris screening's runs are
stored in the same results directory (``python experiments/screening.py``), each emulator is also
checked against them: Q² at 144 points of another design (``q2_morris`` in diagnostics.csv).
``--direct N`` also runs the direct Sobol' study (N base samples: N·(D + 2) points × the
replications, stored under ``<name>-sobol-n<N>/``) and writes ``direct-n<N>.csv``: each emulated
index beside the direct one, whether it lies within the direct study's 95% interval and whether
the two intervals overlap, ``direct-n<N>.png`` (emulated against direct, per gap) and, for N ≥ 4,
``direct-n<N>-convergence.csv`` (the direct study from its first N/2 base samples against all N:
widest half-width at each size and the largest change of an index, per gap). ``--quick``
uses the file's quick variant (seconds; the indices from it mean nothing).

``--claims``: the claims study's outcomes instead (``speedtrap.experiments.claim_gaps.claim_gaps``:
each call runs the point on gpu-batched, gpu-fast, wafer-distilled and by hand, and returns the gaps
between the backends and between each backend and no AI), over the same inputs, stored under
``<results-dir>/claims-<name>-emulator-n<points>/`` and written to ``<results-dir>/emulated-sobol-claims/``
(``-claims-quick/``); the screening check does not apply.
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

from speedtrap.analysis.emulator import DEFAULT_BOOTSTRAP, DEFAULT_SOBOL_N
from speedtrap.config.experiment import Experiment
from speedtrap.experiments.canonical import EXPERIMENTS_DIR
from speedtrap.experiments.claim_gaps import CLAIM_OUTCOMES, claim_gaps
from speedtrap.experiments.sensitivity import (
    DEFAULT_TRAINING_RUNS,
    SCREENING_OUTCOMES,
    SCREENING_TRAJECTORIES,
    compare_direct,
    emulated_finding,
    external_q2,
    factor_label,
    index_convergence,
    productivity_gap,
    run_emulated_sobol,
    run_morris,
    run_sobol,
    sobol_indices_from_first,
)
from speedtrap.plots import plot_emulator_check, plot_sensitivity

REPLICATIONS = 1  # assumption: one paired run per point; the emulator's noise term takes the noise
# (the Morris runs put it at ≈0.1% of the gap's variance), so runs serve it better at new points
QUICK = {"points": 16, "bootstrap": 4, "sobol_n": 512}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the file's quick variant (a smoke run)")
    parser.add_argument(
        "--claims",
        action="store_true",
        help="the claims study's gaps (each backend against gpu-batched and against no AI)",
    )
    parser.add_argument(
        "--points",
        type=int,
        default=None,
        help=f"training points, a power of two ≥ 8 (default {DEFAULT_TRAINING_RUNS})",
    )
    parser.add_argument(
        "--replications", type=int, default=REPLICATIONS, help=f"runs per point (default {REPLICATIONS})"
    )
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=None,
        help=f"emulator refits for the intervals (default {DEFAULT_BOOTSTRAP})",
    )
    parser.add_argument(
        "--direct",
        type=int,
        default=None,
        metavar="N",
        help="also run the direct Sobol' study with N base samples (N·(D + 2) points) and compare",
    )
    parser.add_argument(
        "--executor", default=None, help="serial, processes or dask (default processes; serial with --quick)"
    )
    parser.add_argument("--workers", type=int, default=None, help="worker processes")
    parser.add_argument("--results-dir", type=Path, default=Path("results"), help="where runs and outputs go")
    args = parser.parse_args(argv)
    n = args.points or (QUICK["points"] if args.quick else DEFAULT_TRAINING_RUNS)
    if n < 8 or n & (n - 1):
        parser.error(f"--points must be a power of two ≥ 8 (a nested Sobol' design), got {n}")
    if args.replications < 1:
        parser.error(f"--replications must be at least 1, got {args.replications}")
    bootstrap = (
        args.bootstrap
        if args.bootstrap is not None
        else (QUICK["bootstrap"] if args.quick else DEFAULT_BOOTSTRAP)
    )
    if bootstrap < 2:
        parser.error(f"--bootstrap must be at least 2 refits (an interval needs them), got {bootstrap}")

    if args.direct is not None and (args.direct < 2 or args.direct & (args.direct - 1)):
        parser.error(f"--direct must be a power of two ≥ 2 base samples, got {args.direct}")

    full = Experiment.from_toml(EXPERIMENTS_DIR / "sweeps" / "sensitivity.toml")
    base = full.quick_variant() if args.quick else full
    if args.claims:
        model, outcomes, runs_per_call, what = claim_gaps, CLAIM_OUTCOMES, 4, "the claims' gaps"
        base = base.model_copy(update={"name": f"claims-{base.name}"})
    else:
        model, outcomes, runs_per_call = productivity_gap, SCREENING_OUTCOMES, 2
        what = "wafer-distilled − gpu-batched"
    titles = {name: f"gap in {title}" for name, (title, _, _) in outcomes.items()}
    data = base.model_dump(mode="python")
    data.update(scenario=base.scenario, replications=args.replications)
    spec = Experiment.model_validate(data)
    executor = args.executor or ("serial" if args.quick else "processes")
    d = len(spec.factors)
    runs = n * spec.replications
    print(
        f"Emulated Sobol' indices of {d} inputs: {n} points × {spec.replications} replication(s) = {runs} "
        f"calls of {model.__name__} (each {runs_per_call} runs of {spec.scenario.developer_days:g} "
        f"developer-days); executor {executor}",
        flush=True,
    )
    runs_of_gaps = {  # how every study here runs: the model's gaps, stored in results-dir
        "model": model,
        "outcome": list(outcomes),
        "executor": executor,
        "workers": args.workers,
        "results_dir": args.results_dir,
    }
    start = time.perf_counter()
    result = run_emulated_sobol(
        spec,
        n,
        **runs_of_gaps,
        bootstrap=bootstrap,
        sobol_n=QUICK["sobol_n"] if args.quick else DEFAULT_SOBOL_N,
    )
    wall_s = time.perf_counter() - start

    diagnostics = result.diagnostics.copy()
    diagnostics["q2_morris"] = float("nan")
    screening_runs = args.results_dir / f"{base.name}-morris-n{SCREENING_TRAJECTORIES}"
    if (
        not args.claims and screening_runs.is_dir()
    ):  # the screening's stored runs: resumed, nothing is rerun if complete
        print(f"Checking the emulators against the screening's runs in {screening_runs}", flush=True)
        check = run_morris(base, SCREENING_TRAJECTORIES, **runs_of_gaps, progress=False)
        for outcome, q2 in external_q2(spec, result, check).items():
            diagnostics.loc[
                (diagnostics["outcome"] == outcome) & (diagnostics["n_train"] == n), "q2_morris"
            ] = q2

    out = args.results_dir / (
        "emulated-sobol" + ("-claims" if args.claims else "") + ("-quick" if args.quick else "")
    )
    out.mkdir(parents=True, exist_ok=True)
    labels = {f.path: factor_label(f.path) for f in spec.factors}
    if args.direct is not None:
        direct_calls = args.direct * (d + 2) * spec.replications
        print(f"Direct Sobol' study: {args.direct} base samples, {direct_calls} calls", flush=True)
        direct_start = time.perf_counter()
        direct = run_sobol(spec, args.direct, **runs_of_gaps)
        direct_s = time.perf_counter() - direct_start
        both = compare_direct(result, direct)
        both.to_csv(out / f"direct-n{args.direct}.csv", index=False)
        with pd.option_context("display.width", 200, "display.max_columns", 12):
            print(both.round(3).to_string(index=False))
        inside = int(both["S1_inside"].sum() + both["ST_inside"].sum())
        overlap = int(both["S1_overlap"].sum() + both["ST_overlap"].sum())
        widest = 100 * both[["direct_S1_conf", "direct_ST_conf"]].to_numpy().max()
        print(
            f"Direct Sobol' study ({args.direct} base samples, {direct_calls} calls, {direct_s / 60:.1f} min "
            f"wall): {inside} of {2 * len(both)} emulated indices lie within its 95% intervals "
            f"(widest half-width {widest:.0f} pp); "
            f"the two 95% intervals overlap for {overlap}."
        )
        if args.direct >= 4:  # how far the direct indices still move: its first half against all of it
            moved = index_convergence(
                sobol_indices_from_first(direct, spec, args.direct // 2), direct.indices
            )
            moved.to_csv(out / f"direct-n{args.direct}-convergence.csv", index=False)
            for row in moved.itertuples():
                print(
                    f"Direct study, {args.direct // 2} → {args.direct} base samples, "
                    f"{titles[str(row.outcome)]}: widest 95% half-width "
                    f"{100 * row.widest_conf_smaller:.1f} → {100 * row.widest_conf_larger:.1f} pp, "
                    f"largest change of an index {100 * row.max_change:.1f} pp."
                )
        fig, axes = _grid(len(outcomes), (6, 5.5))
        for ax, outcome in zip(axes, outcomes, strict=False):
            plot_emulator_check(both, ax, outcome=outcome, labels=labels, title=titles[outcome])
        fig.suptitle(
            f"Emulated ({runs} runs) against direct Sobol' indices ({args.direct} base samples, "
            f"{direct_calls} calls): {what}"
        )
        fig.savefig(out / f"direct-n{args.direct}.png", dpi=110)
        plt.close(fig)
    result.indices.to_csv(out / "indices.csv", index=False)
    diagnostics.to_csv(out / "diagnostics.csv", index=False)

    fig, axes = _grid(len(outcomes), (7.5, 4.75))
    shown = result.indices[result.indices["n_train"] == n]
    by_size = diagnostics.set_index(["outcome", "n_train"])
    for ax, outcome in zip(axes, outcomes, strict=False):
        q2 = by_size.loc[(outcome, n), "q2"]
        plot_sensitivity(
            shown, ax, outcome=outcome, labels=labels, title=f"{titles[outcome]}\n(held-out Q² {q2:.2f})"
        )
    fig.suptitle(f"{what}: Sobol' indices of a GP emulator fitted to {runs} runs")
    fig.savefig(out / "emulated_sobol.png", dpi=110)

    with pd.option_context("display.width", 160, "display.max_columns", 12):
        print(diagnostics.round(4).to_string(index=False))
        print(result.indices.round(3).to_string(index=False))
    for outcome, (title, _, _) in outcomes.items():
        print(emulated_finding(result, outcome, title=title))
    if args.quick:
        print(f"Quick variant ({n} points): a smoke run, the indices mean nothing.")
    print(f"{runs} calls and the emulators in {wall_s / 60:.1f} min wall ({executor}).")
    print(f"Wrote {out / 'indices.csv'}, {out / 'diagnostics.csv'}, {out / 'emulated_sobol.png'}")
    return 0


def _grid(panels: int, size: tuple[float, float]) -> tuple[plt.Figure, list[plt.Axes]]:
    """A figure of two columns with room for ``panels`` axes (``size``: inches per panel); the
    unused ones are hidden."""
    rows = (panels + 1) // 2
    fig, axes = plt.subplots(
        rows, 2, figsize=(2 * size[0], rows * size[1]), layout="constrained", squeeze=False
    )
    flat = list(axes.flat)
    for ax in flat[panels:]:
        ax.set_visible(False)
    return fig, flat[:panels]


if __name__ == "__main__":  # the processes executor starts fresh interpreters that import this file
    sys.exit(main())
