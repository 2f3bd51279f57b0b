"""The app without a browser: controls → validated arms, chunked runs, views and the break-even case."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal
from typer.testing import CliRunner

from speedtrap.app.break_even import SPEEDUPS, analytic_case, break_even_figure
from speedtrap.app.figures import (
    cumulative_figure,
    finding,
    ledger_figure,
    ledger_table,
    pool_figure,
    timeline_figure,
)
from speedtrap.app.live import LiveComparison
from speedtrap.app.server import solara_argv
from speedtrap.app.settings import (
    UPLOADED,
    Settings,
    backend_choices,
    build_arms,
    load_base,
    settings_for,
)
from speedtrap.cli import app
from speedtrap.models import simulate

SMALL = Settings(developers=2, horizon_h="0.5", seed="3")
"""Two developers for half an hour of the headline population."""


def test_settings_become_one_scenario_per_arm_with_the_what_ifs_on_b_only() -> None:
    arms = build_arms(dataclasses.replace(SMALL, decode_speedup=2.0, failure_multiplier=1.5))
    assert arms.ok and arms.seed == 3 and list(arms.scenarios) == ["gpu-batched", "wafer-distilled"]
    a, b = arms.scenarios.values()
    assert a.developers == b.developers == 2 and a.horizon_s == b.horizon_s == 1800.0
    assert a.backends["gpu-batched"].decode_speedup == 1.0
    assert a.backends["gpu-batched"].quality.failure_multiplier == 1.0
    assert b.backends["wafer-distilled"].decode_speedup == 2.0
    assert b.backends["wafer-distilled"].quality.failure_multiplier == pytest.approx(1.2 * 1.5)
    alone = build_arms(dataclasses.replace(SMALL, backend_b="none", failure_multiplier=2.0))
    assert alone.target == "gpu-batched"
    assert alone.scenarios["gpu-batched"].backends["gpu-batched"].quality.failure_multiplier == 2.0


def test_bad_values_give_messages_by_control() -> None:
    errors = build_arms(dataclasses.replace(SMALL, horizon_h="-1", seed="x")).errors
    assert errors == {
        "seed": "'x' is not a whole number",
        "horizon_h": "the horizon must be more than 0 hours",
    }
    assert "horizon_h" in build_arms(dataclasses.replace(SMALL, horizon_h="soon")).errors
    assert "backend_b" in build_arms(dataclasses.replace(SMALL, backend_b="gpu-batched")).errors
    no_fast_tier = build_arms(dataclasses.replace(SMALL, policy="fast_share")).errors
    assert "no tier 'fast'" in no_fast_tier["policy"]
    both_fast = build_arms(dataclasses.replace(SMALL, backend_b="gpu-fast", policy="interactive_fast"))
    assert [s.policy.kind for s in both_fast.scenarios.values()] == ["interactive_fast"] * 2
    upload = dataclasses.replace(SMALL, scenario=UPLOADED, uploaded_toml="developers = 0")
    assert build_arms(upload).errors["scenario"].startswith("developers:")
    broken = dataclasses.replace(SMALL, scenario=UPLOADED, uploaded_toml="developers = [")
    assert "not valid TOML" in build_arms(broken).errors["scenario"]


def test_choosing_a_scenario_moves_the_sliders_to_its_values() -> None:
    base = load_base(dataclasses.replace(SMALL, scenario="shared_fleet"))
    moved = settings_for(base, SMALL)
    assert moved.policy == "fast_share" and moved.developers == 4 and moved.horizon_h == "8"
    assert (moved.backend_a, moved.backend_b) == ("fleet", "wafer-distilled")
    metr = load_base(dataclasses.replace(SMALL, scenario="metr"))
    assert backend_choices(metr)[:2] == ["sonnet-2025", "gpu-batched"] and "manual" in backend_choices(metr)
    arms = build_arms(settings_for(metr, dataclasses.replace(SMALL, scenario="metr")))
    own = arms.scenarios["sonnet-2025"].backends["sonnet-2025"]
    assert own.price.input_usd_per_mtok == 3.0  # the file's backend, with its overrides


def test_a_run_in_chunks_ends_where_one_run_ends() -> None:
    arms = build_arms(SMALL)
    live = LiveComparison(arms.scenarios, arms.seed, chunks=5)
    steps = [live.step() for _ in range(5)]
    assert [round(s.progress, 6) for s in steps] == [0.2, 0.4, 0.6, 0.8, 1.0] and live.done
    for name, scenario in arms.scenarios.items():
        whole = simulate(scenario, arms.seed)
        assert_frame_equal(steps[-1].results[name].ledger, whole.ledger)
        assert_frame_equal(steps[-1].results[name].tasks, whole.tasks)


def test_views_draw_and_the_finding_compares_the_arms() -> None:
    arms = build_arms(SMALL)
    live = LiveComparison(arms.scenarios, arms.seed, chunks=1)
    results = live.step().results
    table = ledger_table(results)
    assert list(table.columns) == ["gpu-batched", "wafer-distilled"]
    hours = table.drop(index=["tasks_per_dev_day", "usd_per_dev_day"]).sum()
    assert hours.tolist() == pytest.approx([8.0, 8.0])  # every hour of a developer-day is accounted for
    text = finding(results)
    assert "gpu-batched" in text and "wafer-distilled" in text and "same seed" in text
    for figure in (
        ledger_figure(results),
        cumulative_figure(results),
        timeline_figure(results["gpu-batched"], "gpu-batched"),
        pool_figure(results["gpu-batched"], "gpu-batched"),
    ):
        assert figure.axes


def test_break_even_map_uses_the_analytic_scope_or_says_why_not() -> None:
    arms = build_arms(SMALL)
    scenario, baseline, fast = analytic_case(arms.scenarios)
    assert baseline.name == "gpu-batched" and fast.name == "wafer-distilled"
    assert scenario.task_mix.sizing == "difficulty" and scenario.developer.attention.rule == "threshold"
    manual = build_arms(dataclasses.replace(SMALL, backend_b="manual"))
    assert "manual" in analytic_case(manual.scenarios)


def test_the_command_line_loads_solara_only_for_the_app() -> None:
    code = "import sys, speedtrap.cli; print('solara' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
    argv = solara_argv(port=0, host="127.0.0.1", open_browser=False)
    assert argv[1:4] == ["-m", "speedtrap.app.launch", "speedtrap.app.page"] and "--no-open" in argv
    help_text = CliRunner().invoke(app, ["app", "--help"]).output
    assert "--no-browser" in help_text and "--port" in help_text


def test_break_even_figure_marks_the_current_what_if() -> None:
    curve = pd.DataFrame({"speedup": SPEEDUPS, "m_star": [1.0, 1.2, 1.3, math.inf]})
    figure = break_even_figure(curve, (6.0, 1.2), baseline="gpu-batched", fast="wafer-distilled")
    ax = figure.axes[0]
    star = [line for line in ax.get_lines() if line.get_label() == "current scenario"]
    assert len(star) == 1 and list(star[0].get_xydata()[0]) == [6.0, 1.2]
    assert "wafer-distilled" in ax.get_xlabel()
