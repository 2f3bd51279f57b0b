"""Every scheduled event is accounted for: scheduled = executed + cancelled + pending.

Mesa holds event callbacks by weak reference and skips, silently, an event whose callback's object
is gone; so does ``EventModel``. A model that loses an event that way runs on as if nothing had
happened, with wrong results. These tests run the headline scenario and the fixed scenarios of
``test_golden.py`` and check that no event was lost (``EventAccounts.lost == 0``), under whichever
build of the serving pool is in use (pure Python or compiled: a compiled method is a built-in
method, which Mesa's own path would drop at once); the last tests show that a dropped callback
fails the check.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from test_golden import DAY_S, SEED, scenarios

from speedtrap.config import Scenario
from speedtrap.models import WorkflowModel
from speedtrap.models.base import EventAccounts, EventModel

HEADLINE = Path(__file__).resolve().parents[2] / "experiments" / "scenarios" / "headline.toml"


def assert_no_event_lost(accounts: EventAccounts) -> None:
    """Fail loudly, with the accounts, if any scheduled event was neither run, cancelled nor pending."""
    assert accounts.scheduled == accounts.executed + accounts.cancelled + accounts.pending, (
        f"{accounts.lost} scheduled events were dropped (their callback's object was gone): {accounts}"
    )


def run_accounts(scenario: Scenario, *, tables: bool = False) -> tuple[WorkflowModel, EventAccounts]:
    model = WorkflowModel(scenario, rng=SEED, tables=tables)
    model.run_until(scenario.horizon_s)
    return model, model.event_accounts()


def test_the_headline_scenario_loses_no_event() -> None:
    scenario = Scenario.from_toml(HEADLINE).with_overrides({"horizon_s": DAY_S})
    model, accounts = run_accounts(scenario, tables=True)
    assert_no_event_lost(accounts)
    assert (
        accounts.executed == model.events_executed > 5_000
    )  # a full day of the headline: thousands of events
    assert accounts.cancelled > 0 and accounts.pending > 0  # re-timings cancel; the run stops mid-flow
    pools = [backend.pool for backend in model.backends.values()]
    # the pools' own count: every wake-up they scheduled was run, cancelled or is pending
    assert sum(p.events_scheduled for p in pools) <= accounts.scheduled
    assert sum(p.events_cancelled for p in pools) <= accounts.cancelled


@pytest.mark.parametrize("name", sorted(scenarios()))
def test_the_fixed_scenarios_lose_no_event(name: str) -> None:
    scenario = scenarios()[name]
    _, accounts = run_accounts(scenario.with_overrides({"horizon_s": min(scenario.horizon_s, DAY_S)}))
    assert_no_event_lost(accounts)
    assert accounts.executed > 0


def test_a_run_in_slices_with_collections_between_them_loses_no_event() -> None:
    """Full collections between slices of a run (when an object only a cycle held would go)."""
    scenario = scenarios()["two-backends-by-difficulty"].with_overrides({"horizon_s": DAY_S / 4})
    model = WorkflowModel(scenario, rng=SEED, tables=False)
    for k in range(1, 9):
        model.run_until(scenario.horizon_s * k / 8)
        gc.collect()
    assert_no_event_lost(model.event_accounts())


class Orphan:
    """An object that schedules one of its methods and is then held by nothing but a cycle."""

    def __init__(self, model: EventModel) -> None:
        self.me = self
        self.fired = False
        model.schedule_event(self.fire, after=10.0)

    def fire(self) -> None:  # pragma: no cover - dropped: that is the point
        self.fired = True


class Kept:
    def __init__(self) -> None:
        self.fired = 0

    def fire(self) -> None:
        self.fired += 1


def test_a_dropped_callback_fails_the_check() -> None:
    model = EventModel(rng=0)
    kept = Kept()
    model.schedule_event(kept.fire, after=1.0)
    model.schedule_event(kept.fire, after=2.0).cancel()
    model.schedule_event(kept.fire, after=30.0)  # still pending at the end
    Orphan(model)  # only a cycle holds it: a collection before it is due drops its event
    model.run_until(5.0)
    gc.collect()
    model.run_until(20.0)
    accounts = model.event_accounts()
    assert (accounts.scheduled, accounts.executed, accounts.cancelled, accounts.pending) == (4, 1, 1, 1)
    assert accounts.lost == 1
    with pytest.raises(AssertionError, match="1 scheduled events were dropped"):
        assert_no_event_lost(accounts)


def test_a_scenario_run_with_a_dropped_callback_fails_the_check() -> None:
    """The check on a real run sees one event dropped among thousands."""
    scenario = scenarios()["headline-gpu-batched"].with_overrides({"horizon_s": 3600.0})
    model = WorkflowModel(scenario, rng=SEED, tables=False)
    Orphan(model)
    model.run_until(5.0)
    gc.collect()
    model.run_until(scenario.horizon_s)
    with pytest.raises(AssertionError, match="1 scheduled events were dropped"):
        assert_no_event_lost(model.event_accounts())


def test_built_in_methods_are_scheduled_and_run_not_dropped() -> None:
    """A compiled class's method is a built-in method; Mesa's own path would hold a weak reference to
    that short-lived method object, and drop the event at once. EventModel holds its object (strongly,
    where the type takes no weak reference) and runs it."""
    model = EventModel(rng=0)
    calls = [1, 2]
    model.schedule_event(calls.clear, at=1.0)  # a built-in method of a list (no weak reference)
    model.schedule_event(calls.reverse, at=2.0).cancel()
    model.run_until(3.0)
    assert calls == []
    accounts = model.event_accounts()
    assert accounts == EventAccounts(scheduled=2, executed=1, cancelled=1, pending=0)
    assert_no_event_lost(accounts)
