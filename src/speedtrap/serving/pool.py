"""The serving pool: replicas with continuous batching, service tiers and priority admission.

docs/design.md §2 "Serving pool". Pure Python driven by a *clock* (a Mesa 3.5 model, or anything
with ``.time`` and ``.schedule_event(fn, at=...)`` returning an event with ``.cancel()``); this
module never imports Mesa.

Semantics
---------
* **Slots and KV.** A request is *admitted* to a replica when the replica has a free slot and
  KV room. A stream holds ``input + output`` tokens of KV from admission to its last token
  (reserved in full at admission, so nothing is ever preempted).
* **Background traffic.** ``background_streams_per_replica`` streams of the provider's other
  customers keep every replica busy beside this pool's own streams: they take free slots and
  count in the decode batch, but they are elastic — they yield their slots to own streams and
  shrink to fit the replica's effective cap (the provider serves the displaced traffic
  elsewhere). A replica with ``n`` own streams and effective cap ``k`` runs
  ``min(background, k − n)`` background streams. Background streams hold no KV of the pool's
  budget and share the mean context of the own decoding streams (assumption: the other traffic
  is modelled only by its share of the batch).
* **Prefill, then decode.** An admitted request prefills for ``speed.prefill_s(input − cached)``
  seconds; its first token comes at the end, and the other ``output − 1`` tokens are decoded (a
  one-token response needs no decode step). The prefill's compute is the replica's: requests
  prefilling on one replica at the same time take turns (first come, first served), so N
  simultaneous prompts finish at 1, 2, …, N times one prompt's compute. Only the speed model's
  ``ttft_overhead_s`` (network and scheduling, 0 when it has none) runs concurrently. A
  prefilling stream holds its slot and KV but does **not** count in the decode batch ``B``
  (``B`` = own decoding streams + background streams), and prompts do not slow the decode steps
  here (the steady-load share of prompts in each step, ``speedtrap.serving.pareto.steady_load``,
  is what ``speedtrap pareto --isl/--osl`` and ``speedtrap validate serving`` use).
* **Re-timing** (``speedtrap.serving.replica_clock``): the live decode rate of each replica,
  exact re-timing of in-flight completions, one scheduled event per replica, folded prefill
  ends.
* **Admission** (``speedtrap.serving.admission``): tier priority, FIFO within a level, tier
  caps and placement, the anti-starvation reservation.
* **Price.** A request's ``cost_usd`` is fixed at submission: ``request_cost_usd`` of the list
  price with the tier's multiplier (linear in the token counts; its per-token coefficients are
  taken once per tier).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from heapq import heappop, heappush

import pandas as pd
from mypy_extensions import mypyc_attr

from speedtrap.config.tier import Price, Tier
from speedtrap.serving.admission import Admission, PriorityLevel, TierAdmission
from speedtrap.serving.decode_rate import pool_decode_rate, pool_prefill_s
from speedtrap.serving.replica_clock import INF, Clock, ClockEvent, ReplicaState
from speedtrap.serving.request import (
    NAN,
    Record,
    Request,
    RequestTally,
    from_record,
    record,
    records_frame,
    tag_of,
)
from speedtrap.serving.speed import SpeedModel

__all__ = ["INF", "Clock", "ClockEvent", "ServingPool"]


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled (mypyc), it may still be subclassed
class ServingPool(Admission):
    """Replicas with continuous batching and tiers, fed by :meth:`submit` (module docstring).

    ``record`` keeps every finished request's record (:meth:`requests_frame`, :attr:`finished`);
    ``tally`` adds each finished request to a :class:`~speedtrap.serving.request.RequestTally`
    (the few packed floats a run's summary needs), for runs that want no request table.
    """

    _stat_start_s: float  # start of the statistics window (s), set by reset_stats

    def __init__(
        self,
        clock: Clock,
        speed: SpeedModel,
        *,
        replicas: int,
        tiers: Sequence[Tier],
        price: Price,
        background_streams_per_replica: int = 0,
        cache_writes: bool = True,
        record: bool = True,
        tally: RequestTally | None = None,
        fold_prefill: bool = True,
    ) -> None:
        if replicas < 1:
            raise ValueError(f"replicas must be at least 1, got {replicas}")
        if not tiers:
            raise ValueError("tiers must name at least one tier")
        names = [t.name for t in tiers]
        if len(set(names)) != len(names):
            raise ValueError(f"tier names must be unique, got {names}")
        if background_streams_per_replica < 0:
            raise ValueError(
                f"background_streams_per_replica must be >= 0, got {background_streams_per_replica}"
            )
        if not isinstance(speed, SpeedModel):
            raise TypeError(f"speed must implement the SpeedModel protocol, got {type(speed).__name__}")
        kv_capacity = float(speed.kv_capacity_tokens)
        if not kv_capacity > 0:
            raise ValueError(f"speed.kv_capacity_tokens must be positive, got {kv_capacity}")

        self._clock = clock
        self._speed = speed
        self._fold_prefill = fold_prefill
        self._pending_notes: list[float] = []  # prefill ends folded away: integrate the stats there
        self._decode_rate = pool_decode_rate(speed)  # the physics flattened where it can be
        self._schedule = clock.schedule_event
        self._prefill_memo: dict[int, float] = {}  # prefill_s by uncached tokens (a pure function)
        self._prefill_s = pool_prefill_s(speed)  # flattened as the decode rate is
        # The part of prefill_s that does not occupy the replica (network, scheduling).
        self._prefill_overhead_s = float(getattr(speed, "ttft_overhead_s", 0.0))
        self._record = record
        self._tally = tally
        self._bg = background_streams_per_replica
        self._kv_capacity = kv_capacity
        self.tiers: dict[str, Tier] = {t.name: t for t in tiers}
        self._levels = [PriorityLevel(p) for p in sorted({t.priority for t in tiers}, reverse=True)]
        level_of = {lv.priority: lv for lv in self._levels}
        self._tier_info = {t.name: TierAdmission(t, level_of[t.priority], price, cache_writes) for t in tiers}
        self._replicas = [ReplicaState(self._on_wake, i) for i in range(replicas)]
        # (streams, index) of every replica, pushed at each change; entries whose streams no longer
        # match are stale and dropped when they surface. The top valid entry is the least loaded
        # replica (lowest index first): placement's answer whenever that replica can take the request.
        self._loads: list[tuple[int, int]] = [(0, i) for i in range(replicas)]
        self._loads_limit = 8 * replicas + 64
        self._dirty: list[ReplicaState] = []
        self._finished: list[Record] = []  # records (serving.request.record) in completion order
        self._tags: list[object] = []  # their requests' tags (serving.request.tag_of), in the same order
        self._next_id = 0
        self._completed = 0
        self._waiting = 0
        self._in_system = 0
        self.events_scheduled = 0
        """Clock events the pool has scheduled (one per replica wake-up, re-timings included)."""
        self.events_cancelled = 0
        """Scheduled events later cancelled because a re-timing moved them."""
        self.reset_stats()

    # ------------------------------------------------------------------ public API

    @property
    def replicas(self) -> int:
        """Number of replicas."""
        return len(self._replicas)

    @property
    def background_streams_per_replica(self) -> int:
        """Streams of the provider's other traffic per replica, before yielding to own streams."""
        return self._bg

    @property
    def capacity_streams(self) -> int:
        """Most own streams the fleet can run at once: replicas × the largest tier cap."""
        return len(self._replicas) * max(t.batch_cap for t in self.tiers.values())

    def submit(
        self,
        *,
        tier: str,
        input_tokens: int,
        cached_tokens: int,
        output_tokens: int,
        on_done: Callable[[Request], None] | None = None,
        tag: object = None,
    ) -> Request:
        """Submit a request now; ``on_done(request)`` is called when its last token is produced.

        The pool keeps the request (and ``on_done``) alive until then. ``input_tokens`` is the
        whole prompt, ``cached_tokens`` of it hit the prompt cache; ``output_tokens`` >= 1.
        """
        info = self._tier_info.get(tier)
        if info is None:
            raise KeyError(f"unknown tier {tier!r} (known: {', '.join(sorted(self.tiers))})")
        if output_tokens < 1:
            raise ValueError(f"output_tokens must be at least 1, got {output_tokens}")
        if not 0 <= cached_tokens <= input_tokens:
            raise ValueError(
                f"need 0 <= cached_tokens <= input_tokens, got {cached_tokens} and {input_tokens}"
            )
        if input_tokens + output_tokens > self._kv_capacity:
            raise ValueError(
                f"request needs {input_tokens + output_tokens} KV tokens, more than a replica holds "
                f"({self._kv_capacity:g}); it could never be admitted"
            )
        now = self._clock.time
        cost_usd = (
            (input_tokens - cached_tokens) * info.usd_per_uncached
            + cached_tokens * info.usd_per_cached
            + output_tokens * info.usd_per_output
        )
        req = Request(  # by position, in field order (Request's docstring)
            self._next_id,  # id
            tier,
            input_tokens,
            cached_tokens,
            output_tokens,
            tag,
            now,  # arrival_s
            NAN,  # admitted_s
            NAN,  # first_token_s
            NAN,  # done_s
            None,  # replica
            cost_usd,
            on_done,
            info.priority,
            info.batch_cap,
        )
        self._next_id += 1
        if self._pending_notes:
            self._catch_up_notes(now)
        dt = now - self._stat_t  # integrate the time averages up to now (before counts change)
        if dt > 0:
            self._area_system += self._in_system * dt
            self._area_waiting += self._waiting * dt
            self._stat_t = now
        self._in_system += 1
        # Invariant between events: the head of every non-empty level is blocked. A request
        # joining behind a blocked head therefore just waits; a new head is tried at once.
        level = info.level
        if not level.queue:
            r = self._place(req)
            if r is not None:
                self._admit(req, r, now)
                self._retime(r, now)  # the only replica that changed
                return req
            if level is not self._levels[-1] and level.reserved is None:
                self._reserve(level, req)
        self._waiting += 1
        level.queue.append(req)
        return req

    def requests_frame(self) -> pd.DataFrame:
        """One row per finished request, in completion order (schema: ``serving.request.REQUEST_COLUMNS``).

        Empty unless the pool was built with ``record=True``.
        """
        return records_frame(self._finished, self._tags)

    @property
    def finished(self) -> list[Request]:
        """Finished requests in completion order (new objects, without their spent ``on_done``;
        empty unless ``record=True``)."""
        return [from_record(rec, tag) for rec, tag in zip(self._finished, self._tags, strict=True)]

    @property
    def submitted(self) -> int:
        """Requests submitted so far."""
        return self._next_id

    @property
    def completed(self) -> int:
        """Requests finished so far."""
        return self._completed

    @property
    def waiting(self) -> int:
        """Requests waiting for admission now."""
        return self._waiting

    @property
    def in_service(self) -> int:
        """Own streams admitted now (prefilling or decoding)."""
        return self._in_system - self._waiting

    @property
    def in_system(self) -> int:
        """Requests submitted and not yet finished."""
        return self._in_system

    def streams_on(self, replica: int) -> tuple[int, int]:
        """``(admitted own streams, decoding own streams)`` on one replica now."""
        r = self._replicas[replica]
        return r.streams, r.decoding - self._folded_ahead(r)

    def decode_rate_tok_s(self, replica: int) -> float:
        """Per-stream decode rate of one replica now (tok/s; 0 while nothing decodes)."""
        r = self._replicas[replica]
        return r.rate if r.decoding - self._folded_ahead(r) else 0.0

    def reset_stats(self) -> None:
        """Start the time-average statistics afresh from now (call at the end of a warm-up)."""
        now = self._clock.time
        pending = self._pending_notes
        while pending and pending[0] <= now:  # integrations before the new window: dropped
            heappop(pending)
        self._stat_start_s = now
        self._stat_t = self._stat_start_s
        self._area_system = 0.0
        self._area_waiting = 0.0

    @property
    def stats_window_s(self) -> float:
        """Seconds covered by the time averages (since construction or :meth:`reset_stats`)."""
        return self._clock.time - self._stat_start_s

    @property
    def mean_in_system(self) -> float:
        """Time-average number of requests in the system (waiting + in service)."""
        return self._time_average(waiting=False)

    @property
    def mean_waiting(self) -> float:
        """Time-average number of requests waiting for admission."""
        return self._time_average(waiting=True)

    @property
    def mean_in_service(self) -> float:
        """Time-average number of busy own slots (admitted streams)."""
        return self.mean_in_system - self.mean_waiting

    @property
    def utilization(self) -> float:
        """Time-average busy own slots / :attr:`capacity_streams`."""
        return self.mean_in_service / self.capacity_streams

    # ------------------------------------------------------------------ internals

    def _time_average(self, *, waiting: bool) -> float:
        now = self._clock.time
        window = now - self._stat_start_s
        if window <= 0:
            return math.nan
        if self._pending_notes:
            self._catch_up_notes(now)
        if waiting:
            area, current = self._area_waiting, self._waiting
        else:
            area, current = self._area_system, self._in_system
        return (area + current * (now - self._stat_t)) / window

    def _on_wake(self, r: ReplicaState) -> None:
        """Handle a replica's due prefill ends and completions, then admit and re-time."""
        now = r.event_s  # the time of the one event the replica holds, which is running now
        if self._pending_notes:
            self._catch_up_notes(now)
        dt = now - self._stat_t  # integrate the time averages up to now (before counts change)
        if dt > 0:
            self._area_system += self._in_system * dt
            self._area_waiting += self._waiting * dt
            self._stat_t = now
        r.event = None  # the event that woke us is spent
        r.event_s = INF
        r.fold = None  # a folded prefill end is past: the replica's state is what it was ahead
        finished: list[Request] | None = None
        if r.decoding:
            v = r.v_tok + r.rate * (now - r.v_time)
            if now >= r.due_s and v < r.due_mark:
                v = r.due_mark  # the event was computed for this mark: absorb rounding
            r.v_tok = v
            r.v_time = now
            heap = r.decode_heap
            if heap[0][0] <= v:
                finished = []
                loads = self._loads
                while heap and heap[0][0] <= v:
                    _, _, req, v_start = heappop(heap)
                    r.decoding -= 1
                    r.sum_input -= req.input_tokens
                    r.sum_vstart -= v_start
                    # free the slot and KV; record the new stream count in the placement heap
                    r.streams = streams = r.streams - 1
                    if len(loads) > self._loads_limit:
                        self._rebuild_loads()
                    else:
                        heappush(loads, (streams, r.index))
                    r.kv_used -= req.input_tokens + req.output_tokens
                    cap = req.batch_cap
                    counts = r.cap_counts
                    left = counts[cap] - 1
                    if left:
                        counts[cap] = left
                    else:
                        del counts[cap]
                        if cap == r.cap:
                            r.cap = float(min(counts)) if counts else INF
                    req.done_s = now
                    finished.append(req)
                self._in_system -= len(finished)
        prefills = r.prefill_heap
        while prefills and prefills[0][0] <= now:
            req = heappop(prefills)[2]
            req.first_token_s = now
            self._start_decoding(r, req, now)
        if self._waiting:
            if not r.dirty:
                r.dirty = True
                self._dirty.append(r)
            self._dispatch(now)
            self._flush(now)
        else:
            self._retime(r, now)  # the only replica that changed
        if finished is None:
            return
        if self._record:
            self._finished.extend(map(record, finished))  # plain tuples the GC stops tracking
            self._tags.extend(map(tag_of, finished))
        if self._tally is not None:
            self._tally.add(finished)
        self._completed += len(finished)
        for req in finished:
            on_done = req.on_done
            if on_done is not None:
                req.on_done = None  # spent: do not keep the caller alive through the request
                on_done(req)
