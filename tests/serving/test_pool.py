"""Unit tests of the serving pool: timelines by hand, admission rules, bookkeeping, records."""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from speedtrap.config import BACKEND_PRESETS, Price, Tier
from speedtrap.models.base import EventModel
from speedtrap.serving import pool as pool_module
from speedtrap.serving import request as request_module
from speedtrap.serving.pool import ServingPool
from speedtrap.serving.pricing import request_cost_usd
from speedtrap.serving.replica import ReplicaPhysics
from speedtrap.serving.request import REQUEST_COLUMNS, Request
from speedtrap.serving.speed import FixedRate, SharedRate

STANDARD = Tier(name="standard", priority=0, batch_cap=4)
FAST = Tier(name="fast", priority=1, batch_cap=2, price_multiplier=6.0)


@dataclass(frozen=True, slots=True)
class PrefillShared:
    """SharedRate plus a prefill of ``prefill_s_per_token`` per uncached token (a test double)."""

    capacity_tok_s: float
    prefill_s_per_token: float
    kv_capacity_tokens: float = math.inf

    def decode_rate_tok_s(self, batch: int, context_tokens: float) -> float:
        return self.capacity_tok_s / batch

    def prefill_s(self, uncached_tokens: int) -> float:
        return self.prefill_s_per_token * uncached_tokens


@dataclass
class Recorder:
    """Records every call of the speed model (to check the batch and context the pool asks for)."""

    inner: Any
    calls: list[tuple[int, float]]

    @property
    def kv_capacity_tokens(self) -> float:
        return self.inner.kv_capacity_tokens

    def decode_rate_tok_s(self, batch: int, context_tokens: float) -> float:
        self.calls.append((batch, context_tokens))
        return self.inner.decode_rate_tok_s(batch, context_tokens)

    def prefill_s(self, uncached_tokens: int) -> float:
        return self.inner.prefill_s(uncached_tokens)


class Submitter:
    """Submits one request at a scheduled time (Mesa holds callbacks weakly: keep these alive)."""

    def __init__(self, pool: ServingPool, kwargs: dict[str, Any]) -> None:
        self.pool = pool
        self.kwargs = kwargs
        self.request: Request | None = None

    def fire(self) -> None:
        self.request = self.pool.submit(**self.kwargs)


def make_pool(
    speed: Any, *, tiers: list[Tier] | None = None, **kwargs: Any
) -> tuple[EventModel, ServingPool]:
    model = EventModel(rng=0)
    pool = ServingPool(model, speed, tiers=tiers or [STANDARD], price=Price(), **{"replicas": 1, **kwargs})
    return model, pool


def submit_at(
    model: EventModel, pool: ServingPool, at: float, keep: list[Submitter], **kwargs: Any
) -> Submitter:
    kwargs = {"tier": "standard", "input_tokens": 0, "cached_tokens": 0, **kwargs}
    s = Submitter(pool, kwargs)
    keep.append(s)
    model.schedule_event(s.fire, at=at)
    return s


def test_single_request_timeline_and_cost() -> None:
    # 101 output tokens: the first comes with the (zero-length) prefill, 100 decode steps follow.
    model, pool = make_pool(FixedRate(50.0))
    model.run_until(1.0)
    req = pool.submit(tier="standard", input_tokens=1000, cached_tokens=800, output_tokens=101)
    assert (req.arrival_s, req.admitted_s, req.first_token_s, req.replica) == (1.0, 1.0, 1.0, 0)
    assert math.isnan(req.done_s)
    model.run_until(10.0)
    assert req.done_s == pytest.approx(3.0)
    assert (req.queue_wait_s, req.ttft_s, req.prefill_s) == (0.0, 0.0, 0.0)
    assert req.decode_s == pytest.approx(2.0)
    expected = request_cost_usd(
        Price(), uncached_input_tokens=200, cached_input_tokens=800, output_tokens=101
    )
    assert req.cost_usd == pytest.approx(expected, rel=1e-12)


