"""Admission to the serving pool's replicas: slots, KV room, tier caps and the priority queue.

The half of :class:`~speedtrap.serving.pool.ServingPool` that places requests (:class:`Admission`,
a base of the pool); pure Python, never imports Mesa.

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
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from heapq import heapify, heappop, heappush

from mypy_extensions import mypyc_attr

from speedtrap.config.tier import Price, Tier
from speedtrap.serving.pricing import request_cost_usd
from speedtrap.serving.replica_clock import INF, ReplicaState, Retiming
from speedtrap.serving.request import Request
from speedtrap.serving.speed import SpeedModel

_CAPPED_PENALTY = 1 << 40  # placement key offset: replicas whose cap is below the request's tier cap


class PriorityLevel:
    """The FIFO queue of one priority level and the replica it has reserved, if any."""

    __slots__ = ("priority", "queue", "reserved")

    def __init__(self, priority: int) -> None:
        self.priority = priority
        self.queue: deque[Request] = deque()
        self.reserved: ReplicaState | None = None


class TierAdmission:
    """A tier's admission data and its linear price coefficients (US dollars per token)."""

    __slots__ = ("batch_cap", "level", "priority", "usd_per_cached", "usd_per_output", "usd_per_uncached")

    def __init__(self, tier: Tier, level: PriorityLevel, price: Price, cache_writes: bool) -> None:
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


@mypyc_attr(allow_interpreted_subclasses=True)  # a base of ServingPool, which may be subclassed
class Admission(Retiming):
    """The admission half of :class:`~speedtrap.serving.pool.ServingPool` (a base class of it):
    placement, the priority levels' queues and reservations, and the slot and KV a request takes
    (module docstring). The pool sets the attributes declared here."""

    _speed: SpeedModel
    _kv_capacity: float  # KV tokens per replica
    _levels: list[PriorityLevel]  # priority levels, highest first
    _replicas: list[ReplicaState]
    _loads: list[tuple[int, int]]  # (streams, index) heap of the replicas, stale entries included
    _loads_limit: int  # entries beyond which the heap is rebuilt from the replicas (stale ones dropped)
    _prefill_memo: dict[int, float]  # prefill_s by uncached tokens (a pure function)
    _prefill_s: Callable[[int], float]  # the speed model's prefill_s (decode_rate.pool_prefill_s)
    _prefill_overhead_s: float  # the part of prefill_s that does not occupy the replica

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

    def _place(self, req: Request) -> ReplicaState | None:
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

    def _scan(self, req: Request) -> ReplicaState | None:
        """Placement by the rules, scanning every replica: among those open to the request's
        priority, with a slot under its tier's cap (or under their own smaller cap) and KV room,
        the one whose cap does not lower the tier's, least loaded, lowest index first."""
        cap_req = req.batch_cap
        prio = req.priority
        kv_limit = self._kv_capacity - (req.input_tokens + req.output_tokens)
        best: ReplicaState | None = None
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

    def _reserve(self, level: PriorityLevel, req: Request) -> None:
        """Reserve for ``level`` the unreserved replica that will soonest fit its head ``req``."""
        need_kv = req.input_tokens + req.output_tokens
        best: ReplicaState | None = None
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

    def _rebuild_loads(self) -> None:
        """Rebuild the placement heap from the replicas, dropping its stale entries."""
        loads = self._loads
        loads[:] = [(q.streams, q.index) for q in self._replicas]
        heapify(loads)

    def _admit(self, req: Request, r: ReplicaState, now: float) -> None:
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
            prefill_s = self._prefill_s(uncached)
            if not 0 <= prefill_s < INF:
                raise ValueError(f"prefill_s({uncached}) = {prefill_s}; need 0 <= seconds < inf")
            self._prefill_memo[uncached] = prefill_s
        req.admitted_s = now
        req.replica = r.index
        r.streams = streams = r.streams + 1
        loads = self._loads  # record the new stream count in the placement heap (as _on_wake does)
        if len(loads) > self._loads_limit:
            self._rebuild_loads()
        else:
            heappush(loads, (streams, r.index))
        r.kv_used += req.input_tokens + req.output_tokens
        cap = req.batch_cap
        counts = r.cap_counts
        counts[cap] = counts.get(cap, 0) + 1
        if cap < r.cap:
            r.cap = float(cap)
        if prefill_s > 0:
            # min(overhead, prefill_s) and max(now + overhead, prefill_free_s), without the calls
            overhead = self._prefill_overhead_s
            if prefill_s < overhead:
                overhead = prefill_s
            start = now + overhead
            if r.prefill_free_s > start:  # prompts on one replica take turns
                start = r.prefill_free_s
            end = start + (prefill_s - overhead)
            r.prefill_free_s = end
            heappush(r.prefill_heap, (end, req.id, req))
        else:
            req.first_token_s = now
            self._start_decoding(r, req, now)
