"""The Developer agent: attention, parallel sessions, pending work, escaped defects."""

from __future__ import annotations

import math

import pytest

from fixed_scenarios import ALWAYS_WRONG_HORIZON_MIN, run, seconds, tiny
from speedtrap.agents import Activity, Developer
from speedtrap.models import WorkflowModel


def test_developer_is_always_in_exactly_one_activity() -> None:
    scenario = tiny({"developer.attention.flow_threshold_s": 2.5, "horizon_s": 100.0})
    model = WorkflowModel(scenario, rng=1)
    developer = model.developers[0]
    assert isinstance(developer, Developer)
    seen = []
    for t in (30.0, 61.0, 70.0):
        model.run_until(t)
        seen.append(developer.activity)
    assert seen == [Activity.PROMPTING, Activity.WAITING, Activity.OTHER_WORK]


def test_second_session_starts_at_the_flow_break_and_the_first_waits_its_turn() -> None:
    result = run(
        tiny(
            {
                "developer.attention.flow_threshold_s": 2.5,
                "developer.attention.max_parallel_sessions": 2,
                "horizon_s": 400.0,
            }
        )
    )
    trace = result.trace
    # task 0: prompt [0,60], waits 2.5 s, then the developer writes task 1's prompt [62.5,122.5]
    prompting_1 = trace[(trace["task"] == 1) & (trace["category"] == "prompting")].iloc[0]
    assert (prompting_1["start_s"], prompting_1["end_s"]) == pytest.approx((62.5, 122.5))
    # task 0's result was ready at 76 but waited for the prompt; then 60 s away cost switching
    switch = trace[(trace["task"] == 0) & (trace["category"] == "switching")].iloc[0]
    assert switch["start_s"] == pytest.approx(122.5)
    assert switch["end_s"] - switch["start_s"] == pytest.approx(100.0 * (1 - math.exp(-60.0 / 10.0)))
    # both sessions ran at once: task 1's first request arrived before task 0 was reviewed
    requests = result.requests
    assert requests.loc[requests["task"] == 1, "arrival_s"].min() == pytest.approx(122.5)
    review_0 = trace[(trace["task"] == 0) & (trace["category"] == "reviewing")].iloc[0]
    assert review_0["start_s"] > 122.5


def test_single_session_developer_never_opens_a_second() -> None:
    result = run(tiny({"developer.attention.flow_threshold_s": 2.5, "horizon_s": 2000.0}))
    tasks = result.tasks
    # sessions never overlap: each task starts after the previous one ended
    assert (tasks["start_s"].to_numpy()[1:] >= tasks["end_s"].to_numpy()[:-1] - 1e-9).all()


def test_escaped_defect_surfaces_and_is_reworked_as_fixing() -> None:
    scenario = tiny(
        {
            "backends.b.quality.horizon_min": ALWAYS_WRONG_HORIZON_MIN,
            "developer.review.detect_prob": 0.0,
            "developer.fixing.escape_delay_s": 200.0,
            "horizon_s": 5000.0,
        }
    )
    result = run(scenario, seed=4)
    tasks = result.tasks
    done = tasks[tasks["outcome"] != "open"]
    assert set(done["outcome"]) <= {"escaped", "reworked"}
    reworked = tasks[tasks["rework_done_s"].notna()]
    assert (reworked["outcome"] == "reworked").all()  # done right once its rework is done
    assert (reworked["rework_spent_s"] == reworked["rework_s"]).all()
    assert result.summary()["tasks_completed"] == len(reworked)  # an escaped defect is not done
    assert len(reworked) >= 3
    assert (reworked["surfaced_s"] > reworked["end_s"]).all()
    trace = result.trace
    fixing = trace[trace["category"] == "fixing"]
    # every rework is 3 x the 100 s hand fix and is charged to the task whose defect escaped
    assert set(fixing["task"]) <= set(reworked["task"])
    assert seconds(result, "fixing") == pytest.approx(300.0 * len(reworked))
    assert seconds(result, "reviewing") > 0.0


def test_surfaced_defect_interrupts_other_work_but_not_a_human_step() -> None:
    scenario = tiny(
        {
            "backends.b.quality.horizon_min": ALWAYS_WRONG_HORIZON_MIN,
            "developer.review.detect_prob": 0.0,
            "developer.attention.flow_threshold_s": 2.5,
            "developer.fixing.escape_delay_s": 300.0,
            "horizon_s": 20_000.0,
        }
    )
    result = run(scenario, seed=2)
    surfaced = result.tasks.set_index("task")["surfaced_s"]
    trace = result.trace.sort_values("start_s", kind="stable").reset_index(drop=True)
    reworks = trace[trace["category"] == "fixing"]
    interrupted = delayed = 0
    for i in reworks.index:
        row, before = trace.loc[i], trace.loc[i - 1]
        shown = surfaced[row["task"]]
        assert row["start_s"] >= shown - 1e-9
        if row["start_s"] == pytest.approx(shown):
            interrupted += 1
            assert before["category"] in {
                "other_work",
                "idle",
                "waiting_queue",
                "waiting_ttft",
                "waiting_generation",
                "waiting_tool",
            }
        else:
            delayed += 1  # it waited for a human step, which ran to its full length
            assert before["category"] in {"prompting", "reviewing", "switching", "fixing"}
            full = {"prompting": 60.0, "reviewing": 30.0, "fixing": 300.0}.get(before["category"])
            if full is not None:
                step = trace[(trace["task"] == before["task"]) & (trace["category"] == before["category"])]
                assert step["end_s"].sub(step["start_s"]).sum() == pytest.approx(full)
    assert interrupted >= 3 and delayed >= 1


