"""The private Mesa internals that speedtrap.models.base relies on, each named, and how
WorkflowModel fits Mesa's own entry points (rng, step, running, batch_run).

pyproject.toml pins Mesa to the versions these were tested against; when one of these tests fails
after a Mesa upgrade, adapt models/base.py before widening the pin.
"""

from __future__ import annotations

import inspect
import itertools
import multiprocessing
from collections.abc import Callable, Iterator

import mesa
import numpy as np
import pytest
from mesa.time import Event, EventList

from speedtrap.config import Scenario
from speedtrap.models import WorkflowModel

TINY = Scenario().with_overrides({"developers": 1, "horizon_s": 3.5})


def _mesa_model() -> mesa.Model:
    return mesa.Model(rng=1)


def _calls(function: Callable[..., object], name: str) -> bool:
    return name in inspect.getsource(function)


INTERNALS: dict[str, Callable[[], bool]] = {
    "Model.time is an observable stored in Model._time": lambda: (
        getattr(vars(mesa.Model).get("time"), "private_name", None) == "_time"
    ),
    "Event._ids, the insertion counter shared by all events": lambda: isinstance(
        getattr(Event, "_ids", None), itertools.count
    ),
    "Model._default_schedule, the unit-step schedule, with stop()": lambda: callable(
        getattr(getattr(_mesa_model(), "_default_schedule", None), "stop", None)
    ),
    "Model._event_list, an EventList that Model.schedule_event fills": lambda: (
        isinstance(getattr(_mesa_model(), "_event_list", None), EventList)
        and _calls(mesa.Model.schedule_event, "self._event_list")
    ),
    "Model._advance_time, called by Model.run_until": lambda: (
        callable(getattr(mesa.Model, "_advance_time", None)) and _calls(mesa.Model.run_until, "_advance_time")
    ),
    "Model._wrapped_step, what model.step() runs": lambda: (
        callable(getattr(mesa.Model, "_wrapped_step", None))
        and _calls(mesa.Model.__init__, "self.step = self._wrapped_step")
    ),
    "Model.subscribers, Mesa's signal subscriptions (a dict)": lambda: isinstance(
        getattr(_mesa_model(), "subscribers", None), dict
    ),
    "Event.fn (a weak reference, called to get the callback) and Event.CANCELED": lambda: (
        _calls(Event.__init__, "self.fn =") and isinstance(vars(Event).get("CANCELED"), property)
    ),
    "EventList methods that models.base implements over its heap": lambda: all(
        callable(getattr(EventList, name, None))
        for name in ("add_event", "pop_event", "peek_ahead", "compact", "is_empty", "remove", "clear")
    ),
}


@pytest.mark.parametrize("internal", list(INTERNALS))
def test_a_mesa_internal_that_models_base_uses_is_there(internal: str) -> None:
    try:
        present = INTERNALS[internal]()
    except Exception as exc:  # an attribute gone or renamed: say which one, not a traceback
        present, why = False, f" ({type(exc).__name__}: {exc})"
    else:
        why = ""
    assert present, (
        f"Mesa {mesa.__version__} no longer has {internal}{why}; speedtrap.models.base relies on it. "
        "Adapt models/base.py or keep Mesa within the versions pinned in pyproject.toml."
    )


def test_a_numpy_generator_as_rng_is_refused_clearly() -> None:
    with pytest.raises(TypeError, match="rng must be an integer root seed or None, got Generator"):
        WorkflowModel(TINY, rng=np.random.default_rng(1))  # type: ignore[arg-type]


def test_step_advances_one_second_and_stops_at_the_horizon() -> None:
    model = WorkflowModel(TINY, rng=1)
    model.step()
    assert (model.time, model.steps, model.running) == (1.0, 1, True)
    while model.running:
        model.step()
    assert model.time == TINY.horizon_s and model.steps == 4 and not model.running
    model.step()  # at the horizon: nothing moves
    assert model.time == TINY.horizon_s and model.steps == 4


def test_run_until_the_horizon_ends_running() -> None:
    model = WorkflowModel(TINY, rng=1)
    model.run_until(2.0)
    assert model.running
    model.run_until(TINY.horizon_s)
    assert not model.running


@pytest.fixture
def start_method() -> Iterator[None]:
    """mesa.batch_run forces the spawn start method process-wide: put it back."""
    before = multiprocessing.get_start_method(allow_none=True)
    yield
    multiprocessing.set_start_method(before, force=True)


def test_mesa_batch_run_is_refused_clearly(start_method: None) -> None:
    with pytest.raises(TypeError, match=r"does not run under mesa\.batch_run.*run_experiment"):
        mesa.batch_run(
            WorkflowModel, parameters={"scenario": [TINY]}, rng=[1], max_steps=10, display_progress=False
        )