def test_tier_price_multiplier_and_plain_input_billing() -> None:
    _, pool = make_pool(FixedRate(50.0), tiers=[STANDARD, FAST], cache_writes=False)
    req = pool.submit(tier="fast", input_tokens=1000, cached_tokens=0, output_tokens=10)
    expected = request_cost_usd(
        Price(), uncached_input_tokens=1000, cached_input_tokens=0, output_tokens=10, price_multiplier=6.0,
        cache_writes=False,
    )  # fmt: skip
    assert req.cost_usd == pytest.approx(expected, rel=1e-12)


def test_prefill_then_decode_and_prefilling_streams_do_not_decode() -> None:
    # Token counts below are decode steps: the first token of each response comes with its prefill.
    # A prefills 0.5 s (50 uncached tokens); B arrives at 0.1 with no prefill, so B decodes alone
    # at the full 10 tok/s until A's first token at 0.5, then both share 10 tok/s.
    model, pool = make_pool(PrefillShared(10.0, 0.01))
    keep: list[Submitter] = []
    a = submit_at(model, pool, 0.0, keep, input_tokens=50, output_tokens=6)
    b = submit_at(model, pool, 0.1, keep, input_tokens=50, cached_tokens=50, output_tokens=7)
    model.run_until(10.0)
    ra, rb = a.request, b.request
    assert ra is not None and rb is not None
    assert ra.first_token_s == pytest.approx(0.5) and ra.prefill_s == pytest.approx(0.5)
    assert rb.first_token_s == pytest.approx(0.1)
    # By 0.5, B has 4 tokens; then 5 tok/s each: B's last 2 tokens take 0.4 s (done 0.9), by which
    # A has 2 of 5; A alone at 10 tok/s needs 0.3 s more (done 1.2).
    assert rb.done_s == pytest.approx(0.9)
    assert ra.done_s == pytest.approx(1.2)


def test_equal_finish_marks_after_rebase_are_not_confused() -> None:
    # Regression: the replica's token clock re-bases when it empties; a request admitted in the
    # same event must not inherit the old due time because its finish mark has the same value.
    model, pool = make_pool(FixedRate(10.0), tiers=[Tier(batch_cap=1)])
    first = pool.submit(tier="standard", input_tokens=0, cached_tokens=0, output_tokens=11)
    second = pool.submit(tier="standard", input_tokens=0, cached_tokens=0, output_tokens=11)
    model.run_until(5.0)
    assert first.done_s == pytest.approx(1.0)
    assert second.admitted_s == pytest.approx(1.0)
    assert second.done_s == pytest.approx(2.0)


def test_slots_fifo_and_queue_wait() -> None:
    model, pool = make_pool(FixedRate(10.0), tiers=[Tier(batch_cap=2)])
    reqs = [
        pool.submit(tier="standard", input_tokens=0, cached_tokens=0, output_tokens=n) for n in (11, 21, 6, 6)
    ]
    assert pool.waiting == 2 and pool.in_service == 2 and pool.in_system == 4
    model.run_until(10.0)
    done = [r.done_s for r in reqs]
    admitted = [r.admitted_s for r in reqs]
    assert admitted == pytest.approx([0.0, 0.0, 1.0, 1.5])  # third waits for the first, fourth for the third
    assert done == pytest.approx([1.0, 2.0, 1.5, 2.0])
    assert reqs[3].queue_wait_s == pytest.approx(1.5)


def test_priority_first_then_fifo() -> None:
    model, pool = make_pool(
        FixedRate(10.0), tiers=[Tier(name="standard", batch_cap=1), Tier(name="fast", priority=1)]
    )
    kw = {"input_tokens": 0, "cached_tokens": 0, "output_tokens": 10}
    busy = pool.submit(tier="standard", **kw)
    s1 = pool.submit(tier="standard", **kw)
    f1 = pool.submit(tier="fast", **kw)
    f2 = pool.submit(tier="fast", **kw)
    model.run_until(100.0)
    order = sorted([busy, s1, f1, f2], key=lambda r: r.admitted_s)
    assert order == [busy, f1, f2, s1]


