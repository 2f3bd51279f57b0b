"""An event-driven Mesa model: continuous time, no unit-interval step loop, a lean event path."""

from __future__ import annotations

import gc
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from heapq import heappop, heappush
from itertools import repeat
from types import BuiltinMethodType, MethodType, ModuleType
from typing import Any
from weakref import ref

import mesa
from mesa.time import Event, EventList, Priority

__all__ = [
    "GC_THRESHOLDS",
    "MAX_EVENTS_AT_ONE_INSTANT",
    "EventAccounts",
    "EventModel",
    "MethodEvent",
    "ZeroTimeLoopError",
    "fewer_collections",
]

if vars(mesa.Model)["time"].private_name != "_time":  # pragma: no cover - guards a Mesa internal
    raise ImportError("speedtrap.models.base expects Mesa's observable Model.time to be stored in `_time`")

_DEFAULT = Priority.DEFAULT
_DEFAULT_PRIORITY = int(_DEFAULT)
_new = object.__new__
_ids = Event._ids  # Mesa's own insertion counter: one (time, priority, id) order for every event
_Entry = tuple[float, int, int, "MethodEvent | Event"]

GC_THRESHOLDS = (20_000, 20, 20)
"""Python's cyclic-collector thresholds, at least, while an :class:`EventModel` runs events
(``gc.set_threshold``; the interpreter's defaults are ``(700, 10, 10)``), restored when
``run_until`` returns; a collector whose automatic collections are off (threshold 0) is left so. A run
allocates tens of tracked objects per event, nearly all freed by reference counting; collecting
less often leaves the results alone (events hold their objects weakly or, for compiled callbacks,
strongly, never through a cycle: ``tests/models/test_golden.py``) and saves a tenth of a large run."""


MAX_EVENTS_AT_ONE_INSTANT = 1_000_000
"""Events an :class:`EventModel` runs one after another at one simulated instant before it stops the
run (:class:`ZeroTimeLoopError`), plus :data:`EVENTS_PER_AGENT_AT_ONE_INSTANT` per agent. A sound model
runs a handful of events per agent at one instant (everyone starts at time 0); an event that keeps
rescheduling itself after a step that does not move the clock (a duration of 0, or one too small
for the clock at that time) would run forever at full CPU. A million events take about a second."""

EVENTS_PER_AGENT_AT_ONE_INSTANT = 1_000
"""Events per agent that :data:`MAX_EVENTS_AT_ONE_INSTANT` adds to the limit, so that a model of many
agents that all act at one instant is never stopped."""


class ZeroTimeLoopError(ValueError):
    """A model ran more than its limit of events one after another at one simulated instant: some
    duration is 0 (or too small to move the clock), so the same events repeat without end."""


