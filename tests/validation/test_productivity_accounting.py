"""One productivity accounting (issue 40, point 5): the effort ratio (developer effort per task, AI /
by hand), the output ratio (task-equivalents per developer-day, other work counted as the economics
count it) and the net value per developer-day of AI against by hand tell one story — they agree in
sign — on the headline, METR's trial and today's agentic developers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from speedtrap.analysis.value import OTHER_WORK, net_value_per_dev_day
from speedtrap.models.workflow import simulate
from speedtrap.validation.workflow import default_scenarios, metr_statistics, output_per_dev_day

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["headline", "metr", "agentic-2026"])
def test_effort_output_and_value_agree_in_sign(name: str) -> None:
    scenario = default_scenarios(ROOT, quick=True, names=(name,))[name]
    effort, output, net = [], [], []
    for seed in (11, 12, 13):
        with_ai, by_hand = simulate(scenario, seed), simulate(scenario.with_backend("manual"), seed)
        stats = metr_statistics(with_ai, by_hand)
        ai, manual = with_ai.summary(), by_hand.summary()
        effort.append(stats["ai_vs_manual_time_ratio"])
        output.append(stats["ai_vs_manual_output_ratio"])
        assert stats["ai_vs_manual_output_ratio"] == pytest.approx(
            output_per_dev_day(ai) / output_per_dev_day(manual)
        )
        net.append(
            float(
                net_value_per_dev_day(
                    np.array([manual["tasks_per_dev_day"] + manual.get(OTHER_WORK, 0.0)]),
                    np.array([manual["usd_per_dev_day"]]),
                    np.array([ai["tasks_per_dev_day"] + ai.get(OTHER_WORK, 0.0)]),
                    np.array([ai["usd_per_dev_day"]]),
                    value=scenario.value,
                    workday_s=scenario.workday_s,
                )[0]
            )
        )
    less_effort = np.mean(effort) < 1.0
    more_output = np.mean(output) > 1.0
    pays = np.mean(net) > 0.0
    assert less_effort == more_output == pays, (name, np.mean(effort), np.mean(output), np.mean(net))


@pytest.mark.parametrize("trace", [False, True], ids=["core", "mesa"])
def test_every_second_is_charged_to_a_task_or_is_other_work(trace: bool) -> None:
    """One accounting at the source: a developer-second serves a task (the task's ``human_s``:
    idle time and switching into other work while sessions are open go in equal parts to their
    tasks) or is other work (valued as task-equivalents), never neither — so the effort ratio and
    the output ratio count the same seconds. Both engines (``trace=True`` runs the Mesa model)."""
    scenario = default_scenarios(ROOT, quick=True, names=("agentic-2026",))["agentic-2026"]
    scenario = scenario.with_overrides({"developer.attention.other_work_prob": 0.5})  # some idle
    for seed in (3, 4):
        for arm in (scenario, scenario.with_backend("manual")):
            run = simulate(arm, seed, trace=trace)
            seconds = run.ledger_wide().sum()
            charged = float(run.tasks["human_s"].sum()) + float(seconds["other_work"])
            if arm is scenario:
                assert seconds["idle"] > 0 and seconds["switching"] > 0  # the seconds this test is about
            assert charged == pytest.approx(float(seconds.sum()), rel=1e-9), (seed, run.engine)
