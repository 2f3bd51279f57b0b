"""A summary-only run folds tasks and requests as they finish and keeps neither, with the same
summary as the run that keeps every table."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from speedtrap import exact
from speedtrap.config import Scenario
from speedtrap.models import WorkflowModel
from speedtrap.models.tallies import TaskTally, task_counts

HEADLINE = Path(__file__).resolve().parents[2] / "experiments" / "scenarios" / "headline.toml"


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fold every 16 requests and sweep the task list from 8 tasks, so that a short run folds often."""
    monkeypatch.setattr(exact, "CHUNK", 16)
    monkeypatch.setattr("speedtrap.serving.request.CHUNK", 16)
    monkeypatch.setattr(TaskTally, "SWEEP_MIN", 8)


def test_a_summary_only_run_drops_finished_tasks_and_buffers_few_requests(small_chunks: None) -> None:
    scenario = Scenario.from_toml(HEADLINE).with_overrides({"developers": 4, "horizon_s": 4 * 28800.0})
    lean = WorkflowModel(scenario, rng=5, tables=False)
    lean.run_until(scenario.horizon_s)
    full = WorkflowModel(scenario, rng=5)
    full.run_until(scenario.horizon_s)

    tally = lean.task_tally
    assert tally is not None and not lean.tasks
    started = len(full.tasks)
    assert started > 40
    assert len(tally.live) < started / 2  # finished tasks were folded and let go
    before = asdict(tally.counts())
    tally._sweep()
    assert all(t.outcome in ("open", "escaped") for t in tally.live)
    after = asdict(tally.counts())
    assert np.array_equal(np.sort(before.pop("lead_times_s")), np.sort(after.pop("lead_times_s")))
    assert before == after

    request_tally = lean.backends["gpu-batched"].tally
    assert request_tally is not None and len(request_tally) == full.backends["gpu-batched"].pool.completed
    assert len(request_tally._buffer) < 4 * 16  # four values per request

    counts, expected = tally.counts(), task_counts(full.result().tasks)
    got, want = asdict(counts), asdict(expected)
    assert np.array_equal(np.sort(got.pop("lead_times_s")), np.sort(want.pop("lead_times_s")))
    assert got == want
    assert lean.summary() == full.summary()