def test_kv_capacity_blocks_admission_and_oversized_requests_fail() -> None:
    model, pool = make_pool(FixedRate(10.0, kv_capacity_tokens=100.0))
    a = pool.submit(tier="standard", input_tokens=50, cached_tokens=50, output_tokens=11)
    b = pool.submit(tier="standard", input_tokens=40, cached_tokens=40, output_tokens=11)
    assert b.replica is None and pool.waiting == 1  # 60 + 50 > 100 KV tokens
    model.run_until(10.0)
    assert b.admitted_s == pytest.approx(a.done_s) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="KV tokens"):
        pool.submit(tier="standard", input_tokens=95, cached_tokens=0, output_tokens=11)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"tier": "turbo"}, KeyError, "unknown tier 'turbo'"),
        ({"output_tokens": 0}, ValueError, "output_tokens"),
        ({"cached_tokens": 11}, ValueError, "cached_tokens"),
        ({"cached_tokens": -1}, ValueError, "cached_tokens"),
    ],
)
def test_submit_rejects_bad_requests(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    _, pool = make_pool(FixedRate(10.0))
    args = {"tier": "standard", "input_tokens": 10, "cached_tokens": 0, "output_tokens": 5, **kwargs}
    with pytest.raises(error, match=match):
        pool.submit(**args)
    assert pool.submitted == 0


def test_constructor_rejects_bad_configuration() -> None:
    model = EventModel(rng=0)
    with pytest.raises(ValueError, match="replicas"):
        ServingPool(model, FixedRate(1.0), replicas=0, tiers=[STANDARD], price=Price())
    with pytest.raises(ValueError, match="unique"):
        ServingPool(model, FixedRate(1.0), replicas=1, tiers=[STANDARD, STANDARD], price=Price())
    with pytest.raises(TypeError, match="SpeedModel"):
        ServingPool(model, object(), replicas=1, tiers=[STANDARD], price=Price())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="background"):
        ServingPool(
            model,
            FixedRate(1.0),
            replicas=1,
            tiers=[STANDARD],
            price=Price(),
            background_streams_per_replica=-1,
        )


def test_on_done_is_called_at_the_last_token_and_may_submit_again() -> None:
    model, pool = make_pool(FixedRate(10.0))
    seen: list[tuple[int, float]] = []

    class Loop:
        """An agent loop: each finished turn submits the next one (three turns in all)."""

        def on_done(self, request: Request) -> None:
            seen.append((request.id, model.time))
            if len(seen) < 3:
                pool.submit(
                    tier="standard", input_tokens=0, cached_tokens=0, output_tokens=11, on_done=self.on_done
                )

    loop = Loop()
    pool.submit(
        tier="standard", input_tokens=0, cached_tokens=0, output_tokens=11, on_done=loop.on_done, tag="x"
    )
    model.run_until(10.0)
    assert [i for i, _ in seen] == [0, 1, 2]
    assert [t for _, t in seen] == pytest.approx([1.0, 2.0, 3.0])
    assert pool.completed == 3 and pool.in_system == 0


def test_requests_frame_schema_and_values() -> None:
    model, pool = make_pool(FixedRate(10.0), tiers=[Tier(batch_cap=1)])
    pool.submit(tier="standard", input_tokens=100, cached_tokens=60, output_tokens=11, tag=("dev", 1))
    pool.submit(tier="standard", input_tokens=100, cached_tokens=60, output_tokens=21)
    model.run_until(10.0)
    frame = pool.requests_frame()
    assert list(frame.columns) == list(REQUEST_COLUMNS)
    assert {c: str(frame[c].dtype) for c in frame.columns} == REQUEST_COLUMNS
    assert frame["id"].tolist() == [0, 1]
    assert frame["tag"].tolist() == [("dev", 1), None]
    assert frame["queue_wait_s"].tolist() == pytest.approx([0.0, 1.0])
    assert frame["sojourn_s"].tolist() == pytest.approx([1.0, 3.0])
    assert frame["decode_s"].tolist() == pytest.approx([1.0, 2.0])
    pd.testing.assert_series_equal(
        frame["ttft_s"], frame["first_token_s"] - frame["arrival_s"], check_names=False
    )


