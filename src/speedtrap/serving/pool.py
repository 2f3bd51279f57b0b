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
* **Live rate, exact re-timing.** All decoding streams of a replica advance at the same
  per-stream rate ``speed.decode_rate_tok_s(B, L)``, L the mean context of the decoding streams
  (input plus tokens generated so far) at the last change. The rate is re-evaluated whenever
  the replica's streams change (one is admitted, starts decoding or finishes) and held
  constant in between; in-flight completions are then re-timed exactly. Each replica keeps a
  clock ``V`` of tokens served per stream and a heap of finish marks ``V_start + output − 1``,
  and holds ONE scheduled event (its next completion or prefill end), moved only when that time
  changes.
* **Folded prefill ends.** When a replica's only stream is prefilling, its prefill end changes
  nothing but that replica, and then predictably: the pool starts the stream decoding as of the
  prefill end at once (its ``first_token_s`` is known at admission) and schedules only its
  completion. If another stream is admitted to the replica before the prefill ends, the fold is
  undone and the prefill end becomes an event again. The time averages are integrated at the
  prefill end as before, so results are those of the unfolded event sequence
  (``fold_prefill=False``, kept for comparison) — only ties of exactly equal event times may be
  ordered differently.
* **Admission.** Waiting requests are admitted by tier priority (higher first), then first come
  first served (strict FIFO within a priority level: a blocked head is not overtaken by later
  requests of its level). A tier's requests run only on replicas holding at most
  ``tier.batch_cap`` own streams (the newcomer included); a replica's effective cap is the
  smallest cap among the tiers of the streams on it. Among the replicas that can
  take a request it goes to one whose effective cap does not lower its tier's cap, least loaded
  first (then lowest index).
* **Anti-starvation reservation.** When the head request of a priority level cannot be placed,
  and lower levels exist, one replica is *reserved* for that level: the unreserved replica with
  the fewest streams (then least KV) in excess of what the head needs, i.e. the one that will
  drain soonest. A reserved replica accepts no work of lower priority until the level's queue is
  empty (the reservation is then released). So a small-cap fast request waits for at most one
  replica to drain below its cap, never behind an endless flow of large-batch work. With all
  tiers of equal cap (and no KV limit) a blocked head means no slot is free anywhere, the
  reservation changes nothing, and the pool is a non-preemptive priority M/M/c queue.
* **Price.** A request's ``cost_usd`` is fixed at submission: ``request_cost_usd`` of the list
  price with the tier's multiplier (linear in the token counts; its per-token coefficients are
  taken once per tier).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from heapq import heapify, heappop, heappush
from typing import Any, Protocol

import pandas as pd

from speedtrap.config.tier import Price, Tier
from speedtrap.serving.pricing import request_cost_usd
from speedtrap.serving.request import NAN, Record, Request, RequestTally, from_record, record, records_frame
from speedtrap.serving.speed import SpeedModel

INF = math.inf
_CAPPED_PENALTY = 1 << 40  # placement key offset: replicas whose cap is below the request's tier cap


class ClockEvent(Protocol):
    """A scheduled callback that can be cancelled (Mesa's ``Event``)."""

    def cancel(self) -> None: ...


class Clock(Protocol):
    """What the pool needs from its driver: a time in seconds and one-off event scheduling.

    A Mesa 3.5 ``Model`` qualifies. Mesa holds callbacks by weak reference; the pool schedules
    bound methods of objects it keeps alive.
    """

    time: float

    def schedule_event(self, function: Callable[[], Any], *, at: float | None = None) -> ClockEvent: ...


class _Level:
    """The FIFO queue of one priority level and the replica it has reserved, if any."""

    __slots__ = ("priority", "queue", "reserved")

    def __init__(self, priority: int) -> None:
        self.priority = priority
        self.queue: deque[Request] = deque()
        self.reserved: _Replica | None = None


