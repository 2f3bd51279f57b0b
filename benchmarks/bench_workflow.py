"""Benchmark: simulated developer-days per second of the workflow model on one core.

Runs the headline scenario (experiments/scenarios/headline.toml: 10 developers × 20 days on
gpu-batched) for a few seeds and prints (a) wall time, developer-days/s, Mesa events/s, agent
turns per developer-day and events per turn; (b) how the cost grows with the team (developers
10, 100, 1000 at a fixed horizon) and with the horizon (1, 5, 20 days at 20 developers), as
seconds per developer-day and microseconds per event, so that linearity is visible; (c) the
cost of an agent turn as a number of events of reference event loops timed in this process (a bare
stock Mesa model, the project's ``EventModel``, SimPy), which carries over between machines better
than seconds do: the reference loops run interleaved with the headline runs (one timing of each
before every seed) and the figures are medians over seeds of the per-seed ratios; and (d) the
peak resident memory of summary-only runs (``simulate_summary``, the sweeps' path) of 100
developers over growing horizons, each in a fresh process, beside runs that keep the tables; and
(e) where the typed core is in use (``speedtrap --version``), the headline runs of (a) again on it,
each timed right after its Mesa model run (the speed-up in the same process), its cost of a turn in
reference events, and its scaling with the team. (a)-(c) always run the Mesa model
(``WorkflowModel``); the memory runs (d) run ``simulate_summary``, which takes the core where it is
in use.
Times are CPU seconds of this process (steadier than wall time on a shared machine).

The scaling runs keep each developer's load on the backend fixed: the fleet grows with the team
(the headline's 4 replicas for 10 developers, so one replica per 2.5 developers). A developer-day
is ``workday_s`` (8 h) of simulated working time. ``gc`` is the time spent in Python's cyclic
garbage collector during the run, measured through ``gc.callbacks``.

Run: ``python benchmarks/bench_workflow.py [--quick] [--seeds 3]`` (a few minutes; ``--quick``
shortens every horizon tenfold).
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mesa
import simpy

from speedtrap.config import Scenario
from speedtrap.models import WorkflowModel, simulate, simulate_summary
from speedtrap.models.base import EventModel
from speedtrap.models.results import tasks_frame
from speedtrap.models.typed_core import core_module, not_covered, run_core

HEADLINE = Path(__file__).resolve().parents[1] / "experiments" / "scenarios" / "headline.toml"
TEAM_DEVELOPERS = (10, 100, 1000)
TEAM_DAYS = 0.5  # developer-days per developer in the team sweep (1000 developers: 500 developer-days)
HORIZON_DAYS = (1.0, 5.0, 20.0)
HORIZON_DEVELOPERS = 20
QUICK = 0.1  # --quick: every horizon times this, one seed
MEMORY_DEVELOPERS = 100
MEMORY_DAYS = (1.0, 4.0, 16.0, 250.0)  # summary-only horizons of the memory runs (250: a working year);
# the first two also with tables


@dataclass(frozen=True)
class Measurement:
    """One timed run: a scenario × seed, the model run and the results built from it."""

    developers: int
    days: float
    replicas: int
    developer_days: float
    run_s: float
    result_s: float
    gc_s: float
    turns: int
    events: int

    @property
    def total_s(self) -> float:
        """Seconds for the run and its results."""
        return self.run_s + self.result_s

    @property
    def dev_days_per_s(self) -> float:
        return self.developer_days / self.total_s

    @property
    def s_per_dev_day(self) -> float:
        return self.total_s / self.developer_days

    @property
    def events_per_s(self) -> float:
        return self.events / self.run_s

    @property
    def us_per_event(self) -> float:
        """Microseconds of model run (not results) per executed event."""
        return self.run_s / self.events * 1e6

    @property
    def turns_per_dev_day(self) -> float:
        return self.turns / self.developer_days

    @property
    def events_per_turn(self) -> float:
        return self.events / self.turns


def scaled(base: Scenario, developers: int, days: float) -> Scenario:
    """``base`` with ``developers`` and a horizon of ``days`` developer-days each; every backend's
    fleet scaled with the team (replicas × developers / base developers, at least 1)."""
    overrides: dict[str, object] = {"developers": developers, "horizon_s": days * base.workday_s}
    for name, backend in base.backends.items():
        replicas = max(1, round(backend.replicas * developers / base.developers))
        overrides[f"backends.{name}.replicas"] = replicas
    return base.with_overrides(overrides)


class _GcClock:
    """Accumulates the seconds Python's garbage collector runs while installed."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.process_time()
        else:
            self.seconds += time.process_time() - self._start


