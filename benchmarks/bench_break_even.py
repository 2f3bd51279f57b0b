"""Benchmark: how long the app's analytic break-even map takes to compute.

The map (``speedtrap.app.break_even``) is m*(speed-up) of backend B against A at the speed-ups
``SPEEDUPS`` to ``XTOL``, for the scenario the app starts with (headline, gpu-batched against
wafer-distilled) put under the analytic model's rules. Times two ways of computing it, as fresh
computations (no cache), and counts the mean-value model's evaluations (``expected_task_time``):

* one solve per speed-up from the whole interval (``break_even_failure_multiplier``, as the map
  was computed before; each value of the gain now computed once);
* the curve (``break_even_curve``): the baseline once, each m* bracketed around the previous one.

Run: ``python benchmarks/bench_break_even.py [--repeat 3]``; it prints the median wall and CPU
seconds of each (on a busy machine the CPU seconds are what an idle one's wall time would be), their
evaluations and the largest difference between their values (within 2 × XTOL).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from speedtrap.analysis import break_even
from speedtrap.app.break_even import SPEEDUPS, XTOL, analytic_case
from speedtrap.app.settings import Settings, build_arms


def counted(run: Callable[[], list[float]]) -> tuple[list[float], int, float, float]:
    """(values, model evaluations, wall seconds, CPU seconds) of ``run()``."""
    calls = 0
    model = break_even.expected_task_time

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        return model(*args, **kwargs)

    break_even.expected_task_time = counting  # type: ignore[assignment]
    try:
        start, cpu = time.perf_counter(), time.process_time()
        values = run()
        return values, calls, time.perf_counter() - start, time.process_time() - cpu
    finally:
        break_even.expected_task_time = model  # type: ignore[assignment]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="Runs of each (median reported).")
    args = parser.parse_args(argv)
    case = analytic_case(build_arms(Settings()).scenarios)
    assert not isinstance(case, str), case
    scenario, baseline, fast = case
    ways: dict[str, Callable[[], list[float]]] = {
        "one solve per speed-up": lambda: [
            break_even.break_even_failure_multiplier(
                scenario, speedup=s, baseline=baseline, fast=fast, xtol=XTOL
            )
            for s in SPEEDUPS
        ],
        "curve (break_even_curve)": lambda: break_even.break_even_curve(
            scenario, SPEEDUPS, baseline=baseline, fast=fast, xtol=XTOL
        ),
    }
    values = {}
    for name, way in ways.items():
        runs = [counted(way) for _ in range(args.repeat)]
        values[name] = runs[0][0]
        wall = statistics.median(r[2] for r in runs)
        cpu = statistics.median(r[3] for r in runs)
        print(
            f"{name:<26} {wall:6.2f} s wall  {cpu:6.2f} s CPU (medians of {args.repeat})  "
            f"{runs[0][1]:3d} model evaluations"
        )
    first, second = values.values()
    gap = max(abs(a - b) for a, b in zip(first, second, strict=True))
    print(f"m* at {', '.join(f'{s:g}x' for s in SPEEDUPS)}: {', '.join(f'{m:.3f}' for m in second)}")
    print(f"largest difference between the two: {gap:.4f} (each within XTOL = {XTOL:g} of m*)")
    print("(on an idle machine the wall time is about the CPU time; a busy one takes several times longer)")


if __name__ == "__main__":
    main()