def _always_leaving(**overrides: object):  # type: ignore[no-untyped-def]
    """The headline scenario for 3 developers × 8 h who always leave a running agent for other work
    (patience 1 s, no episode spread, fixed resumptions), with ``overrides``."""
    from pathlib import Path

    from speedtrap.config import Scenario

    return Scenario.from_toml(
        Path(__file__).resolve().parents[2] / "experiments" / "scenarios" / "headline.toml"
    ).with_overrides(
        {
            "developers": 3,
            "horizon_s": 28_800.0,
            "developer.attention.patience_s": {"median": 1.0, "sigma": 0.0},
            "developer.attention.patience_episode_sigma": 0.0,
            "developer.attention.other_work_prob": 1.0,
            "developer.attention.resumption_random": False,
            **overrides,
        }
    )


def _response_gaps(result):  # type: ignore[no-untyped-def]
    """Seconds from each agent need to the developer's next hand-off."""
    st = result.stretches
    assert st is not None
    return (st["back_s"] - st["need_s"]).dropna()


def test_a_session_needing_an_away_developer_waits_for_the_end_of_their_away_episode() -> None:
    """Away episodes: a developer who leaves for other work looks at their sessions only when the
    episode ends, so the time from an agent's need to the developer's next hand-off includes what is
    left of the episode. With every episode exactly 10 min (log-sd 0) and a patience of 1 s (they
    always leave), the gaps spread over the episode; without away episodes a need interrupts other
    work at once and most gaps are far shorter."""
    from speedtrap.models import simulate

    gaps = {}
    for name, away in (("away", {"median": 600.0, "sigma": 0.0}), ("none", None)):
        gaps[name] = _response_gaps(simulate(_always_leaving(**{"developer.attention.away_s": away}), 3))
    # A need interrupts other work at once (reading, replying, resuming); only a need that comes
    # during other human steps (a review, the rework of an escaped defect) waits longer.
    assert gaps["none"].quantile(0.75) < 600.0
    assert gaps["away"].median() > 2 * gaps["none"].median()
    assert (gaps["away"] >= 600.0).any()  # needs that came just after the developer left


def test_a_noticed_session_ends_the_away_episode_at_once() -> None:
    """``notice_prob``: a session needing an away developer ends their episode with that probability.
    At 1, with noticed returns paying the whole resumption (``cued_resumption`` false), it is the
    model without away episodes, run for run: with every other use of the attention
    stream fixed (patience, episodes, other work and resumptions), the episodes' draws change nothing
    else, once no defect escapes (a surfaced defect is not the agent's notice: it waits for the
    episode's end). Between 0 and 1, the response gaps lie between the two."""
    from speedtrap.models import simulate

    away = {"median": 600.0, "sigma": 0.0}

    def run_with(**attention: object):  # type: ignore[no-untyped-def]
        overrides = {f"developer.attention.{k}": v for k, v in attention.items()}
        result = simulate(_always_leaving(**{"developer.review.detect_prob": 1.0, **overrides}), 3)
        return result, _response_gaps(result)

    none, gaps_none = run_with(away_s=None)
    always, gaps_always = run_with(away_s=away, notice_prob=1.0, cued_resumption=False)
    assert always.summary() == none.summary()
    assert gaps_always.tolist() == gaps_none.tolist()
    _, gaps_never = run_with(away_s=away, notice_prob=0.0, cued_resumption=False)
    _, gaps_half = run_with(away_s=away, notice_prob=0.5, cued_resumption=False)
    assert gaps_none.median() < gaps_half.median() < gaps_never.median()
    assert (gaps_half >= 600.0).mean() < (gaps_never >= 600.0).mean()


def test_a_noticed_return_pays_the_short_lag_alone() -> None:
    """``cued_resumption``: without notices it changes nothing, run for run; with every need noticed
    (other work, so the time away counts), a noticed return pays only the short lag: less switching,
    faster responses, and no switch back longer than the short lag after a whole day away
    (resumptions not drawn). The long part is made to matter after minutes away (τ = 10 min, at
    most 15 min), and getting back into other work costs only its short lag."""
    from speedtrap.models import simulate

    away = {"median": 600.0, "sigma": 0.0}

    def run_with(**attention: object):  # type: ignore[no-untyped-def]
        overrides = {f"developer.attention.{k}": v for k, v in attention.items()}
        scenario = _always_leaving(
            **{
                "developer.review.detect_prob": 1.0,
                "developer.attention.resumption_tau_s": 600.0,
                "developer.attention.resumption_max_s": 900.0,
                "developer.attention.other_work_resumption_max_s": 0.0,
                **overrides,
            }
        )
        return scenario, simulate(scenario, 3, trace=True)

    _, never_cued = run_with(away_s=away, notice_prob=0.0, cued_resumption=True)
    _, never_uncued = run_with(away_s=away, notice_prob=0.0, cued_resumption=False)
    assert never_cued.summary() == never_uncued.summary()
    _, uncued = run_with(away_s=away, notice_prob=1.0, cued_resumption=False)
    scenario, cued = run_with(away_s=away, notice_prob=1.0, cued_resumption=True)
    assert cued.summary()["share_switching"] < 0.5 * uncued.summary()["share_switching"]
    assert _response_gaps(cued).median() < _response_gaps(uncued).median()
    # every switch back into a session follows a notice here: its length is the short lag alone
    trace = cued.trace
    spec = scenario.developer.attention
    back = trace[(trace["category"] == "switching") & trace["task"].notna()]
    assert len(back) > 0
    longest = spec.cued_resumption_mean_s(8 * 3600.0)
    assert (back["end_s"] - back["start_s"]).max() <= longest + 1e-9
    assert longest < 0.1 * spec.resumption_mean_s(8 * 3600.0)