def _timed(
    scenario: Scenario, run: Callable[[], Any], results: Callable[[Any], tuple[int, int]]
) -> Measurement:
    """Time ``run()`` (building and running the model) and then ``results(model)`` (building its
    results; it returns the agent turns and the events executed) on ``scenario``."""
    gc.collect()
    clock = _GcClock()
    gc.callbacks.append(clock)
    try:
        t0 = time.process_time()
        model = run()
        t1 = time.process_time()
        turns, events = results(model)
        t2 = time.process_time()
    finally:
        gc.callbacks.remove(clock)
    return Measurement(
        developers=scenario.developers,
        days=scenario.horizon_s / scenario.workday_s,
        replicas=sum(b.replicas for b in scenario.backends.values()),
        developer_days=scenario.developer_days,
        run_s=t1 - t0,
        result_s=t2 - t1,
        gc_s=clock.seconds,
        turns=turns,
        events=events,
    )


def measure(scenario: Scenario, seed: int) -> Measurement:
    """Time one run of ``scenario`` on the Mesa model (construction and ``run_until``) and building
    its results."""

    def run() -> WorkflowModel:
        model = WorkflowModel(scenario, rng=seed)
        model.run_until(scenario.horizon_s)
        return model

    return _timed(scenario, run, lambda model: (len(model.result().requests), model.events_executed))


def measure_core(scenario: Scenario, seed: int) -> Measurement | None:
    """Time one run of ``scenario`` on the typed core (``speedtrap.models.typed_core``) and building
    the tables ``simulate`` returns; ``None`` where the core is not in use or does not cover it."""
    module = core_module()
    if module is None or not_covered(scenario) is not None:
        return None

    def results(run: Any) -> tuple[int, int]:
        tasks_frame(run.tasks())
        run.ledger_frame(), run.backend_stats_frame(), run.stretches_frame()
        return len(run.requests_frame()), run.event_counts()[1]

    return _timed(scenario, lambda: run_core(module, scenario, seed), results)


# ---------------------------------------------------------------------- reference event loops


class _Tick:
    """Reschedules itself ``n`` times, one time unit apart (a bound method: Mesa holds it weakly)."""

    def __init__(self, model: mesa.Model, n: int) -> None:
        self.model, self.left = model, n

    def fire(self) -> None:
        self.left -= 1
        if self.left:
            self.model.schedule_event(self.fire, after=1.0)


def mesa_event_us(model_class: type[mesa.Model], events: int = 100_000) -> float:
    """Microseconds per event (schedule, pop, run a no-op bound method) of an event-only model."""
    model = model_class(rng=0)
    if model_class is mesa.Model:
        model._default_schedule.stop()  # as EventModel does: no unit-interval step loop
    tick = _Tick(model, events)
    model.schedule_event(tick.fire, after=1.0)
    start = time.process_time()
    model.run_until(events + 1.0)
    return (time.process_time() - start) / events * 1e6


def simpy_event_us(events: int = 100_000) -> float:
    """Microseconds per SimPy timeout event of one process looping ``events`` times."""
    env = simpy.Environment()

    def loop():  # type: ignore[no-untyped-def]
        for _ in range(events):
            yield env.timeout(1.0)

    env.process(loop())
    start = time.process_time()
    env.run()
    return (time.process_time() - start) / events * 1e6


