"""Which parameters flip a decision one at a time from the ensemble's centre
(speedtrap.experiments.decision_flips), and the README's promise that every such parameter is
reported as that decision's boundary (issue 40, point 7)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from speedtrap.analysis.decisions import decision_pairs
from speedtrap.config.scenario import Scenario
from speedtrap.experiments.decision_flips import centre_member, decision_flips

ROOT = Path(__file__).resolve().parents[2]
PATIENCE = "developer.attention.patience_s.median"
DETECT = "developer.review.detect_prob"


def test_the_centre_member_is_the_medoid_of_the_ranks() -> None:
    members = [{"a": 1.0, "b": 10.0}, {"a": 2.0, "b": 20.0}, {"a": 3.0, "b": 30.0}, {"a": 9.0, "b": 1.0}]
    assert centre_member(members) == {"a": 2.0, "b": 20.0}


def test_a_parameter_flips_a_decision_when_its_ends_give_opposite_signs() -> None:
    # a stand-in model: the fast arm completes more tasks the more patient the developer; at the
    # low end of patience it pays less than its extra spend, at the high end more
    base = Scenario.from_toml(ROOT / "experiments" / "scenarios" / "headline.toml")
    arms = {name: base.with_backend(name) for name in ("gpu-batched", "gpu-fast")}

    def summarize(scenario: Scenario, seed: int) -> dict[str, float]:
        fast = "gpu-fast" in scenario.backends
        patience = scenario.developer.attention.patience_s
        extra = 0.5 * (patience.median / 300.0) if fast and patience is not None else 0.0
        return {"tasks_per_dev_day": 4.0 + extra, "usd_per_dev_day": 40.0 + (100.0 if fast else 0.0)}

    parameters = pd.DataFrame(
        [
            {"path": PATIENCE, "low": 10.0, "high": 600.0, "scale": "log", "scenarios": "both"},
            {
                "path": "developer.review.detect_prob",
                "low": 0.45,
                "high": 0.7,
                "scale": "linear",
                "scenarios": "both",
            },
        ]
    )
    table = decision_flips(
        arms, decision_pairs(list(arms)), {}, [1, 2], summarize, parameters=parameters
    ).set_index("parameter")
    assert table.loc[PATIENCE, "flips"]
    assert table.loc[PATIENCE, "net_at_low"] < 0 < table.loc[PATIENCE, "net_at_high"]
    assert table.loc[PATIENCE, "clear"]  # the stand-in has no seed noise
    assert not table.loc[DETECT, "flips"]

    def noisy(scenario: Scenario, seed: int) -> dict[str, float]:
        # the same flip, buried in seed noise far larger than the effect
        row = summarize(scenario, seed)
        return row | {"tasks_per_dev_day": row["tasks_per_dev_day"] + (3.0 if seed % 2 else -3.0)}

    noisy_table = decision_flips(
        arms, decision_pairs(list(arms)), {}, [1, 2, 3, 4], noisy, parameters=parameters
    ).set_index("parameter")
    assert noisy_table.loc[PATIENCE, "flips"] and not noisy_table.loc[PATIENCE, "clear"]


def test_every_unfitted_constant_is_a_field_of_the_headline_with_its_value_inside_its_range() -> None:
    from speedtrap.experiments.decision_flips import parameters_and_constants
    from speedtrap.validation.parameters import scenario_value

    headline = Scenario.from_toml(ROOT / "experiments" / "scenarios" / "headline.toml")
    table = parameters_and_constants()
    constants = table[table["kind"] == "unfitted constant"]
    assert PATIENCE not in set(constants["path"]) and "developer.attention.patience_episode_sigma" in set(
        constants["path"]
    )
    assert not set(constants["path"]) & set(table[table["kind"] == "calibrated"]["path"])
    for row in constants.itertuples():
        value = float(scenario_value(headline, str(row.path)))
        assert float(row.low) <= value <= float(row.high), (row.path, value)


def readme_boundaries() -> dict[str, str]:
    """The README's decisions section: each decision's bullet (``* **<decision>**: …``, up to the next
    bullet or blank line), whose text names the parameters that flip it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### Decisions") :]
    bullets = re.findall(r"^\* \*\*(.+?)\*\*:(.*?)(?=^\* |^\s*$)", section, flags=re.M | re.S)
    return {label: body for label, body in bullets}


def test_the_readme_reports_every_flip_the_stored_check_found() -> None:
    flips = pd.read_csv(ROOT / "docs" / "decisions" / "flips.csv")
    reported = readme_boundaries()
    assert set(flips["decision"]) <= set(reported)
    for row in flips[flips["flips"]].itertuples():
        assert f"`{row.parameter}`" in reported[row.decision], (row.decision, row.parameter)


@pytest.mark.slow
def test_every_parameter_that_flips_a_headline_decision_is_reported_as_its_boundary() -> None:
    """Run experiments/decision_flips.py's full check (the stored ensemble's centre, every sourced
    range's ends, 10 developers × 10 days × 6 seeds per end) and require the README's decisions section
    to name, for each decision, every parameter that flips it. Before issue 40 no decision had such a
    line, and patience flips fast mode against standard: this test failed."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "decision_flips_script", ROOT / "experiments" / "decision_flips.py"
    )
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    out = ROOT / "results" / "decision_flips" / "flips-test.csv"
    assert script.main(["--out", str(out)]) == 0
    flips = pd.read_csv(out)
    reported = readme_boundaries()
    missing = [
        f"{row.decision}: {row.parameter}"
        for row in flips[flips["flips"]].itertuples()
        if f"`{row.parameter}`" not in reported.get(row.decision, "")
    ]
    assert not missing, "flips not reported as the decision's boundary in the README:\n" + "\n".join(missing)