def test_no_record_keeps_no_rows_but_counts() -> None:
    model, pool = make_pool(FixedRate(10.0), record=False)
    pool.submit(tier="standard", input_tokens=0, cached_tokens=0, output_tokens=10)
    model.run_until(5.0)
    frame = pool.requests_frame()
    assert frame.empty and list(frame.columns) == list(REQUEST_COLUMNS)
    assert pool.completed == 1


def test_background_streams_share_the_batch_and_yield_to_small_caps() -> None:
    calls: list[tuple[int, float]] = []
    model, pool = make_pool(
        Recorder(SharedRate(40.0), calls), tiers=[Tier(batch_cap=64), FAST], background_streams_per_replica=3
    )
    std = pool.submit(tier="standard", input_tokens=0, cached_tokens=0, output_tokens=11)
    assert calls[-1][0] == 4  # one own + three background streams
    model.run_until(5.0)
    assert std.done_s == pytest.approx(1.0)  # 40 tok/s shared by 4 streams
    fast = pool.submit(tier="fast", input_tokens=0, cached_tokens=0, output_tokens=11)
    assert calls[-1][0] == 2  # the fast cap of 2 squeezes the background to one stream
    model.run_until(10.0)
    assert fast.decode_s == pytest.approx(0.5)


def test_mean_context_is_input_plus_tokens_generated() -> None:
    calls: list[tuple[int, float]] = []
    model, pool = make_pool(Recorder(FixedRate(10.0), calls))
    pool.submit(tier="standard", input_tokens=1000, cached_tokens=1000, output_tokens=100)
    assert calls[-1] == (1, pytest.approx(1000.0))
    model.run_until(2.0)  # 20 tokens generated
    pool.submit(tier="standard", input_tokens=3000, cached_tokens=3000, output_tokens=100)
    assert calls[-1] == (2, pytest.approx((1020.0 + 3000.0) / 2))


def test_smallest_tier_cap_on_a_replica_caps_everyone() -> None:
    model, pool = make_pool(FixedRate(10.0), tiers=[STANDARD, FAST])
    kw = {"input_tokens": 0, "cached_tokens": 0, "output_tokens": 11}
    pool.submit(tier="fast", **kw)
    s1 = pool.submit(tier="standard", **kw)
    s2 = pool.submit(tier="standard", **kw)
    assert s1.replica == 0 and s2.replica is None  # the fast stream caps the replica at 2 streams
    model.run_until(5.0)
    assert s2.admitted_s == pytest.approx(1.0)


def test_placement_prefers_uncapped_then_least_loaded_replicas() -> None:
    _, pool = make_pool(FixedRate(10.0), tiers=[STANDARD, FAST], replicas=3)
    kw = {"input_tokens": 0, "cached_tokens": 0, "output_tokens": 10}
    f = pool.submit(tier="fast", **kw)
    s = [pool.submit(tier="standard", **kw) for _ in range(3)]
    # The fast stream takes replica 0; standard work avoids the fast-capped replica, spreading over 1 and 2.
    assert f.replica == 0
    assert [r.replica for r in s] == [1, 2, 1]


def test_reservation_lets_a_blocked_fast_request_in_before_later_standard_work() -> None:
    # Two replicas full of standard streams (cap 4) of different lengths; standard requests keep
    # queueing. A fast request (cap 2) needs a replica down to one stream: the replica with the
    # fewest streams is reserved and stops taking standard work until the fast request is in.
    model, pool = make_pool(FixedRate(10.0), tiers=[STANDARD, FAST], replicas=2)
    for n in (11, 21, 31, 41, 11, 21, 31, 41):
        pool.submit(tier="standard", input_tokens=0, cached_tokens=0, output_tokens=n)
    keep: list[Submitter] = []
    for k in range(40):
        submit_at(model, pool, 0.01 * k, keep, output_tokens=101)
    fast = submit_at(model, pool, 0.5, keep, tier="fast", output_tokens=11)
    model.run_until(100.0)
    req = fast.request
    assert req is not None
    # Without the reservation the standard queue would refill every freed slot for ~100 s.
    assert req.admitted_s == pytest.approx(3.0)  # replica 0 is empty once its 30-token streams end
    assert req.decode_s == pytest.approx(1.0)