@dataclass(frozen=True)
class References:
    """Per-event cost of reference event loops in this process, microseconds."""

    mesa_us: float
    event_model_us: float
    simpy_us: float


def references(events: int = 100_000, repeats: int = 1) -> References:
    """The median of ``repeats`` timings of each reference loop (taken in turn)."""
    samples = [
        (mesa_event_us(mesa.Model, events), mesa_event_us(EventModel, events), simpy_event_us(events))
        for _ in range(repeats)
    ]
    mesa_us, event_model_us, simpy_us = (statistics.median(column) for column in zip(*samples, strict=True))
    return References(mesa_us=mesa_us, event_model_us=event_model_us, simpy_us=simpy_us)


# ---------------------------------------------------------------------- memory


def peak_rss_mib(scenario: Scenario, seed: int = 0, *, tables: bool = False) -> tuple[float, float]:
    """(baseline, peak) resident memory in MiB of a fresh process that loads speedtrap and runs
    ``scenario`` (summary only, or keeping the tables and building the results)."""
    payload = json.dumps({"scenario": scenario.model_dump(mode="json"), "seed": seed, "tables": tables})
    out = subprocess.run(
        [sys.executable, __file__, "--peak-rss-child"],
        input=payload,
        capture_output=True,
        text=True,
        check=True,
    )
    baseline, peak = json.loads(out.stdout.splitlines()[-1])
    return baseline, peak