def _raise_gc_thresholds() -> tuple[int, int, int]:
    """Raise the collector's thresholds to :data:`GC_THRESHOLDS` at least; return the old ones."""
    thresholds = gc.get_threshold()
    if thresholds[0]:  # (a threshold of 0 disables the automatic collections: left so)
        gc.set_threshold(*map(max, thresholds, GC_THRESHOLDS))
    return thresholds


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the body with the collector's thresholds raised to :data:`GC_THRESHOLDS` (as events run):
    for building a large model, whose many new objects would otherwise trigger collections."""
    thresholds = _raise_gc_thresholds()
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


def _strong(obj: Any) -> Callable[[], Any]:
    """A callable returning ``obj`` (a strong reference with the call interface of a weak one)."""
    return repeat(obj).__next__


def _holder(obj: Any) -> Callable[[], Any]:
    """How an event holds its callback's object: weakly (as Mesa does) where the object's type allows
    weak references; strongly otherwise (instances of compiled classes, e.g. the mypyc-compiled serving
    pool's replicas), which the object's owner keeps alive anyway."""
    return ref(obj) if type(obj).__weakrefoffset__ else _strong(obj)


_UNBOUND: dict[tuple[type, str], Callable[[Any], Any]] = {}
"""The unbound method of each (class, name) of a compiled class's method scheduled so far."""


def _bound(function: Any) -> tuple[Any, Callable[[Any], Any]] | None:
    """``(object, unbound function)`` of a bound method, Python's or a compiled class's (a built-in
    method, which no weak reference keeps: Mesa's own path would drop it at once); else ``None``."""
    if type(function) is MethodType:
        return function.__self__, function.__func__
    if type(function) is BuiltinMethodType:
        obj = function.__self__
        if obj is not None and not isinstance(obj, ModuleType):
            key = (type(obj), function.__name__)
            unbound = _UNBOUND.get(key)
            if unbound is None:
                unbound = _UNBOUND[key] = getattr(key[0], key[1])
            return obj, unbound
    return None


@dataclass(frozen=True)
class EventAccounts:
    """Where every event an :class:`EventModel` scheduled went. In a sound model ``lost`` is 0:
    ``scheduled == executed + cancelled + pending``."""

    scheduled: int
    """Events put on the timeline (one-off events of either path, recurring schedules' events)."""
    executed: int
    """Events run."""
    cancelled: int
    """Events cancelled (taken off the timeline, or still on it and to be skipped)."""
    pending: int
    """Live events on the timeline, still to come."""

    @property
    def lost(self) -> int:
        """Events neither run, cancelled nor pending: due when their callback's object was gone
        (weak references, as in Mesa: such an event is skipped silently)."""
        return self.scheduled - self.executed - self.cancelled - self.pending


class MethodEvent:
    """A one-off event whose callback is a bound method, held by weak reference.

    What ``EventModel.schedule_event`` returns for bound methods: the same contract as Mesa's
    ``Event`` (``time``, ``priority``, ``unique_id``, ``cancel()``, ``CANCELED``, ``execute()``),
    with the method's object held weakly (a callback whose object is gone is skipped silently,
    as in Mesa) and without Mesa's per-event ``WeakMethod`` and argument lists. A method of a
    compiled class whose instances take no weak reference holds its object strongly (:func:`_holder`).
    """

    __slots__ = ("_func", "_obj", "priority", "time", "unique_id")

    def __init__(self, time: float, priority: int, obj: Any, func: Callable[[Any], Any]) -> None:
        self.time = time
        self.priority = priority
        self.unique_id = next(_ids)
        self._obj: Callable[[], Any] | None = _holder(obj)
        self._func = func

    @property
    def CANCELED(self) -> bool:  # noqa: N802 - Mesa's name
        """Whether the event was cancelled."""
        return self._obj is None

    def cancel(self) -> None:
        """Cancel the event (it stays in the heap and is skipped when popped)."""
        self._obj = None

    def execute(self) -> None:
        """Call the method unless the event was cancelled or its object is gone."""
        obj = self._obj
        if obj is not None:
            target = obj()
            if target is not None:
                self._func(target)

    def __getstate__(self) -> tuple[float, int, int, Any, Any]:
        """Pickle with a strong reference to the method's object (as Mesa's ``Event`` does)."""
        return (
            self.time,
            self.priority,
            self.unique_id,
            None if self._obj is None else self._obj(),
            self._func,
        )

    def __setstate__(self, state: tuple[float, int, int, Any, Any]) -> None:
        self.time, self.priority, self.unique_id, obj, self._func = state
        self._obj = None if obj is None else _holder(obj)

    def __lt__(self, other: MethodEvent | Event) -> bool:
        return (self.time, self.priority, self.unique_id) < (other.time, other.priority, other.unique_id)


class _HeapEventList(EventList):
    """Mesa's ``EventList`` interface over the model's heap of ``(time, priority, id, event)`` entries,
    so that events Mesa itself schedules (recurring schedules, non-method callbacks) share one order
    with the fast path."""

    def __init__(self, heap: list[_Entry]) -> None:
        self._heap = heap
        self.added = 0  # events Mesa put here (its own Event path, recurring schedules)
        self.removed = 0  # cancelled entries taken off by pop_event, compact or clear

    @property
    def _events(self) -> list[MethodEvent | Event]:
        return [entry[3] for entry in self._heap]

    def add_event(self, event: Event) -> None:
        self.added += 1
        heappush(self._heap, (event.time, event.priority, event.unique_id, event))

    def pop_event(self) -> Event:
        heap = self._heap
        while heap:
            event = heappop(heap)[3]
            if not event.CANCELED:
                return event
            self.removed += 1
        raise IndexError("Event list is empty")

    def peek_ahead(self, n: int = 1) -> list[Event]:
        if self.is_empty():
            raise IndexError("event list is empty")
        live = sorted(entry for entry in self._heap if not entry[3].CANCELED)
        return [entry[3] for entry in live[:n]]

    def compact(self) -> None:
        live = [entry for entry in self._heap if not entry[3].CANCELED]
        self.removed += len(self._heap) - len(live)
        self._heap[:] = live
        self._heap.sort()

    def __contains__(self, event: object) -> bool:
        if getattr(event, "CANCELED", True):
            return False
        return any(entry[3] is event for entry in self._heap)

    def __len__(self) -> int:
        return sum(1 for entry in self._heap if not entry[3].CANCELED)

    def __repr__(self) -> str:
        live = ", ".join(
            f"Event(time={e[0]}, priority={e[1]}, id={e[2]})" for e in sorted(self._heap) if not e[3].CANCELED
        )
        return f"EventList([{live}])"

    def remove(self, event: Event) -> None:
        if not event.CANCELED:
            event.cancel()

    def clear(self) -> None:
        for entry in self._heap:  # withdrawn: counted as cancelled
            if not entry[3].CANCELED:
                entry[3].cancel()
        self.removed += len(self._heap)
        self._heap.clear()


class EventModel(mesa.Model):
    """A Mesa 3.5 model advanced only by scheduled events (``schedule_event``, ``run_until``).

    Mesa starts a built-in unit-interval ``step`` event by default; a purely event-driven model
    stops it (as Mesa's own M/M/c example does). This is the one place that does so.

    Event callbacks are held by weak reference: schedule bound methods of live objects. Bound
    methods take a lean path (:class:`MethodEvent`, one heap of ``(time, priority, id, event)``
    tuples); other callables and Mesa's recurring schedules go through Mesa's own ``Event`` into the
    same heap. Semantics are Mesa 3.5's: events run in (time, priority, insertion) order, one at a
    time, with ``time`` set to the event's time; a cancelled event or one whose callback's object
    is gone does nothing; lambdas are refused. Methods of compiled classes (built-in methods, which
    Mesa's weak references would drop at once) take the lean path too, holding their object
    strongly when its type takes no weak reference. ``events_executed`` counts the events run,
    :meth:`event_accounts` where every scheduled event went. While events run, the cyclic garbage
    collector's thresholds are :data:`GC_THRESHOLDS`.
    """

    _time: float  # Mesa's storage of the observable ``time`` (checked at import)

    def __init__(self, *args: Any, rng: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, rng=rng, **kwargs)
        self._default_schedule.stop()
        self._heap: list[_Entry] = []
        self._event_list = _HeapEventList(self._heap)
        self.events_executed = 0
        """Events executed so far (cancelled events and dead callbacks not counted)."""
        self._scheduled = 0  # events scheduled through the lean path
        self._cancelled = 0  # cancelled events skipped by the event loop

    def schedule_event(
        self,
        function: Callable[..., Any],
        *,
        at: float | None = None,
        after: float | None = None,
        priority: Priority = Priority.DEFAULT,
    ) -> MethodEvent | Event:
        """Schedule a one-off call of ``function`` at time ``at`` or ``after`` seconds from now
        (exactly one of them); returns the event (``cancel()`` to withdraw it)."""
        if type(function) is MethodType and priority is _DEFAULT and (at is None) is not (after is None):
            time = self._time + after if at is None else at  # type: ignore[operator]
            if time >= self._time:  # the common case, inlined: a bound method, now or later
                event = _new(MethodEvent)
                event.time = time
                event.priority = _DEFAULT_PRIORITY
                event.unique_id = uid = next(_ids)
                event._obj = ref(function.__self__)
                event._func = function.__func__
                heappush(self._heap, (time, _DEFAULT_PRIORITY, uid, event))
                self._scheduled += 1
                return event
        elif type(function) is BuiltinMethodType and priority is _DEFAULT and after is None:
            # a compiled class's method at a given time (the compiled pool's wake-ups), inlined
            obj = function.__self__
            cls = type(obj)
            func = _UNBOUND.get((cls, function.__name__))
            if func is not None and at is not None and at >= self._time:
                event = _new(MethodEvent)
                event.time = at
                event.priority = _DEFAULT_PRIORITY
                event.unique_id = uid = next(_ids)
                event._obj = ref(obj) if cls.__weakrefoffset__ else repeat(obj).__next__
                event._func = func
                heappush(self._heap, (at, _DEFAULT_PRIORITY, uid, event))
                self._scheduled += 1
                return event
        bound = _bound(function)
        if bound is None:
            return super().schedule_event(function, at=at, after=after, priority=priority)
        if (at is None) == (after is None):
            raise ValueError("Specify exactly one of 'at' or 'after'")
        time = at if at is not None else self._time + after  # type: ignore[operator]
        if time < self._time:
            raise ValueError(
                f"Cannot schedule event in the past. Scheduled time is {time}, "
                f"but current time is {self._time}"
            )
        prio = int(priority)
        event = MethodEvent(time, prio, *bound)
        heappush(self._heap, (time, prio, event.unique_id, event))
        self._scheduled += 1
        return event

    def event_accounts(self) -> EventAccounts:
        """Where every event scheduled so far went (:class:`EventAccounts`; ``lost`` is 0 in a sound
        model: no event was due after its callback's object was gone)."""
        heap = self._heap
        live = sum(1 for entry in heap if not entry[3].CANCELED)
        events = self._event_list
        return EventAccounts(
            scheduled=self._scheduled + events.added,
            executed=self.events_executed,
            cancelled=self._cancelled + events.removed + (len(heap) - live),
            pending=live,
        )

    def _advance_time(self, until: float) -> None:
        """Run every event due at or before ``until`` in order, then set the time to ``until``."""
        if until <= self._time:
            warnings.warn(f"end time {until} is larger than time {self._time}", RuntimeWarning, stacklevel=2)
            return
        heap = self._heap
        subscribers = self.subscribers  # Mesa's signal subscriptions (a dict, filled by observe())
        executed = cancelled = 0
        instant = self._time  # the time of the latest event, and how many ran at it one after another
        same = 0
        limit = MAX_EVENTS_AT_ONE_INSTANT + EVENTS_PER_AGENT_AT_ONE_INSTANT * len(self.agents)
        thresholds = _raise_gc_thresholds()
        try:
            while heap and heap[0][0] <= until:
                when, _, _, event = heappop(heap)
                if when != instant:
                    instant = when
                    same = 0
                else:
                    same += 1
                    if same > limit:
                        raise ZeroTimeLoopError(_zero_time_message(event, when, same))
                if type(event) is MethodEvent:
                    obj = event._obj
                    if obj is None:
                        cancelled += 1
                        continue
                    if subscribers:
                        self.time = when
                    else:
                        self._time = when  # nobody observes the time: skip the signal machinery
                    target = obj()
                    if target is not None:
                        executed += 1
                        event._func(target)
                elif not event.CANCELED:  # a Mesa Event: a plain callable or a recurring schedule
                    mesa_event: Event = event
                    self.time = when
                    if mesa_event.fn() is not None:
                        executed += 1
                    mesa_event.execute()
                else:
                    cancelled += 1
        finally:
            gc.set_threshold(*thresholds)
            self.events_executed += executed
            self._cancelled += cancelled
        self.time = until


def _zero_time_message(event: MethodEvent | Event, when: float, count: int) -> str:
    """Why a run stopped at ``when``: which callback repeated, and what usually makes it."""
    func = getattr(event, "_func", None) or getattr(getattr(event, "fn", None), "__func__", None)
    name = getattr(func, "__qualname__", None) or type(event).__name__
    return (
        f"the simulation ran {count:,} events at one instant (t = {when:.6g} s, the last one "
        f"{name}) without the clock moving: a duration that step schedules is 0, or too short to move "
        "the clock at that time, so the same events repeat without end; give that duration (a field "
        "of the scenario read by that step) a larger value"
    )