def test_stats_time_averages_by_hand() -> None:
    model, pool = make_pool(FixedRate(10.0), tiers=[Tier(batch_cap=1)])
    pool.submit(tier="standard", input_tokens=0, cached_tokens=0, output_tokens=11)
    pool.submit(tier="standard", input_tokens=0, cached_tokens=0, output_tokens=11)
    model.run_until(4.0)
    # In system: 2 on [0,1), 1 on [1,2), 0 after -> area 3 over 4 s. Waiting: 1 on [0,1).
    assert pool.mean_in_system == pytest.approx(0.75)
    assert pool.mean_waiting == pytest.approx(0.25)
    assert pool.utilization == pytest.approx(0.5)
    pool.reset_stats()
    model.run_until(6.0)
    assert pool.mean_in_system == 0.0 and pool.stats_window_s == pytest.approx(2.0)


def test_events_do_not_grow_with_batch_size() -> None:
    # The replica holds ONE event, moved only when its next completion time changes: at most
    # one event per join or leave, never one per stream in the batch.
    n = 200
    for speed, most_events, most_cancelled in ((FixedRate(10.0), n, 0), (SharedRate(10.0), 2 * n, n)):
        model, pool = make_pool(speed, tiers=[Tier(batch_cap=256)])
        for k in range(1, n + 1):
            pool.submit(tier="standard", input_tokens=0, cached_tokens=0, output_tokens=k)
        model.run_until(1e6)
        assert pool.completed == n
        # FixedRate: a stream joining behind the next completion moves nothing (N events).
        # SharedRate: each join re-times the one event, each completion schedules the next.
        assert pool.events_scheduled <= most_events
        assert pool.events_cancelled <= most_cancelled


class ListClock:
    """A minimal non-Mesa clock: the pool needs only ``time`` and ``schedule_event(fn, at=)``."""

    class Event:
        def __init__(self, at: float, fn: Any) -> None:
            self.at, self.fn, self.cancelled = at, fn, False

        def cancel(self) -> None:
            self.cancelled = True

    def __init__(self) -> None:
        self.time = 0.0
        self.events: list[ListClock.Event] = []

    def schedule_event(self, fn: Any, *, at: float) -> ListClock.Event:
        event = ListClock.Event(at, fn)
        self.events.append(event)
        return event

    def run(self) -> None:
        while live := [e for e in self.events if not e.cancelled]:
            event = min(live, key=lambda e: e.at)
            self.events.remove(event)
            self.time = event.at
            event.fn()


def test_pool_runs_on_any_clock_and_never_imports_mesa() -> None:
    clock = ListClock()
    pool = ServingPool(clock, SharedRate(10.0), replicas=1, tiers=[STANDARD], price=Price())
    a = pool.submit(tier="standard", input_tokens=0, cached_tokens=0, output_tokens=11)
    b = pool.submit(tier="standard", input_tokens=0, cached_tokens=0, output_tokens=6)
    clock.run()
    assert (b.done_s, a.done_s) == (pytest.approx(1.0), pytest.approx(1.5))
    for module in (pool_module, request_module):
        # the module's source (beside it also when the module in use is the compiled one)
        tree = ast.parse(
            (Path(module.__file__ or "").parent / f"{module.__name__.rpartition('.')[2]}.py").read_text()
        )
        imported = {
            alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
        }
        imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert not any(name.split(".")[0] == "mesa" for name in imported)


