"""The replicas' clocks: processor-sharing decode with exact re-timing (part of the serving pool).

Each replica of :class:`~speedtrap.serving.pool.ServingPool` keeps the state below
(:class:`ReplicaState`), and :class:`Retiming` (a base of the pool) moves its one scheduled event
whenever its streams change. Pure Python; never imports Mesa.

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
"""

from __future__ import annotations

import math
from collections.abc import Callable
from heapq import heapify, heappop, heappush
from typing import Any, Protocol

from mypy_extensions import mypyc_attr

from speedtrap.serving.request import NAN, Request

INF = math.inf


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


class ReplicaState:
    """Mutable state of one replica of a pool. ``v_tok`` is the tokens-served-per-stream clock ``V``."""

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
        "on_wake",
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

    def __init__(self, on_wake: Callable[[ReplicaState], None], index: int) -> None:
        self.on_wake = on_wake
        """The pool's handler of this replica's wake-ups (called with the replica)."""
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
        self.on_wake(self)


@mypyc_attr(allow_interpreted_subclasses=True)  # a base of ServingPool, which may be subclassed
class Retiming:
    """The re-timing half of :class:`~speedtrap.serving.pool.ServingPool` (a base class of it): the
    decode clock ``V`` of each replica, its finish marks, folded prefill ends and the one event it
    holds (module docstring). The pool sets the attributes declared here."""

    _clock: Clock
    _pending_notes: list[float]  # prefill ends folded away: integrate the stats there (a heap)
    _stat_t: float  # when the time averages were last integrated (s)
    _area_system: float  # ∫ in-system dt over the statistics window
    _area_waiting: float  # ∫ waiting dt over the statistics window
    _in_system: int
    _waiting: int
    _fold_prefill: bool
    _bg: int  # background streams per replica
    _decode_rate: Callable[[int, float], float]
    _schedule: Callable[..., ClockEvent]
    _dirty: list[ReplicaState]  # replicas whose streams changed in the current event
    events_scheduled: int
    events_cancelled: int

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

    def _folded_ahead(self, r: ReplicaState) -> int:
        """1 while ``r``'s folded stream is still prefilling in fact (up to its first token), else 0."""
        fold = r.fold
        return 1 if fold is not None and self._clock.time <= fold.first_token_s else 0

    def _unfold(self, r: ReplicaState, req: Request) -> None:
        """Undo a fold (:meth:`_retime`) before the prefill end (another stream joins ``r``): the
        stream is prefilling again."""
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

    def _start_decoding(self, r: ReplicaState, req: Request, now: float) -> None:
        """Start ``req`` decoding on ``r`` now: advance ``V`` and push its finish mark."""
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

    def _flush(self, now: float) -> None:
        """Re-time every replica whose streams changed in this event."""
        dirty = self._dirty
        for r in dirty:
            self._retime(r, now)
        dirty.clear()

    def _retime(self, r: ReplicaState, now: float) -> None:
        """Recompute a replica's decode rate and next wake-up; move its one event if needed.

        When the replica's only stream is prefilling, its prefill end is run ahead first (folded,
        module docstring): the stream starts decoding as of its first token, and the rate and the
        wake-up are those its own prefill-end event would have computed then."""
        r.dirty = False
        start = now
        n = r.decoding
        prefills = r.prefill_heap
        if not n and self._fold_prefill and len(prefills) == 1 and prefills[0][0] > now:
            at, _, req = heappop(prefills)
            req.first_token_s = at
            # start decoding as of ``at`` on an idle replica (_start_decoding, inlined): V re-based
            v = 0.0
            r.v_tok = v
            r.sum_vstart = 0.0
            r.due_mark = math.nan
            r.v_time = at
            heappush(r.decode_heap, (v + req.output_tokens - 1, req.id, req, v))
            r.decoding = n = 1
            r.sum_input += req.input_tokens
            r.sum_vstart += v
            r.fold = req
            heappush(self._pending_notes, at)
            now = at
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
        if prefills and prefills[0][0] < due:
            due = prefills[0][0]
        if due < start:  # a finish mark reached within rounding of now: due now, never in the past
            due = start
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
