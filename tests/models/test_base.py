import pickle
from typing import Any

import mesa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mesa.experimental.mesa_signals import ObservableSignals
from mesa.time import Priority, Schedule

from speedtrap.models.base import EventModel


def test_event_model_has_no_unit_step_loop() -> None:
    model = EventModel(rng=1)
    model.run_until(10.0)
    assert model.steps == 0
    assert model.time == 10.0


def test_event_model_runs_scheduled_bound_methods_in_time_order() -> None:
    model = EventModel(rng=1)
    seen: list[float] = []

    class Probe:
        def fire(self) -> None:
            seen.append(model.time)

    probe = Probe()
    model.schedule_event(probe.fire, at=2.5)
    model.schedule_event(probe.fire, at=0.5)
    model.run_until(3.0)
    assert seen == [0.5, 2.5]


class Log:
    """Bound-method and plain-callable callbacks that record (label, time) and may schedule more."""

    def __init__(self, model: mesa.Model) -> None:
        self.model = model
        self.seen: list[tuple[str, float]] = []
        self.keep: list[Any] = []  # plain callables must stay alive: Mesa holds them weakly

    def method(self, label: str) -> Any:
        return _Callback(self, label).fire

    def plain(self, label: str) -> Any:
        def fire() -> None:
            self.seen.append((label, self.model.time))

        self.keep.append(fire)
        return fire


class _Callback:
    def __init__(self, log: Log, label: str) -> None:
        self.log, self.label = log, label
        log.keep.append(self)

    def fire(self) -> None:
        log = self.log
        log.seen.append((self.label, log.model.time))
        if self.label.startswith("spawn") and ">" not in self.label:  # schedule now and later, from an event
            log.model.schedule_event(log.method(self.label + ">now"), after=0.0)
            log.model.schedule_event(log.method(self.label + ">later"), after=0.5)


def stock_mesa_model() -> mesa.Model:
    model = mesa.Model(rng=1)
    model._default_schedule.stop()
    return model


def replay(model: mesa.Model, plan: list[tuple[float, str, str, Priority, bool]]) -> list[tuple[str, float]]:
    """Schedule ``plan`` (time, label, kind, priority, cancel) on ``model``, run it, return the log."""
    log = Log(model)
    for at, label, kind, priority, cancel in plan:
        fn = log.method(label) if kind == "method" else log.plain(label)
        event = model.schedule_event(fn, at=at, priority=priority)
        if cancel:
            event.cancel()
    model.schedule_recurring(log.method("tick"), Schedule(interval=0.75, start=0.25, end=4.0))
    model.run_until(2.0)
    model.run_for(3.0)
    return log.seen


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.0, 0.25, 1.0, 1.5, 2.0, 3.25, 4.0]),  # many ties
            st.sampled_from(["a", "b", "spawn"]),
            st.sampled_from(["method", "plain"]),
            st.sampled_from(list(Priority)),
            st.booleans(),
        ),
        max_size=25,
    )
)
def test_event_order_and_time_match_stock_mesa(plan: list[tuple[float, str, str, Priority, bool]]) -> None:
    # Bound methods take EventModel's lean path, plain callables and recurring schedules Mesa's own
    # Event; all must run in Mesa's (time, priority, insertion) order, with the same times.
    labelled = [
        (at, f"{label}{i}", kind, prio, cancel) for i, (at, label, kind, prio, cancel) in enumerate(plan)
    ]
    fast = EventModel(rng=1)
    assert replay(fast, labelled) == replay(stock_mesa_model(), labelled)
    assert fast.time == 5.0


def test_callbacks_are_held_weakly_and_counted() -> None:
    model = EventModel(rng=1)
    log = Log(model)
    gone = _Callback(log, "gone")
    model.schedule_event(gone.fire, at=1.0)
    log.keep.remove(gone)
    del gone  # its object is gone: the event does nothing, silently
    cancelled = model.schedule_event(log.method("cancelled"), at=1.0)
    cancelled.cancel()
    assert cancelled.CANCELED
    model.schedule_event(log.method("kept"), after=2.0)
    with pytest.raises(ValueError, match="alive"):
        model.schedule_event(lambda: None, at=1.0)
    model.run_until(3.0)
    assert log.seen == [("kept", 2.0)]
    assert model.events_executed == 1


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"at": 0.5}, "past"),
        ({"after": -1.0}, "past"),
        ({}, "exactly one"),
        ({"at": 2.0, "after": 1.0}, "exactly one"),
    ],
)
def test_schedule_event_rejects_bad_times(kwargs: dict[str, float], match: str) -> None:
    model = EventModel(rng=1)
    model.run_until(1.0)
    with pytest.raises(ValueError, match=match):
        model.schedule_event(Log(model).method("x"), **kwargs)


def test_time_observers_see_every_change_as_in_stock_mesa() -> None:
    class Watcher:  # Mesa holds signal handlers weakly too: a bound method of a live object
        def __init__(self) -> None:
            self.changes: list[tuple[float, float]] = []

        def on_time(self, message: Any) -> None:
            self.changes.append((message.additional_kwargs["old"], message.additional_kwargs["new"]))

    plan = [(t, f"e{i}", "method", Priority.DEFAULT, False) for i, t in enumerate((0.5, 0.5, 1.0, 2.5))]
    watchers = []
    for model in (EventModel(rng=1), stock_mesa_model()):
        watcher = Watcher()
        model.observe("time", ObservableSignals.CHANGED, watcher.on_time)
        replay(model, plan)
        watchers.append(watcher)
    assert watchers[0].changes == watchers[1].changes
    assert len(watchers[0].changes) >= 5


class Counter(mesa.Agent):
    """An agent that counts its own wake-ups (picklable: defined at module level)."""

    def __init__(self, model: mesa.Model) -> None:
        super().__init__(model)
        self.fired: list[float] = []

    def fire(self) -> None:
        self.fired.append(self.model.time)


def test_a_model_with_pending_events_pickles_like_mesa() -> None:
    model = EventModel(rng=1)
    agent = Counter(model)
    model.schedule_event(agent.fire, at=1.0)
    model.schedule_event(agent.fire, at=2.0).cancel()
    model.schedule_event(agent.fire, at=3.0)
    copy = pickle.loads(pickle.dumps(model))
    copy.run_until(4.0)
    (twin,) = copy.agents
    assert twin.fired == [1.0, 3.0] and agent.fired == []