class _TierInfo:
    """A tier's admission data and its linear price coefficients (US dollars per token)."""

    __slots__ = ("batch_cap", "level", "priority", "usd_per_cached", "usd_per_output", "usd_per_uncached")

    def __init__(self, tier: Tier, level: _Level, price: Price, cache_writes: bool) -> None:
        self.priority = tier.priority
        self.batch_cap = tier.batch_cap
        self.level = level

        def usd(uncached: int, cached: int, output: int) -> float:
            return request_cost_usd(
                price,
                uncached_input_tokens=uncached,
                cached_input_tokens=cached,
                output_tokens=output,
                price_multiplier=tier.price_multiplier,
                cache_writes=cache_writes,
            )

        # request_cost_usd is linear in the token counts: take its per-token coefficients once.
        self.usd_per_uncached = usd(1, 0, 0)
        self.usd_per_cached = usd(0, 1, 0)
        self.usd_per_output = usd(0, 0, 1)


class _Replica:
    """Mutable state of one replica. ``v_tok`` is the tokens-served-per-stream clock ``V``."""

    __slots__ = (
        "__weakref__",
        "cap",
        "cap_counts",
        "decode_heap",
        "decoding",
        "dirty",
        "due_mark",
        "due_s",
        "event",
        "event_s",
        "fold",
        "index",
        "kv_used",
        "pool",
        "prefill_free_s",
        "prefill_heap",
        "rate",
        "reserved_for",
        "streams",
        "sum_input",
        "sum_vstart",
        "v_time",
        "v_tok",
    )

    def __init__(self, pool: ServingPool, index: int) -> None:
        self.pool = pool
        self.index = index
        self.streams = 0  # own streams admitted (prefilling + decoding)
        self.decoding = 0  # own streams decoding
        self.kv_used = 0  # KV tokens held by own streams
        self.cap_counts: dict[int, int] = {}  # tier batch cap -> own streams of such tiers
        self.cap: float = INF  # effective cap: smallest cap among tiers on the replica
        self.v_tok = 0.0  # V: tokens served per decoding stream so far
        self.v_time = 0.0  # when V was last advanced (s)
        self.rate = 0.0  # current per-stream decode rate (tok/s)
        self.decode_heap: list[tuple[float, int, Request, float]] = []  # (finish mark, id, req, V_start)
        self.prefill_heap: list[tuple[float, int, Request]] = []  # (prefill end s, id, req)
        self.prefill_free_s = 0.0  # when the replica's prefill compute is next free (s)
        self.due_s = INF  # time of the next decode completion (s)
        self.due_mark = math.nan  # finish mark the due time was computed for
        self.event: ClockEvent | None = None  # the one scheduled wake-up
        self.event_s = INF  # its time (s)
        self.fold: Request | None = None  # a stream started decoding ahead, at its prefill end
        self.dirty = False  # streams changed in the current event: re-time at the end
        self.reserved_for: int | None = None  # priority floor while reserved
        self.sum_input = 0  # Σ input tokens of decoding streams
        self.sum_vstart = 0.0  # Σ V_start of decoding streams

    def wake(self) -> None:
        """Event callback: the replica's next prefill end or completion is due."""
        self.pool._on_wake(self)


