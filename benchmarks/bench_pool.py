"""Benchmark: the serving pool as an M/M/c queue against equivalent SimPy and Ciw models.

Workload (docs/design.md §4): λ = 7.2 arrivals/s, μ = 1 /s, c = 8 slots; Erlang C gives Wq = 0.877 s.
The pool runs it as ``OpenArrivalModel`` (a Mesa model) with ``FixedRate`` decoding: output
tokens geometric on {1, 2, …} with mean 1001 at 1000 tok/s per stream (the first token comes with
the zero-length prefill, so the 1000 mean decode steps give a memoryless service of mean 1 s),
c = replicas × batch cap. SimPy
replays the very same arrivals and service times through ``simpy.Resource(capacity=c)``, and Ciw
(a queueing-network library) through one node of c servers fed by the same sequences. All run in
this process, interleaved: each repetition runs every engine once, in turn, so that a change of
load on a shared machine reaches them alike. Times are CPU seconds of this process (steadier than
wall time under load); the script prints each engine's median customers/s, the median over
repetitions of the ratios pool/SimPy and pool/Ciw, the clock events per request, and the mean waits
against Erlang C (± 4 batch-means standard errors). For reference it also times the pool on a
minimal heap clock (no Mesa) and one bare Mesa event, which shows where the time goes, and one
evaluation of the step-time function that the pool, ``speedtrap pareto`` and ``speedtrap validate
serving`` share (``ReplicaPhysics``; microseconds).

Run: ``python benchmarks/bench_pool.py [--customers 100000] [--repeats 5] [--layout 1x8]``.
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import ciw
import numpy as np
import simpy

from speedtrap.analysis.queueing import mmc_mean_wait_s
from speedtrap.config import Price, Tier
from speedtrap.models.base import EventModel
from speedtrap.models.open_arrival import ArrivalStream, OpenArrivalModel
from speedtrap.serving.pool import ServingPool
from speedtrap.serving.speed import FixedRate

ARRIVAL_RATE_PER_S = 7.2
SERVERS = 8
DECODE_RATE_TOK_S = 1000.0
MEAN_OUTPUT_TOKENS = 1001.0  # 1000 decode steps after the first token at the rate above: μ = 1
WARMUP_FRACTION = 0.01


@dataclass(frozen=True)
class Timing:
    """One engine's run of the workload."""

    engine: str
    customers: int
    seconds: float
    waits_s: np.ndarray  # queue waits in arrival order
    events_per_request: float = float("nan")
    cancelled_per_request: float = float("nan")

    @property
    def customers_per_s(self) -> float:
        return self.customers / self.seconds


@dataclass(frozen=True)
class Workload:
    """The customers of one run: inter-arrival gaps and service demands (output tokens)."""

    gaps_s: list[float]
    output_tokens: list[int]


def run_pool(
    customers: int, *, replicas: int = 1, batch_cap: int = SERVERS, seed: int = 1
) -> tuple[Timing, Workload]:
    """The pool on its Mesa open-arrival driver, until ≈ ``customers`` have arrived and all left."""
    horizon_s = customers / ARRIVAL_RATE_PER_S
    start = time.process_time()
    model = OpenArrivalModel(
        speed=FixedRate(DECODE_RATE_TOK_S),
        replicas=replicas,
        tiers=[Tier(batch_cap=batch_cap)],
        arrivals=[
            ArrivalStream(
                rate_per_s=ARRIVAL_RATE_PER_S,
                mean_output_tokens=MEAN_OUTPUT_TOKENS,
                input_tokens=0,
                cached_tokens=0,
            )
        ],
        arrivals_end_s=horizon_s,
        rng=seed,
    )
    model.run_until(horizon_s)
    while model.pool.in_system:
        model.run_for(100.0)
    seconds = time.process_time() - start
    pool = model.pool
    n = pool.submitted
    finished = sorted(pool.finished, key=lambda r: r.id)
    arrivals = [r.arrival_s for r in finished]
    workload = Workload(
        gaps_s=[b - a for a, b in zip([0.0, *arrivals[:-1]], arrivals, strict=True)],
        output_tokens=[r.output_tokens for r in finished],
    )
    timing = Timing(
        engine="pool (Mesa)",
        customers=n,
        seconds=seconds,
        waits_s=np.array([r.queue_wait_s for r in finished]),
        events_per_request=(pool.events_scheduled + n) / n,  # + one arrival event each
        cancelled_per_request=pool.events_cancelled / n,
    )
    return timing, workload


