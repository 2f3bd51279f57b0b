"""Task structure that matches agent traces: heavy-tailed agent stretches, several transcripts per
session, check-in outputs the developer rejects, and hand fixes that are redos. Each rule is off by
default and, turned on, moves the statistic it is fitted to (tolerances fixed before the runs)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from fixed_scenarios import bare_task
from speedtrap.agents.task import Task, TurnDraws
from speedtrap.config import Scenario
from speedtrap.models import simulate
from speedtrap.models.results import RunResult

HEADLINE = Path(__file__).resolve().parents[2] / "experiments" / "scenarios" / "headline.toml"
DAY = {"developers": 4, "horizon_s": 2 * 28_800.0}
OFF = {
    "developer.stretch_sigma": 0.0,
    "developer.stretches_per_transcript": None,
    "developer.reject_prob": 0.0,
}
"""Each rule off: the headline scenario as it was before them."""


def run(overrides: dict[str, object], seed: int = 4) -> RunResult:
    return simulate(Scenario.from_toml(HEADLINE).with_overrides({**DAY, **OFF, **overrides}), seed)


def _task() -> Task:
    return bare_task(0, seed_entropy=12345, base_turns=10)


def test_lognormal_stretch_lengths_keep_their_mean_and_widen_the_tail() -> None:
    spec = Scenario.from_toml(HEADLINE)
    draws = TurnDraws(_task(), 0, spec.task_mix, spec.developer)
    geometric = np.array([draws.stretch_turns(j, 6) for j in range(8000)])
    draws = TurnDraws(_task(), 1, spec.task_mix, spec.developer)
    heavy = np.array([draws.stretch_turns(j, 6, 1.5) for j in range(8000)])
    assert geometric.mean() == pytest.approx(6.0, rel=0.05)
    assert heavy.min() >= 1
    # rounding to at least one turn lifts the mean a little above 6; the tail is far longer
    assert heavy.mean() == pytest.approx(6.0, rel=0.12)
    ratio = lambda x: np.quantile(x, 0.9) / np.median(x)  # noqa: E731
    # closed forms: geometric with mean 6 has median 4 and p90 13 (3.25); a log-normal with log-sd 1.5
    # has p90/median = exp(1.2816 × 1.5) = 6.8 before rounding (2.1 times as wide)
    assert ratio(geometric) == pytest.approx(13 / 4, rel=0.1)
    assert ratio(heavy) == pytest.approx(math.exp(1.2816 * 1.5), rel=0.15)


def test_stretch_sigma_lengthens_the_p90_of_agent_stretches_in_a_run() -> None:
    def p90_over_median(result: RunResult) -> float:
        st = result.stretches
        assert st is not None
        agent = (st["need_s"] - st["handoff_s"]).dropna()
        return float(agent.quantile(0.9) / agent.median())

    assert p90_over_median(run({"developer.stretch_sigma": 1.8})) > 1.5 * p90_over_median(run({}))


def test_transcripts_split_sessions_into_the_mean_number_of_human_turns() -> None:
    result = run({"developer.stretches_per_transcript": 3.0})
    st = result.stretches
    assert st is not None and st["transcript"].max() > 0
    per_transcript = st.groupby(["developer", "task", "attempt", "transcript"]).size()
    # transcripts cut short by the session's end are shorter than the geometric draw: the mean is
    # at most 3 and, with sessions of a dozen stretches and more, well above 2
    assert 2.0 < per_transcript.mean() <= 3.0 + 3 * per_transcript.std() / math.sqrt(len(per_transcript))
    one = run({})
    assert one.stretches is not None and (one.stretches["transcript"] == 0).all()
    # a fresh transcript starts from the opening context with a cold cache: fewer cached tokens
    share = lambda r: r.tasks["cached_tokens"].sum() / r.tasks["input_tokens"].sum()  # noqa: E731
    assert share(result) < share(one)


def test_rejected_checkins_are_counted_and_redone() -> None:
    base = run({})
    rejecting = run({"developer.reject_prob": 0.5})
    t = rejecting.tasks
    checkins = t["outputs"].sum() - t["outcome"].isin(["ok", "fixed", "escaped", "reworked"]).sum()
    assert base.tasks["outputs_rejected"].sum() <= base.tasks["wrong_attempts"].sum()
    rejected_share = t["outputs_rejected"].sum() / t["outputs"].sum()
    assert 0.3 < rejected_share < 0.6 and checkins > 200
    # the rejected stretches' turns are redone: more turns per completed task
    per_task = lambda r: r.tasks["turns"].sum() / max(1, len(r.tasks))  # noqa: E731
    assert per_task(rejecting) > 1.2 * per_task(base)


def test_a_redo_fixes_by_doing_the_delegated_effort_by_hand() -> None:
    common = {"developer.fixing.hand_fix_prob": 1.0, "developer.fixing.max_repair_sessions": 0}
    fix = run(common).summary()["fixing_share"]
    redo = run({**common, "developer.fixing.redo_prob": 1.0}).summary()["fixing_share"]
    assert redo > 1.5 * fix


def test_a_backends_autonomy_scales_the_agent_stretches_between_checkins() -> None:
    """``Quality.autonomy`` a: a session's mean stretch is a × checkin_every_turns turns (at least one),
    fixed stretches every round(a × c) turns; the developer's expected wait follows it."""
    fixed = {"developer.checkin_random": False, "developer.checkin_every_turns": 6}

    def turns_per_stretch(result: RunResult) -> float:
        st = result.stretches
        assert st is not None
        return float(result.requests.shape[0] / len(st))

    base = run(fixed)
    half = run({**fixed, "backends.gpu-batched.quality.autonomy": 0.5})
    # every 6 turns against every 3 (the stretch that ends with the review and tool-error turns aside)
    assert turns_per_stretch(half) == pytest.approx(turns_per_stretch(base) / 2, rel=0.15)
    longer = run({"backends.gpu-batched.quality.autonomy": 2.0})
    shorter = run({"backends.gpu-batched.quality.autonomy": 0.25})
    assert turns_per_stretch(longer) > 1.5 * turns_per_stretch(run({})) > 2.25 * turns_per_stretch(shorter)
    # a wait expected over fewer turns is sat through more often: more of the day waiting
    assert shorter.summary()["waiting_share"] > run({}).summary()["waiting_share"]


def test_autonomy_outside_its_range_is_refused() -> None:
    scenario = Scenario.from_toml(HEADLINE).with_overrides(DAY)
    assert scenario.backends["gpu-batched"].quality.autonomy == 1.0  # today's agents: the default
    for bad in (0.0, -1.0, 11.0):
        with pytest.raises(ValueError, match="autonomy"):
            scenario.with_overrides({"backends.gpu-batched.quality.autonomy": bad})
