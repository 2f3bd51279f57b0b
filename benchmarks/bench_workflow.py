"""Benchmark: simulated developer-days per second of the workflow model on one core.

Runs a scenario (default: experiments/scenarios/headline.toml, 20 developers × 5 days on
gpu-batched) with a few seeds and prints wall time, developer-days/s, agent turns per
developer-day, the pool's events per turn and where the time goes (model run vs. building results).

Run: ``python benchmarks/bench_workflow.py [--scenario PATH] [--days 5] [--seeds 3]``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from speedtrap.config import Scenario
from speedtrap.models import WorkflowModel

HEADLINE = Path(__file__).resolve().parents[1] / "experiments" / "scenarios" / "headline.toml"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", type=Path, default=HEADLINE)
    parser.add_argument("--days", type=float, default=None, help="override the horizon, in developer-days")
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)
    scenario = Scenario.from_toml(args.scenario)
    if args.days is not None:
        scenario = scenario.with_overrides({"horizon_s": args.days * scenario.workday_s})
    days = scenario.horizon_s / scenario.workday_s
    print(f"{scenario.name}: {scenario.developers} developers x {days:g} days")
    for seed in range(args.seeds):
        t0 = time.perf_counter()
        model = WorkflowModel(scenario, rng=seed)
        model.run_until(scenario.horizon_s)
        t1 = time.perf_counter()
        result = model.result()
        t2 = time.perf_counter()
        turns = len(result.requests)
        pool_events = sum(b.pool.events_scheduled for b in model.backends.values())
        days = scenario.developer_days
        print(
            f"seed {seed}: {t2 - t0:6.2f} s  {days / (t2 - t0):6.1f} developer-days/s  "
            f"(run {t1 - t0:.2f} s, results {t2 - t1:.2f} s)  {turns / days:.0f} turns/developer-day  "
            f"{pool_events / turns:.1f} pool events/turn"
        )


if __name__ == "__main__":
    main()
