"""The app's view of a run while it runs (pure: no Solara, no browser): the hint only before any
run, then the simulated time reached of the horizon, and the latest snapshot's views."""

from __future__ import annotations

from speedtrap.app.economics import replicate
from speedtrap.app.live import HINT, LiveComparison, view_of
from speedtrap.app.settings import Settings, build_arms

SMALL = Settings(developers=2, horizon_h="0.5", seed="3")
"""Two developers for half an hour of the headline population."""


def comparison(chunks: int = 4) -> LiveComparison:
    arms = build_arms(SMALL)
    return LiveComparison(arms.scenarios, arms.seed, chunks=chunks)


def test_the_hint_shows_only_when_nothing_has_run() -> None:
    idle = view_of(None, None, running=False)
    assert (idle.state, idle.status, idle.snapshot) == ("idle", HINT, None)
    live = comparison()
    starting = view_of(live, None, running=True)
    assert starting.state == "starting" and starting.snapshot is None
    assert HINT not in starting.status
    assert starting.status.startswith("running: 0.00 of 0.5 h simulated (0%)")
    assert "first 0.12 h" in starting.status  # 0.5 h in 4 chunks: 0.125 h, shown to 2 decimals


def test_the_status_follows_the_run_and_says_how_far_the_views_lag() -> None:
    live = comparison()
    first = live.step()
    view = view_of(live, first, running=True)
    assert view.state == "running" and view.snapshot is first
    assert view.status == "running: 0.12 of 0.5 h simulated (25%)"
    live.step()  # the model moves on; the views are redrawn later
    lagging = view_of(live, first, running=True)
    assert lagging.status == "running: 0.25 of 0.5 h simulated (50%); the views show the first 0.12 h"
    assert lagging.snapshot is first
    assert view_of(live, first, running=False).state == "paused"
    while not live.done:
        last = live.step()
    done = view_of(live, last, running=False)
    assert (done.state, done.status) == ("done", "done: 0.50 of 0.5 h simulated (100%)")


def test_replication_reports_each_run_done() -> None:
    arms = build_arms(SMALL)
    seen: list[tuple[int, int]] = []
    runs = replicate(arms.scenarios, 3, 2, on_run=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert len(runs) == 4


def test_the_progress_bar_shows_the_status_lines_share_and_is_full_when_done() -> None:
    """The value the page passes to its progress bar (0–100): the share the status line states, so
    that the bar is full at 100% (it lagged one chunk behind, then hid: 75% with 4 chunks)."""
    assert view_of(None, None, running=False).bar is False  # hidden before any run
    live = comparison()
    assert view_of(live, None, running=True).bar is True  # indeterminate until the first chunk
    first = live.step()
    assert view_of(live, first, running=True).bar == 25.0
    assert view_of(live, first, running=False).bar == 25.0  # paused after a step: still shown
    while not live.done:
        last = live.step()
    for running in (True, False):  # the last chunk drawn, and the run's task ended
        done = view_of(live, last, running=running)
        assert done.status.endswith("(100%)") and done.bar == 100.0
    stale = view_of(live, first, running=False)  # the views not yet redrawn: the bar still full
    assert stale.bar == 100.0