def test_a_replica_wakes_at_the_time_of_the_one_event_it_holds() -> None:
    """The pool reads the time of a wake-up from the replica's own event (``event_s``), not from the
    clock: every wake-up must run at exactly that time, with arrivals re-timing events to and fro."""
    woken: list[float] = []

    class CheckingClock(ListClock):
        def run(self) -> None:
            while live := [e for e in self.events if not e.cancelled]:
                event = min(live, key=lambda e: e.at)
                self.events.remove(event)
                self.time = event.at
                replica = getattr(event.fn, "__self__", None)  # a replica's wake-up, not an arrival
                if replica is not None:
                    assert replica.event_s == event.at and replica.event is event
                    woken.append(event.at)
                event.fn()

    clock = CheckingClock()
    physics = ReplicaPhysics.from_backend(BACKEND_PRESETS["gpu-batched"])
    pool = ServingPool(
        clock, physics, replicas=2, tiers=[STANDARD], price=Price(), background_streams_per_replica=3
    )
    rng = np.random.default_rng(8)
    requests: list[Request] = []

    def arrival(input_tokens: int, output_tokens: int) -> Callable[[], None]:
        def submit() -> None:
            requests.append(
                pool.submit(
                    tier="standard", input_tokens=input_tokens, cached_tokens=0, output_tokens=output_tokens
                )
            )

        return submit

    for at in np.cumsum(rng.exponential(0.5, 40)):
        clock.schedule_event(arrival(int(rng.integers(1, 20_000)), int(rng.integers(1, 400))), at=float(at))
    clock.run()
    assert len(requests) == 40 and len(woken) > 40
    assert all(r.done_s >= r.first_token_s >= r.admitted_s >= r.arrival_s for r in requests)


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_bad_prefill_times_fail_loudly(bad: float) -> None:
    @dataclass(frozen=True)
    class BadPrefill:
        kv_capacity_tokens: float = math.inf

        def decode_rate_tok_s(self, batch: int, context_tokens: float) -> float:
            return 1.0

        def prefill_s(self, uncached_tokens: int) -> float:
            return bad

    _, pool = make_pool(BadPrefill())
    with pytest.raises(ValueError, match="prefill_s"):
        pool.submit(tier="standard", input_tokens=10, cached_tokens=0, output_tokens=1)


def test_finished_requests_are_kept_as_records_and_release_their_callback() -> None:
    model, pool = make_pool(FixedRate(10.0), tiers=[Tier(batch_cap=1)])

    class Owner:
        def on_done(self, request: Request) -> None:
            pass

    owner = Owner()
    live = pool.submit(
        tier="standard",
        input_tokens=100,
        cached_tokens=60,
        output_tokens=10,
        tag=("dev", 1),
        on_done=owner.on_done,
    )
    model.run_until(10.0)
    assert live.on_done is None  # spent: the pool no longer keeps the owner alive through it
    (kept,) = pool.finished
    assert kept is not live and kept.on_done is None
    assert all(getattr(kept, f) == getattr(live, f) for f in request_module.RECORD_FIELDS)
    pd.testing.assert_frame_equal(pool.requests_frame(), request_module.requests_frame([live]))


class CheckedPool(ServingPool):
    """A pool that checks every placement's fast path against the full scan of the replicas."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.placements: list[tuple[int | None, bool]] = []

    def _place(self, req: Request) -> Any:
        got = super()._place(req)
        want = self._scan(req)
        assert got is want, (req, got, want)
        self.placements.append((None if got is None else got.index, bool(self.waiting)))
        return got


@settings(max_examples=40, deadline=None)
@example(replicas=1, caps=(2, 2, 3), arrivals=[(0.0, "fast", 73, 3), (0.0, "fast", 23, 1)])  # a wake-up
# due within rounding before now (0.09799999999999999 at 0.098) was scheduled in the past
@given(
    replicas=st.integers(1, 5),
    caps=st.tuples(st.integers(1, 3), st.integers(2, 6), st.integers(3, 8)),
    arrivals=st.lists(
        st.tuples(
            st.floats(0.0, 0.3, allow_subnormal=False),  # gap to the previous arrival, s: a loaded pool
            st.sampled_from(["fast", "standard", "batch"]),
            st.integers(0, 300),  # input tokens
            st.integers(1, 100),  # output tokens
        ),
        min_size=1,
        max_size=60,
    ),
)
def test_placement_fast_path_agrees_with_the_full_scan(
    replicas: int, caps: tuple[int, int, int], arrivals: list[tuple[float, str, int, int]]
) -> None:
    # Three priority levels with different caps (reservations, capped replicas) and a KV budget
    # that binds (two large requests never share a replica): every placement, at submission and in
    # dispatch, must match the rule-by-rule scan.
    tiers = [
        Tier(name="fast", priority=2, batch_cap=caps[0]),
        Tier(name="standard", priority=1, batch_cap=caps[1]),
        Tier(name="batch", priority=0, batch_cap=caps[2]),
    ]
    model = EventModel(rng=0)
    pool = CheckedPool(
        model,
        PrefillShared(50.0, 0.002, kv_capacity_tokens=500.0),
        replicas=replicas,
        tiers=tiers,
        price=Price(),
    )
    keep: list[Submitter] = []
    at = 0.0
    for gap, tier, input_tokens, output_tokens in arrivals:
        at += gap
        submit_at(
            model, pool, at, keep, tier=tier, input_tokens=input_tokens, cached_tokens=input_tokens // 2,
            output_tokens=output_tokens,
        )  # fmt: skip
    model.run_until(at + 1e4)
    assert pool.completed == len(arrivals)
    assert len(pool.placements) >= len(arrivals)


class Probe:
    """Reads the pool's public state at given times (what a caller could observe mid-run)."""

    def __init__(self, pool: ServingPool) -> None:
        self.pool = pool
        self.seen: list[tuple[Any, ...]] = []

    def look(self) -> None:
        pool = self.pool
        streams = [pool.streams_on(i) for i in range(pool.replicas)]
        rates = [pool.decode_rate_tok_s(i) for i in range(pool.replicas)]
        self.seen.append(
            (pool.in_system, pool.waiting, streams, rates, pool.mean_in_system, pool.mean_waiting)
        )

    def reset(self) -> None:
        self.pool.reset_stats()