class ServingPool:
    """Replicas with continuous batching and tiers, fed by :meth:`submit` (module docstring).

    ``record`` keeps every finished request's record (:meth:`requests_frame`, :attr:`finished`);
    ``tally`` adds each finished request to a :class:`~speedtrap.serving.request.RequestTally`
    (the few packed floats a run's summary needs), for runs that want no request table.
    """

    _stat_start_s: float  # start of the statistics window (s), set by reset_stats
    _stat_t: float  # when the time averages were last integrated (s)
    _area_system: float  # ∫ in-system dt over the statistics window
    _area_waiting: float  # ∫ waiting dt over the statistics window

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
        self._decode_rate = speed.decode_rate_tok_s
        self._schedule = clock.schedule_event
        self._prefill_memo: dict[int, float] = {}  # prefill_s by uncached tokens (a pure function)
        # The part of prefill_s that does not occupy the replica (network, scheduling).
        self._prefill_overhead_s = float(getattr(speed, "ttft_overhead_s", 0.0))
        self._record = record
        self._tally = tally
        self._bg = background_streams_per_replica
        self._kv_capacity = kv_capacity
        self.tiers: dict[str, Tier] = {t.name: t for t in tiers}
        self._levels = [_Level(p) for p in sorted({t.priority for t in tiers}, reverse=True)]
        level_of = {lv.priority: lv for lv in self._levels}
        self._tier_info = {t.name: _TierInfo(t, level_of[t.priority], price, cache_writes) for t in tiers}
        self._replicas = [_Replica(self, i) for i in range(replicas)]
        # (streams, index) of every replica, pushed at each change; entries whose streams no longer
        # match are stale and dropped when they surface. The top valid entry is the least loaded
        # replica (lowest index first): placement's answer whenever that replica can take the request.
        self._loads: list[tuple[int, int]] = [(0, i) for i in range(replicas)]
        self._dirty: list[_Replica] = []
        self._finished: list[Record] = []  # records (serving.request.record) in completion order
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
        req = Request(
            id=self._next_id,
            tier=tier,
            input_tokens=input_tokens,
            cached_tokens=cached_tokens,
            output_tokens=output_tokens,
            tag=tag,
            arrival_s=now,
            cost_usd=cost_usd,
            on_done=on_done,
            priority=info.priority,
            batch_cap=info.batch_cap,
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
        return records_frame(self._finished)

    @property
    def finished(self) -> list[Request]:
        """Finished requests in completion order (new objects, without their spent ``on_done``;
        empty unless ``record=True``)."""
        return [from_record(rec) for rec in self._finished]

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

    def _catch_up_notes(self, now: float) -> None:
        """Integrate the time averages at every folded prefill end up to ``now`` (in time order, as
        the unfolded events would have: the counts did not change since)."""
        pending = self._pending_notes
        while pending and pending[0] <= now:
            at = heappop(pending)
            dt = at - self._stat_t
            if dt > 0:
                self._area_system += self._in_system * dt
                self._area_waiting += self._waiting * dt
                self._stat_t = at

    def _folded_ahead(self, r: _Replica) -> int:
        """1 while ``r``'s folded stream is still prefilling in fact (up to its first token), else 0."""
        fold = r.fold
        return 1 if fold is not None and self._clock.time <= fold.first_token_s else 0

    def _dispatch(self, now: float) -> None:
        """Admit waiting requests: priority levels high to low, FIFO within a level."""
        last = self._levels[-1]
        for level in self._levels:
            q = level.queue
            while q:
                req = q[0]
                r = self._place(req)
                if r is None:
                    if level is not last and level.reserved is None:
                        self._reserve(level, req)
                    break
                q.popleft()
                self._waiting -= 1
                self._admit(req, r, now)
                if not r.dirty:
                    r.dirty = True
                    self._dirty.append(r)
            else:
                if level.reserved is not None:
                    level.reserved.reserved_for = None
                    level.reserved = None

    def _place(self, req: Request) -> _Replica | None:
        """The replica to admit ``req`` to now, or ``None`` if none can take it (:meth:`_scan`'s answer).

        Fast path: the least loaded replica (lowest index first) is the scan's answer when it is
        uncapped for the request's tier, open to its priority and has KV room; and when even it is
        full for that tier, no replica can take the request. Otherwise scan.
        """
        cap_req = req.batch_cap
        prio = req.priority
        kv_limit = self._kv_capacity - (req.input_tokens + req.output_tokens)
        loads = self._loads
        replicas = self._replicas
        while True:
            streams, i = loads[0]
            r = replicas[i]
            if r.streams == streams:
                break
            heappop(loads)  # stale
        if r.cap >= cap_req and (r.reserved_for is None or prio >= r.reserved_for):
            if streams >= cap_req:
                return None
            if r.kv_used <= kv_limit:
                return r
        return self._scan(req)

    def _scan(self, req: Request) -> _Replica | None:
        """Placement by the rules, scanning every replica: among those open to the request's
        priority, with a slot under its tier's cap (or under their own smaller cap) and KV room,
        the one whose cap does not lower the tier's, least loaded, lowest index first."""
        cap_req = req.batch_cap
        prio = req.priority
        kv_limit = self._kv_capacity - (req.input_tokens + req.output_tokens)
        best: _Replica | None = None
        best_key = 0
        for r in self._replicas:
            floor = r.reserved_for
            if floor is not None and prio < floor:
                continue
            streams = r.streams
            cap = r.cap
            if cap < cap_req:
                if streams >= cap:
                    continue
                key = streams + _CAPPED_PENALTY
            else:
                if streams >= cap_req:
                    continue
                key = streams
            if r.kv_used > kv_limit:
                continue
            if best is None or key < best_key:
                best = r
                best_key = key
                if key == 0:
                    break
        return best

    def _reserve(self, level: _Level, req: Request) -> None:
        """Reserve for ``level`` the unreserved replica that will soonest fit its head ``req``."""
        need_kv = req.input_tokens + req.output_tokens
        best: _Replica | None = None
        best_key: tuple[int, float] = (0, 0.0)
        for r in self._replicas:
            if r.reserved_for is not None:
                continue
            key = (
                max(0, r.streams + 1 - req.batch_cap),
                max(0.0, r.kv_used + need_kv - self._kv_capacity),
            )
            if best is None or key < best_key:
                best = r
                best_key = key
        if best is not None:
            best.reserved_for = level.priority
            level.reserved = best

    def _fold(self, r: _Replica) -> None:
        """Run ``r``'s next prefill end ahead (its only stream: nothing else can re-time it before):
        start the stream decoding as of its first token and schedule its completion."""
        at, _, req = heappop(r.prefill_heap)
        req.first_token_s = at
        self._start_decoding(r, req, at)
        r.fold = req
        heappush(self._pending_notes, at)
        self._retime(r, at)  # as the prefill end's own event would: the decode rate as of then

    def _unfold(self, r: _Replica, req: Request) -> None:
        """Undo :meth:`_fold` before the prefill end (another stream joins ``r``): prefilling again."""
        at = req.first_token_s
        req.first_token_s = NAN
        r.decoding = 0
        r.decode_heap.clear()
        r.sum_input -= req.input_tokens
        r.rate = 0.0
        r.due_mark = math.nan
        r.due_s = INF
        heappush(r.prefill_heap, (at, req.id, req))
        pending = self._pending_notes
        if at in pending:  # not yet integrated (it is, at a tie with the present event)
            pending.remove(at)
            heapify(pending)

    def _note_load(self, r: _Replica) -> None:
        """Record ``r``'s new stream count in the placement heap (rebuilt when stale entries pile up)."""
        loads = self._loads
        if len(loads) > 8 * len(self._replicas) + 64:
            loads[:] = [(q.streams, q.index) for q in self._replicas]
            heapify(loads)
        else:
            heappush(loads, (r.streams, r.index))

    def _admit(self, req: Request, r: _Replica, now: float) -> None:
        """Give ``req`` a slot and its KV on ``r`` now; it prefills, or decodes at once. The caller
        re-times ``r``."""
        fold = r.fold
        if fold is not None:
            r.fold = None
            if now <= fold.first_token_s:  # still prefilling in fact (at a tie: as if this came first)
                self._unfold(r, fold)
        uncached = req.input_tokens - req.cached_tokens
        prefill_s = self._prefill_memo.get(uncached)
        if prefill_s is None:
            prefill_s = self._speed.prefill_s(uncached)
            if not 0 <= prefill_s < INF:
                raise ValueError(f"prefill_s({uncached}) = {prefill_s}; need 0 <= seconds < inf")
            self._prefill_memo[uncached] = prefill_s
        req.admitted_s = now
        req.replica = r.index
        r.streams += 1
        self._note_load(r)
        r.kv_used += req.input_tokens + req.output_tokens
        cap = req.batch_cap
        counts = r.cap_counts
        counts[cap] = counts.get(cap, 0) + 1
        if cap < r.cap:
            r.cap = cap
        if prefill_s > 0:
            overhead = min(self._prefill_overhead_s, prefill_s)
            start = max(now + overhead, r.prefill_free_s)  # prompts on one replica take turns
            end = start + (prefill_s - overhead)
            r.prefill_free_s = end
            heappush(r.prefill_heap, (end, req.id, req))
        else:
            req.first_token_s = now
            self._start_decoding(r, req, now)

    def _start_decoding(self, r: _Replica, req: Request, now: float) -> None:
        if r.decoding:
            r.v_tok += r.rate * (now - r.v_time)
        else:
            r.v_tok = 0.0  # re-base V when the replica restarts decoding ...
            r.sum_vstart = 0.0
            r.due_mark = math.nan  # ... which voids the due time computed in the old frame
        r.v_time = now
        v = r.v_tok
        # the first token came with the prefill: output − 1 decode steps remain
        heappush(r.decode_heap, (v + req.output_tokens - 1, req.id, req, v))
        r.decoding += 1
        r.sum_input += req.input_tokens
        r.sum_vstart += v

    def _on_wake(self, r: _Replica) -> None:
        """Handle a replica's due prefill ends and completions, then admit and re-time."""
        now = self._clock.time
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
                while heap and heap[0][0] <= v:
                    _, _, req, v_start = heappop(heap)
                    r.decoding -= 1
                    r.sum_input -= req.input_tokens
                    r.sum_vstart -= v_start
                    # free the slot and KV (self._release, inlined)
                    r.streams -= 1
                    self._note_load(r)
                    r.kv_used -= req.input_tokens + req.output_tokens
                    cap = req.batch_cap
                    counts = r.cap_counts
                    left = counts[cap] - 1
                    if left:
                        counts[cap] = left
                    else:
                        del counts[cap]
                        if cap == r.cap:
                            r.cap = min(counts) if counts else INF
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
            self._finished.extend(map(record, finished))  # plain tuples the GC need not track
        if self._tally is not None:
            self._tally.add(finished)
        self._completed += len(finished)
        for req in finished:
            on_done = req.on_done
            if on_done is not None:
                req.on_done = None  # spent: do not keep the caller alive through the request
                on_done(req)

    def _flush(self, now: float) -> None:
        """Re-time every replica whose streams changed in this event."""
        dirty = self._dirty
        for r in dirty:
            self._retime(r, now)
        dirty.clear()

    def _retime(self, r: _Replica, now: float) -> None:
        """Recompute a replica's decode rate and next wake-up; move its one event if needed."""
        r.dirty = False
        n = r.decoding
        if not n and self._fold_prefill and len(r.prefill_heap) == 1 and r.prefill_heap[0][0] > now:
            self._fold(r)
            return
        if n:
            v = r.v_tok
            if r.v_time != now:
                r.v_tok = v = v + r.rate * (now - r.v_time)
                r.v_time = now
            context = (r.sum_input + n * v - r.sum_vstart) / n
            room = r.cap - r.streams  # slots the elastic background traffic may fill
            bg = self._bg
            batch = n + (bg if bg < room else int(room))
            rate = self._decode_rate(batch, context)
            head = r.decode_heap[0][0]
            if rate != r.rate or head != r.due_mark:
                if not rate > 0 or rate == INF:
                    raise ValueError(f"decode_rate_tok_s({batch}, {context:g}) = {rate}; need 0 < rate < inf")
                r.rate = rate
                r.due_mark = head
                r.due_s = due = now + (head - v) / rate
            else:
                due = r.due_s
        else:
            r.rate = 0.0
            r.due_mark = math.nan
            r.due_s = due = INF
        prefills = r.prefill_heap
        if prefills and prefills[0][0] < due:
            due = prefills[0][0]
        event = r.event
        if event is not None:
            if r.event_s == due:
                return
            event.cancel()
            self.events_cancelled += 1
            r.event = None
            r.event_s = INF
        if due < INF:
            r.event = self._schedule(r.wake, at=due)
            r.event_s = due
            self.events_scheduled += 1
