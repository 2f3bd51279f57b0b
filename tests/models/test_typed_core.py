"""The typed core (speedtrap.models.typed_core): the Mesa model's results, bit for bit, on every
scenario it covers; the Mesa model for everything else.

The core is compared with the Mesa model in the same process (the models' ``core_module`` replaced
by one that finds no core): every table of the run (ledger, tasks, requests, backend statistics,
agent stretches) and both summaries must be equal exactly. The variants switch on, one at a time,
each rule of the developer, the task mix and the backend that the core follows. Where the core is
not built (no C compiler or Cython at install, or ``SPEEDTRAP_PURE=1``) these comparisons skip; the
coverage rules and the dispatch are tested everywhere.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pandas.testing import assert_frame_equal

import speedtrap.models.workflow as workflow
from speedtrap.config import Scenario
from speedtrap.models import simulate, simulate_summary
from speedtrap.models import typed_core as typed_core_module
from speedtrap.models.typed_core import core_module, not_covered, run_core

ROOT = Path(__file__).resolve().parents[2]
HEADLINE = ROOT / "experiments" / "scenarios" / "headline.toml"
SHARED_FLEET = ROOT / "experiments" / "scenarios" / "shared_fleet.toml"
TWO_BACKENDS = ROOT / "experiments" / "scenarios" / "two_backends.toml"
DAY_S = 28800.0
TABLES = ("ledger", "tasks", "requests", "backend_stats", "stretches")

CORE = core_module()
needs_core = pytest.mark.skipif(CORE is None, reason="the typed core is not built or not in use here")


def headline(**overrides: Any) -> Scenario:
    base = Scenario.from_toml(HEADLINE).with_overrides({"developers": 4, "horizon_s": 1.5 * DAY_S})
    return base.with_overrides(overrides) if overrides else base


VARIANTS: dict[str, Scenario] = {
    "headline": headline(),
    "parallel-sessions": headline(**{"developer.attention.parallel_sessions_probs": [0.3, 0.4, 0.3]}),
    "rejected-check-ins": headline(**{"developer.reject_prob": 0.3}),
    "fixed-stretches": headline(**{"developer.checkin_random": False, "developer.checkin_every_turns": 3}),
    "one-transcript": headline(**{"developer.stretches_per_transcript": None}),
    "breaks-and-fixed-resumption": headline(
        **{"developer.attention.other_work_prob": 0.4, "developer.attention.resumption_random": False}
    ),
    "no-away-episodes": headline(**{"developer.attention.away_s": None}),
    "redo-and-repairs": headline(
        **{
            "developer.fixing.redo_prob": 0.5,
            "developer.fixing.hand_fix_prob": 0.2,
            "developer.review.detect_prob": 0.9,
        }
    ),
    "queueing": headline(**{"developers": 40, "horizon_s": 0.25 * DAY_S, "backends.gpu-batched.replicas": 1}),
    "fast-tier": headline(**{"policy.tier": "fast", "developers": 6}),
    "gpu-fast": headline().with_backend("gpu-fast"),
    "wafer-distilled": headline().with_backend("wafer-distilled"),
    "no-prompt-cache-sharing": headline(**{"task_mix.shared_prefix_tokens": 0, "task_mix.cache_ttl_s": 60.0}),
    "hybrid-hand-work": headline(**{"developer.delegated_fraction": 0.6}),
}


def mesa_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workflow, "core_module", lambda: None)


@needs_core
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_the_core_gives_the_mesa_models_results_bit_for_bit(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = VARIANTS[name]
    assert not_covered(scenario) is None
    core_result = simulate(scenario, 3)
    core_summary = simulate_summary(scenario, 3)
    mesa_only(monkeypatch)
    mesa_result = simulate(scenario, 3)
    mesa_summary = simulate_summary(scenario, 3)
    for table in TABLES:
        assert_frame_equal(getattr(core_result, table), getattr(mesa_result, table), check_exact=True)
    assert core_result.horizon_s == mesa_result.horizon_s and core_result.trace is None
    mesa = {k: float(v).hex() for k, v in mesa_summary.items()}
    assert {k: float(v).hex() for k, v in core_summary.items()} == mesa
    assert {k: float(v).hex() for k, v in core_result.summary().items()} == mesa
    assert core_summary["requests"] > 0
    if name != "headline":  # each variant changes the run: else it would test nothing new
        assert mesa != {k: float(v).hex() for k, v in _headline_summary().items()}


@functools.cache
def _headline_summary() -> dict[str, float]:
    return simulate_summary(VARIANTS["headline"], 3)


@needs_core
def test_every_event_of_the_core_is_accounted_for() -> None:
    """Scheduled = executed + cancelled + pending, as the Mesa model's event accounts; and the core runs
    the events the Mesa model runs: about 2.5 per agent turn."""
    assert CORE is not None
    run = run_core(CORE, VARIANTS["parallel-sessions"], 1)
    scheduled, executed, cancelled, pending = run.event_counts()
    assert pending >= 0 and cancelled >= 0
    assert scheduled == executed + cancelled + pending
    assert 2.0 < executed / run.agent_turns() < 3.0


@needs_core
def test_progress_slices_do_not_change_the_core_run() -> None:
    scenario = VARIANTS["headline"]
    seen: list[float] = []
    sliced = simulate(scenario, 5, progress=seen.append)
    assert len(seen) == workflow.PROGRESS_SLICES and seen[-1] == 1.0
    whole = simulate(scenario, 5)
    for table in TABLES:
        assert_frame_equal(getattr(sliced, table), getattr(whole, table), check_exact=True)


def test_what_the_core_does_not_cover_is_named() -> None:
    assert not_covered(VARIANTS["headline"]) is None
    assert not_covered(headline().with_backend("manual")) is None  # the manual policy (issue 41)
    assert not_covered(headline(**{"developer.delegated_fraction": 0.5})) is None  # hand work (issue 41)
    threshold = headline(**{"developer.attention.rule": "threshold"})
    assert (not_covered(threshold) or "").startswith("developer.attention.rule = 'threshold'")
    two = Scenario.from_toml(TWO_BACKENDS)
    assert not_covered(two) is None  # `always` routes every session to one; the other stays idle
    routes = {"kind": "by_difficulty", "routes": {"easy": "wafer-distilled"}, "default": "gpu-batched"}
    routed = two.with_overrides({"policy": routes})
    assert (not_covered(routed) or "").startswith("policy.kind = 'by_difficulty'")
    fleet = Scenario.from_toml(SHARED_FLEET)
    assert not_covered(fleet) is None  # fast_share: two tiers of one backend
    assert not_covered(fleet.with_overrides({"policy": {"kind": "best_of_n"}})) is not None


def test_runs_the_core_does_not_cover_take_the_mesa_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The dispatch: traces, uncovered scenarios and a missing core run on the Mesa model (run_core is
    never called); a covered run calls it, with tables for simulate and without for simulate_summary."""
    calls: list[bool] = []

    def fake_run_core(module: Any, scenario: Scenario, seed: int | None, **kwargs: Any) -> Any:
        calls.append(kwargs.get("tables", True))
        raise RuntimeError("the core was called")

    monkeypatch.setattr(workflow, "core_module", lambda: object())
    monkeypatch.setattr(workflow, "run_core", fake_run_core)
    short = headline(**{"developers": 2, "horizon_s": 600.0})
    assert simulate(short, 1, trace=True).trace is not None
    assert (
        simulate_summary(short.with_overrides({"developer.attention.rule": "threshold"}), 1)["requests"] > 0
    )
    assert calls == []
    with pytest.raises(RuntimeError, match="the core was called"):
        simulate(short, 1)
    with pytest.raises(RuntimeError, match="the core was called"):
        simulate_summary(short, 1)
    assert calls == [True, False]
    monkeypatch.setattr(workflow, "core_module", lambda: None)
    assert simulate_summary(short, 1)["requests"] > 0
    assert calls == [True, False]


@needs_core
def test_a_summary_only_core_run_keeps_no_finished_requests() -> None:
    """Without tables the core reuses a request's slot once its turn ends: the slots are those in
    flight at once, not the run's requests; with tables every request is kept."""
    assert CORE is not None
    scenario = VARIANTS["parallel-sessions"]
    summary_only = run_core(CORE, scenario, 2, tables=False)
    requests = summary_only.agent_turns()
    assert requests > 1000
    sessions_at_most = scenario.developers * len(scenario.developer.attention.parallel_sessions_probs or [1])
    assert summary_only.request_slots() <= sessions_at_most
    assert run_core(CORE, scenario, 2).request_slots() == requests


def test_a_root_seed_that_is_not_an_integer_is_refused_on_either_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    short = headline(**{"developers": 2, "horizon_s": 600.0})
    for _ in range(2):  # the core where it is in use, then the Mesa model
        with pytest.raises(TypeError, match="integer root seed"):
            simulate(short, np.random.default_rng(1))  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="integer root seed"):
            simulate_summary(short, True)
        mesa_only(monkeypatch)


def test_the_pure_build_has_no_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPEEDTRAP_PURE", "1")
    assert typed_core_module.core_module() is None