def run_simpy(workload: Workload, *, servers: int = SERVERS) -> Timing:
    """The same customers through ``simpy.Resource(capacity=servers)``."""
    gaps = workload.gaps_s
    services = [(k - 1) / DECODE_RATE_TOK_S for k in workload.output_tokens]  # first token: prefill
    waits = [0.0] * len(gaps)
    env = simpy.Environment()
    servers_res = simpy.Resource(env, capacity=servers)

    def customer(i: int):  # type: ignore[no-untyped-def]
        arrived = env.now
        with servers_res.request() as req:
            yield req
            waits[i] = env.now - arrived
            yield env.timeout(services[i])

    def source():  # type: ignore[no-untyped-def]
        for i, gap in enumerate(gaps):
            yield env.timeout(gap)
            env.process(customer(i))

    start = time.process_time()
    env.process(source())
    env.run()
    seconds = time.process_time() - start
    return Timing(engine="SimPy", customers=len(gaps), seconds=seconds, waits_s=np.array(waits))


def run_ciw(workload: Workload, *, servers: int = SERVERS) -> Timing:
    """The same customers through one Ciw node of ``servers`` servers (FIFO): arrivals and service
    times replayed in order (``ciw.dists.Sequential``; a last, endless gap stops the arrivals)."""
    gaps = workload.gaps_s
    services = [(k - 1) / DECODE_RATE_TOK_S for k in workload.output_tokens]  # first token: prefill
    network = ciw.create_network(
        arrival_distributions=[ciw.dists.Sequential([*gaps, 1e18])],
        service_distributions=[ciw.dists.Sequential(services)],
        number_of_servers=[servers],
    )
    with warnings.catch_warnings():  # Ciw deep-copies its itertools-based Sequential distributions
        warnings.filterwarnings("ignore", "Pickle, copy, and deepcopy support", DeprecationWarning)
        start = time.process_time()
        sim = ciw.Simulation(network)
        sim.simulate_until_max_time(sum(gaps) + 1e6)
        seconds = time.process_time() - start
    records = sorted(sim.get_all_records(), key=lambda r: r.id_number)
    return Timing(
        engine="Ciw",
        customers=len(records),
        seconds=seconds,
        waits_s=np.array([r.waiting_time for r in records]),
    )


class _HeapEvent:
    __slots__ = ("cancelled", "fn")

    def __init__(self, fn: Callable[[], None]) -> None:
        self.fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class HeapClock:
    """A minimal event clock (a heap of (time, seq, event) tuples, like SimPy's core), for reference."""

    def __init__(self) -> None:
        self.time = 0.0
        self._heap: list[tuple[float, int, _HeapEvent]] = []
        self._seq = itertools.count()

    def schedule_event(
        self, fn: Callable[[], None], *, at: float | None = None, after: float | None = None
    ) -> _HeapEvent:
        event = _HeapEvent(fn)
        when = at if at is not None else self.time + (after or 0.0)
        heapq.heappush(self._heap, (when, next(self._seq), event))
        return event

    def run(self) -> None:
        heap = self._heap
        while heap:
            when, _, event = heapq.heappop(heap)
            if not event.cancelled:
                self.time = when
                event.fn()


class _Replay:
    """Feeds a workload into a pool on a HeapClock."""

    def __init__(self, clock: HeapClock, pool: ServingPool, workload: Workload) -> None:
        self.clock, self.pool, self.workload, self.i = clock, pool, workload, 0

    def arrive(self) -> None:
        self.pool.submit(
            tier="standard",
            input_tokens=0,
            cached_tokens=0,
            output_tokens=self.workload.output_tokens[self.i],
        )
        self.i += 1
        if self.i < len(self.workload.gaps_s):
            self.clock.schedule_event(self.arrive, after=self.workload.gaps_s[self.i])


def run_pool_heap_clock(workload: Workload, *, replicas: int = 1, batch_cap: int = SERVERS) -> Timing:
    """The pool alone, driven by :class:`HeapClock` instead of Mesa (the pool's own cost)."""
    start = time.process_time()
    clock = HeapClock()
    pool = ServingPool(
        clock,
        FixedRate(DECODE_RATE_TOK_S),
        replicas=replicas,
        tiers=[Tier(batch_cap=batch_cap)],
        price=Price(),
    )
    replay = _Replay(clock, pool, workload)
    clock.schedule_event(replay.arrive, after=workload.gaps_s[0])
    clock.run()
    seconds = time.process_time() - start
    finished = sorted(pool.finished, key=lambda r: r.id)
    return Timing(
        engine="pool (heap clock)",
        customers=len(finished),
        seconds=seconds,
        waits_s=np.array([r.queue_wait_s for r in finished]),
        events_per_request=(pool.events_scheduled + len(finished)) / len(finished),
        cancelled_per_request=pool.events_cancelled / len(finished),
    )


class _Tick:
    def __init__(self, model: EventModel, n: int) -> None:
        self.model, self.left = model, n

    def fire(self) -> None:
        self.left -= 1
        if self.left:
            self.model.schedule_event(self.fire, after=1.0)