def run_workload(
    fold: bool,
    replicas: int,
    background: int,
    arrivals: list[tuple[float, str, int, int]],
    looks: list[float],
) -> tuple[pd.DataFrame, list[tuple[Any, ...]], tuple[float, float], int]:
    model = EventModel(rng=0)
    pool = ServingPool(
        model,
        PrefillShared(120.0, 0.004, kv_capacity_tokens=900.0),
        replicas=replicas,
        tiers=[STANDARD, FAST],
        price=Price(),
        background_streams_per_replica=background,
        fold_prefill=fold,
    )
    keep: list[Submitter] = []
    at = 0.0
    for gap, tier, input_tokens, output_tokens in arrivals:
        at += gap
        submit_at(
            model,
            pool,
            at,
            keep,
            tier=tier,
            input_tokens=input_tokens,
            cached_tokens=input_tokens // 3,
            output_tokens=output_tokens,
        )
    probe = Probe(pool)
    for t in looks:
        model.schedule_event(probe.look, at=t)
    model.schedule_event(probe.reset, at=looks[len(looks) // 2])
    model.run_until(at + 1e4)
    probe.look()
    return pool.requests_frame(), probe.seen, (pool.mean_in_system, pool.mean_waiting)


@settings(max_examples=60, deadline=None)
@given(
    replicas=st.integers(1, 4),
    background=st.integers(0, 5),
    arrivals=st.lists(
        st.tuples(
            st.floats(0.0, 1.5, allow_subnormal=False),
            st.sampled_from(["standard", "fast"]),
            st.integers(0, 400),  # input tokens: a prefill of up to 1.1 s
            st.integers(1, 120),
        ),
        min_size=1,
        max_size=50,
    ),
    looks=st.lists(st.floats(0.0, 40.0, allow_subnormal=False), min_size=1, max_size=8),
)
def test_folded_prefill_ends_give_the_unfolded_results(
    replicas: int, background: int, arrivals: list[tuple[float, str, int, int]], looks: list[float]
) -> None:
    # Folding a lone stream's prefill end into its completion must change nothing observable: every
    # request's timeline, the replicas' streams and rates, the time averages (with a reset between).
    folded, unfolded = (
        run_workload(fold, replicas, background, arrivals, sorted(looks)) for fold in (True, False)
    )
    pd.testing.assert_frame_equal(folded[0], unfolded[0], check_exact=True)
    # compared by repr: exact for floats, and NaN (a time average over an empty window) equal to NaN
    # whether or not it is the same object (the compiled pool returns a new one each time)
    assert repr(folded[1]) == repr(unfolded[1])
    assert repr(folded[2]) == repr(unfolded[2])