def _peak_mib() -> float:
    """This process's peak resident memory, MiB: Linux's ``VmHWM`` (``ru_maxrss`` there survives
    ``exec`` and would report a large parent's peak), else ``ru_maxrss``."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024  # bytes on macOS, KiB on Linux


def _peak_rss_child() -> None:
    """The child of :func:`peak_rss_mib`: reads its run from stdin, prints [baseline, peak] MiB."""
    data = json.loads(sys.stdin.read())
    scenario = Scenario.model_validate(data["scenario"])
    baseline = _peak_mib()
    if data["tables"]:
        simulate(scenario, data["seed"]).summary()
    else:
        simulate_summary(scenario, data["seed"])
    print(json.dumps([baseline, _peak_mib()]))


# ---------------------------------------------------------------------- report


def headline_line(label: str, m: Measurement) -> str:
    return (
        f"{label}: {m.total_s:6.2f} s (run {m.run_s:.2f} s, results {m.result_s:.2f} s, gc {m.gc_s:.2f} s)  "
        f"{m.dev_days_per_s:6.1f} developer-days/s  {m.events_per_s:9,.0f} events/s  "
        f"{m.turns_per_dev_day:4.0f} turns/developer-day  {m.events_per_turn:.2f} events/turn"
    )


SCALING_HEADER = (
    f"{'developers':>10} {'days':>6} {'replicas':>8} {'dev-days':>9} {'turns':>9} {'events':>10} "
    f"{'seconds':>8} {'s/dev-day':>10} {'µs/event':>9} {'gc':>5}"
)


def scaling_line(m: Measurement) -> str:
    return (
        f"{m.developers:>10} {m.days:>6g} {m.replicas:>8} {m.developer_days:>9g} {m.turns:>9,} "
        f"{m.events:>10,} {m.total_s:>8.2f} {m.s_per_dev_day * 1000:>7.2f} ms {m.us_per_event:>9.2f} "
        f"{m.gc_s / m.total_s:>5.0%}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--scenario", type=Path, default=HEADLINE)
    parser.add_argument("--seeds", type=int, default=3, help="seeds of the headline runs (default 3)")
    parser.add_argument("--quick", action="store_true", help=f"every horizon × {QUICK:g}, one seed")
    parser.add_argument("--factor", type=float, default=None, help="every horizon × this (default 1)")
    parser.add_argument("--developers", type=int, nargs="+", default=list(TEAM_DEVELOPERS))
    parser.add_argument("--team-days", type=float, default=TEAM_DAYS, help="days per developer, team sweep")
    parser.add_argument("--days", type=float, nargs="+", default=list(HORIZON_DAYS), help="horizon sweep")
    parser.add_argument("--reference-events", type=int, default=100_000)
    parser.add_argument(
        "--memory-days", type=float, nargs="*", default=list(MEMORY_DAYS), help="memory runs (none: skip)"
    )
    parser.add_argument("--memory-only", action="store_true", help="only the memory runs (d)")
    parser.add_argument("--peak-rss-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.peak_rss_child:
        _peak_rss_child()
        return
    factor = args.factor if args.factor is not None else QUICK if args.quick else 1.0
    seeds = 1 if args.quick else args.seeds
    base = Scenario.from_toml(args.scenario)
    if not args.memory_only:
        speed_sections(args, base, factor, seeds)
    if args.memory_days:
        memory_section(base, factor, args.memory_days)


def speed_sections(args: argparse.Namespace, base: Scenario, factor: float, seeds: int) -> None:
    """(a) the headline runs, (b) scaling, (c) the cost of a turn in reference events."""
    headline = scaled(base, base.developers, factor * base.horizon_s / base.workday_s)

    print(
        f"speedtrap workflow benchmark: Python {platform.python_version()}, Mesa {mesa.__version__}, "
        f"one process ({platform.machine()})"
    )
    days = headline.horizon_s / headline.workday_s
    print(
        f"(a) {headline.name}: {headline.developers} developers x {days:g} days = "
        f"{headline.developer_days:g} developer-days"
    )
    runs: list[Measurement] = []
    core_runs: list[Measurement] = []
    refs_by_seed: list[References] = []
    for seed in range(seeds):  # interleaved: the reference loops, then the runs, seed by seed
        refs_by_seed.append(references(args.reference_events))
        runs.append(measure(headline, seed))
        core = measure_core(headline, seed)
        if core is not None:
            core_runs.append(core)
    for seed, m in enumerate(runs):
        print(headline_line(f"seed {seed}", m))
    total_s = sum(m.total_s for m in runs)
    dev_days = sum(m.developer_days for m in runs)
    events = sum(m.events for m in runs)
    run_s = sum(m.run_s for m in runs)
    print(
        f"all seeds: {dev_days / total_s:.1f} developer-days/s, {events / run_s:,.0f} events/s, "
        f"{sum(m.turns for m in runs) / dev_days:.0f} turns/developer-day, "
        f"{events / sum(m.turns for m in runs):.2f} events/turn"
    )

    per_replica = base.developers / sum(b.replicas for b in base.backends.values())
    print(
        f"(b) scaling, seed 0; the fleet grows with the team ({per_replica:g} developers per replica); "
        "seconds include building the results"
    )
    print(SCALING_HEADER)
    team = [measure(scaled(base, n, factor * args.team_days), 0) for n in args.developers]
    for m in team:
        print(scaling_line(m))
    print()
    horizon = [measure(scaled(base, HORIZON_DEVELOPERS, factor * d), 0) for d in args.days]
    for m in horizon:
        print(scaling_line(m))
    for label, rows in (("developers", team), ("days", horizon)):
        if len(rows) > 1:
            first, last = rows[0], rows[-1]
            grow = last.developer_days / first.developer_days
            print(
                f"{label} x{grow:g}: cost x{last.total_s / first.total_s:.1f} "
                f"(s/dev-day x{last.s_per_dev_day / first.s_per_dev_day:.2f}, "
                f"µs/event x{last.us_per_event / first.us_per_event:.2f})"
            )

    def median(values: Sequence[float]) -> float:
        return statistics.median(values)

    us_turn = [m.total_s / m.turns * 1e6 for m in runs]
    print(
        f"(c) reference event loops, interleaved with the {seeds} headline runs (medians): stock Mesa "
        f"{median([r.mesa_us for r in refs_by_seed]):.2f} µs/event, EventModel "
        f"{median([r.event_model_us for r in refs_by_seed]):.2f} µs/event, SimPy "
        f"{median([r.simpy_us for r in refs_by_seed]):.2f} µs/event"
    )
    pairs = list(zip(us_turn, refs_by_seed, strict=True))
    print(
        f"headline: {median(us_turn):.1f} µs per agent turn (results included) = "
        f"{median([u / r.mesa_us for u, r in pairs]):.1f} stock Mesa events = "
        f"{median([u / r.event_model_us for u, r in pairs]):.1f} EventModel events = "
        f"{median([u / r.simpy_us for u, r in pairs]):.1f} SimPy events"
    )
    core_section(args, base, factor, runs, core_runs, refs_by_seed)


def core_section(
    args: argparse.Namespace,
    base: Scenario,
    factor: float,
    runs: Sequence[Measurement],
    core_runs: Sequence[Measurement],
    refs_by_seed: Sequence[References],
) -> None:
    """(e) the typed core: the headline runs of (a) again on the core, each timed right after its Mesa
    run; the cost of a turn in reference events; the core's scaling with the team, each size timed
    right after a Mesa model run of it."""
    if not core_runs:
        reason = "it is not in use" if core_module() is None else "it does not cover the scenario"
        print(f"(e) typed core: not measured ({reason}: speedtrap --version says which build runs)")
        return
    print("(e) typed core (Cython): the headline runs of (a) again, each right after its Mesa model run")
    for seed, m in enumerate(core_runs):
        print(headline_line(f"seed {seed}", m))
    speedups = [mesa.total_s / core.total_s for mesa, core in zip(runs, core_runs, strict=True)]
    us_turn = [m.total_s / m.turns * 1e6 for m in core_runs]
    pairs = list(zip(us_turn, refs_by_seed, strict=True))
    print(
        f"headline on the core: {statistics.median(us_turn):.2f} µs per agent turn (results included) = "
        f"{statistics.median([u / r.event_model_us for u, r in pairs]):.2f} EventModel events; "
        f"{statistics.median(speedups):.2f}x the Mesa model's developer-days/s in this process "
        f"(seeds {min(speedups):.2f}-{max(speedups):.2f}x)"
    )
    print(SCALING_HEADER)
    for n in args.developers:  # each size on the Mesa model, then on the core
        scenario = scaled(base, n, factor * args.team_days)
        on_mesa = measure(scenario, 0)
        core = measure_core(scenario, 0)
        assert core is not None
        print(f"{scaling_line(core)}  ({on_mesa.total_s / core.total_s:.1f}x the Mesa model run just before)")


def memory_section(base: Scenario, factor: float, memory_days: Sequence[float]) -> None:
    """(d) peak resident memory of summary-only runs (and, for the first two horizons, with tables)."""
    print(
        f"(d) peak resident memory, fresh process per run, {MEMORY_DEVELOPERS} developers "
        "(baseline: after loading speedtrap)"
    )
    for days in memory_days:
        scenario = scaled(base, MEMORY_DEVELOPERS, factor * days)
        kinds = (False, True) if days in memory_days[:2] else (False,)
        for tables in kinds:
            start = time.perf_counter()
            baseline, peak = peak_rss_mib(scenario, tables=tables)
            label = "tables kept " if tables else "summary only"
            print(
                f"{label}: {scenario.developer_days:>6g} developer-days: peak {peak:6.0f} MiB "
                f"(baseline {baseline:.0f} MiB, run {peak - baseline:+.0f} MiB; "
                f"{time.perf_counter() - start:.0f} s wall)",
                flush=True,
            )


if __name__ == "__main__":
    main()