def mesa_event_cost_us(events: int = 100_000) -> float:
    """Microseconds per bare event of ``EventModel`` (a Mesa model; schedule + pop + execute of a no-op
    bound method, through its lean bound-method path)."""
    model = EventModel(rng=0)
    tick = _Tick(model, events)
    model.schedule_event(tick.fire, after=1.0)
    start = time.process_time()
    model.run_until(events + 1.0)
    return (time.process_time() - start) / events * 1e6


def mean_wait_check(waits_s: np.ndarray, theory_s: float, batches: int = 20) -> tuple[float, float, bool]:
    """(mean wait, batch-means standard error, within 4 SE of theory) after a 1% warm-up."""
    kept = waits_s[int(WARMUP_FRACTION * len(waits_s)) :]
    means = np.array([b.mean() for b in np.array_split(kept, batches)])
    se = float(means.std(ddof=1) / np.sqrt(batches))
    mean = float(kept.mean())
    return mean, se, abs(mean - theory_s) <= 4 * se


def step_time_us(evaluations: int = 20_000) -> float:
    """Microseconds of one step-time evaluation: the gpu-batched preset's per-stream decode rate at
    its typical load (routed experts, KV reads, collectives), the function the pool calls."""
    from speedtrap.config import backend_preset
    from speedtrap.serving.replica import ReplicaPhysics

    backend = backend_preset("gpu-batched")
    physics = ReplicaPhysics.from_backend(backend)
    rate = physics.decode_rate_tok_s
    batch, context = backend.typical_batch, float(backend.typical_context_tokens)
    start = time.process_time()
    for i in range(evaluations):
        rate(batch, context + i)
    return (time.process_time() - start) / evaluations * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--customers", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5, help="interleaved repetitions (default 5)")
    parser.add_argument("--layout", default="1x8", help="replicas x batch cap, product = 8 (1x8, 2x4, 8x1)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    replicas, cap = (int(x) for x in args.layout.split("x"))
    if replicas * cap != SERVERS:
        parser.error(f"layout must give {SERVERS} slots, got {replicas * cap}")

    theory = mmc_mean_wait_s(ARRIVAL_RATE_PER_S, 1.0, SERVERS)
    runs: dict[str, list[Timing]] = {}
    for _ in range(args.repeats):  # interleaved: every engine once per repetition, same arrivals
        pool, workload = run_pool(args.customers, replicas=replicas, batch_cap=cap, seed=args.seed)
        for t in (
            pool,
            run_simpy(workload),
            run_ciw(workload),
            run_pool_heap_clock(workload, replicas=replicas, batch_cap=cap),
        ):
            runs.setdefault(t.engine, []).append(t)
    print(f"M/M/c λ={ARRIVAL_RATE_PER_S}, μ=1, c={SERVERS} ({replicas} replicas × {cap} slots)")
    print(
        f"Erlang C mean wait Wq = {theory:.3f} s; {args.repeats} interleaved repetitions, CPU time, medians"
    )
    for engine, timings in runs.items():
        t = timings[0]
        mean, se, ok = mean_wait_check(t.waits_s, theory)
        seconds = float(np.median([x.seconds for x in timings]))
        line = (
            f"{engine:>18}: {t.customers} customers in {seconds:.2f} s = {t.customers / seconds:,.0f}/s; "
            f"mean wait {mean:.3f} ± {se:.3f} s ({'OK' if ok else 'OFF'})"
        )
        if engine not in ("SimPy", "Ciw"):
            line += f"; events/request {t.events_per_request:.3f} (cancelled {t.cancelled_per_request:.3f})"
        print(line)

    def ratio(engine: str, reference: str) -> str:
        values = [r.seconds / e.seconds for e, r in zip(runs[engine], runs[reference], strict=True)]
        return f"{np.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"

    print(
        f"ratio pool/SimPy: {ratio('pool (Mesa)', 'SimPy')} on a Mesa model, "
        f"{ratio('pool (heap clock)', 'SimPy')} on a minimal heap clock (median, min–max)"
    )
    print(f"ratio pool/Ciw: {ratio('pool (Mesa)', 'Ciw')} on a Mesa model (median, min–max)")
    mesa_us = mesa_event_cost_us()
    sim_us = float(np.median([x.seconds for x in runs["SimPy"]])) / runs["SimPy"][0].customers * 1e6
    print(f"one bare EventModel event: {mesa_us:.1f} µs; SimPy: {sim_us:.1f} µs per customer")
    print(
        f"one step-time evaluation (ReplicaPhysics.decode_rate_tok_s, gpu-batched): {step_time_us():.2f} µs"
    )


if __name__ == "__main__":
    main()
