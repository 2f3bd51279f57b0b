"""Benchmark: an earlier wave's cut over new candidates, as the calibration applies it.

A calibration wave draws up to 8 × 100,000 candidates and applies every earlier wave's cut to them
before its own (``speedtrap.analysis.history_matching.non_implausible_mask``); the cut evaluates one
Gaussian-process emulator per target (24 in the README's calibration, 38 parameters, about 130
training runs each). This times, interleaved in one process on the same candidates:

* the reference: every used target's emulated mean and variance as two calls (``predict``, then
  ``variance``; a log-scale emulator computes its Matérn correlations twice in each), then the
  ``order``-th largest implausibility (the cut as it was computed before 2026-12-07);
* ``Wave.survives``: mean and variance from one pass (``moments``), target by target, each later
  target evaluated only at the candidates still in.

The wave is the README calibration's first wave, refitted from its stored runs
(``experiments/calibration/wave1.csv``: 128 runs of the 38 parameters and the 24 targets' simulated
means, the calibration's emulator settings), and the candidates are drawn in the unit cube, as the
next wave's first batch is. Both must keep the same candidates (checked). Run:
``python benchmarks/bench_history_matching.py [--candidates 100000] [--repeat 3]``; it prints the
median CPU seconds of each and their ratio (on a busy machine CPU seconds are what an idle one's
wall time would be).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from speedtrap.analysis.emulator import emulator_inputs
from speedtrap.analysis.history_matching import Wave, candidate_sample, history_matching_wave, kth_largest
from speedtrap.experiments.calibration import calibration_setup
from speedtrap.validation.workflow import default_scenarios

ROOT = Path(__file__).resolve().parents[1]
WAVE1 = ROOT / "experiments" / "calibration" / "wave1.csv"


def stored_first_wave(jobs: int) -> Wave:
    """The README calibration's first wave, its emulators refitted from ``wave1.csv``."""
    setup = calibration_setup(default_scenarios(ROOT))
    runs = pd.read_csv(WAVE1)
    unit = np.column_stack([p.to_unit(runs[p.name].to_numpy(dtype=float)) for p in setup.parameters])
    outputs = {t.name: runs[t.name].to_numpy(dtype=float) for t in setup.targets}
    return history_matching_wave(unit, outputs, setup.targets, setup.parameters, candidates=1_000, jobs=jobs)


def reference_kept(wave: Wave, unit: np.ndarray) -> np.ndarray:
    """The cut as two calls per target over every candidate (module docstring)."""
    x = emulator_inputs([p.factor for p in wave.parameters], unit)
    columns = []
    for te in wave.emulators:
        if te.used and te.emulator is not None:
            mean, variance = te.emulator.predict(x), te.variance_scale * te.emulator.variance(x)
            columns.append(te.target.implausibility(mean, variance))
    return np.asarray(kth_largest(np.column_stack(columns), wave.order) <= wave.cutoff)


def cpu(run: Callable[[np.ndarray], np.ndarray], unit: np.ndarray) -> tuple[np.ndarray, float]:
    """(what ``run(unit)`` returns, its CPU seconds)."""
    start = time.process_time()
    kept = run(unit)
    return kept, time.process_time() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=100_000, help="candidates per timing")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved timings of each (median reported)")
    parser.add_argument("--jobs", type=int, default=2, help="processes fitting the emulators (not timed)")
    args = parser.parse_args(argv)
    wave = stored_first_wave(args.jobs)
    d = len(wave.parameters)
    used = sum(te.used for te in wave.emulators)
    times: dict[str, list[float]] = {"reference": [], "survives": []}
    kept = np.zeros(0, dtype=bool)
    for r in range(args.repeat):
        unit = candidate_sample(args.candidates, np.zeros(d), np.ones(d), seed=100 + r)
        old, t_old = cpu(lambda u: reference_kept(wave, u), unit)
        kept, t_new = cpu(wave.survives, unit)
        assert np.array_equal(old, kept), "the two cuts keep different candidates"
        times["reference"].append(t_old)
        times["survives"].append(t_new)
    ref, new = (statistics.median(times[k]) for k in ("reference", "survives"))
    print(
        f"{args.candidates:,} candidates in the unit cube, the stored calibration's wave 1 ({used} of "
        f"{len(wave.emulators)} targets' emulators used, {d} parameters, "
        f"{wave.emulators[0].n_train} training runs); {int(kept.sum()):,} kept in the last (the same by both)"
    )
    print(f"reference (predict + variance, every target): {ref:.2f} CPU-s (median of {args.repeat})")
    print(f"Wave.survives (moments, target by target):   {new:.2f} CPU-s")
    print(f"ratio: {ref / new:.1f}x less CPU time")


if __name__ == "__main__":
    main()
