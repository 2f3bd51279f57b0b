"""Benchmark: the typed-core prototype (mmc_core.pyx) against the serving pool on the pool benchmark.

The workload of ``benchmarks/bench_pool.py`` (M/M/c: λ = 7.2 /s, μ = 1 /s, c = 8; 100k customers):
each repetition runs, in turn, the pool on its Mesa model, the pool on a minimal heap clock, SimPy
and the typed core on the very same customers, timed in CPU seconds of this process; the script
prints each engine's median customers/s, the medians of the per-repetition ratios, the events per
customer, and the largest difference between the typed core's queue waits and the pool's (the same
queue, not the same arithmetic: agreement to rounding, not bit for bit). Which build of the pool
runs is printed first (``SPEEDTRAP_PURE=1``: the pure-Python modules).

Build the prototype first (Cython and a C compiler; not part of the package):
``cd benchmarks/typed_core && python setup.py build_ext --inplace``; then
``python benchmarks/typed_core/bench_typed_core.py [--customers 100000] [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import mmc_core  # noqa: E402  (the prototype, built in place)
from bench_pool import SERVERS, run_pool, run_pool_heap_clock, run_simpy  # noqa: E402

from speedtrap.build import pool_build  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--customers", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"serving pool build: {pool_build()}")
    rates: dict[str, list[float]] = {}
    ratios: dict[str, list[float]] = {}
    worst_wait_gap = 0.0
    events = (0.0, 0.0)
    for rep in range(args.repeats):
        mesa_pool, workload = run_pool(args.customers, seed=1 + rep)
        heap_pool = run_pool_heap_clock(workload)
        simpy_run = run_simpy(workload)
        start = time.process_time()
        waits, scheduled, _, cancelled = mmc_core.run(workload.gaps_s, workload.output_tokens, 1, SERVERS)
        typed_s = time.process_time() - start
        n = len(workload.gaps_s)
        typed_rate = n / typed_s
        worst_wait_gap = max(worst_wait_gap, float(abs(waits - heap_pool.waits_s).max()))
        events = (scheduled / n, cancelled / n)
        for name, rate in (
            ("pool (Mesa)", mesa_pool.customers_per_s),
            ("pool (heap clock)", heap_pool.customers_per_s),
            ("SimPy", simpy_run.customers_per_s),
            ("typed core", typed_rate),
        ):
            rates.setdefault(name, []).append(rate)
        ratios.setdefault("typed core / pool (Mesa)", []).append(typed_rate / mesa_pool.customers_per_s)
        ratios.setdefault("typed core / pool (heap clock)", []).append(typed_rate / heap_pool.customers_per_s)
        ratios.setdefault("typed core / SimPy", []).append(typed_rate / simpy_run.customers_per_s)
        pool_rate = mesa_pool.customers_per_s
        ratios.setdefault("pool (Mesa) / SimPy", []).append(pool_rate / simpy_run.customers_per_s)
        print(f"repetition {rep + 1}/{args.repeats} done", flush=True)
    print(f"\n{args.customers} customers, {args.repeats} interleaved repetitions (CPU seconds)")
    for name, values in rates.items():
        print(f"  {name:<20} {statistics.median(values):>12,.0f} customers/s (median)")
    for name, values in ratios.items():
        print(f"  {name:<32} {statistics.median(values):6.2f}x  (range {min(values):.2f}-{max(values):.2f})")
    print(f"  typed core: {events[0]:.2f} events scheduled per customer, {events[1]:.3f} cancelled")
    print(f"  largest |typed core wait - pool wait|: {worst_wait_gap:.3g} s")


if __name__ == "__main__":
    main()
