"""compare's behavioural parameter sets (--ensemble, --single, the stored default) and its two
intervals in the JSON (speedtrap.cli.behaviour, speedtrap.experiments.ensemble)."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from speedtrap.cli import app
from speedtrap.config import Scenario
from speedtrap.experiments.ensemble import choose_members, default_ensemble_path, member_overrides

runner = CliRunner()
SMALL = ["--set", "developers=2", "--set", "horizon_s=28800"]
ARMS = ["compare", "--backend", "gpu-batched", "--backend", "wafer-distilled"]
MEMBERS = (
    "member,developer.attention.patience_s.median,developer.review.detect_prob,developer.delegated_fraction\n"
    "0,30,0.5,0.5\n1,120,0.6,0.7\n2,400,0.68,0.9\n3,60,0.55,0.6\n4,200,0.62,0.8\n5,20,0.47,0.4\n"
)


@pytest.fixture
def ensemble(tmp_path: Path) -> Path:
    path = tmp_path / "ensemble.csv"
    path.write_text(MEMBERS)
    return path


def test_compare_json_has_both_intervals_and_which_dominates(ensemble: Path) -> None:
    args = [*ARMS, "--replications", "10", *SMALL, "--ensemble", str(ensemble), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["behaviour"]["members"] == [0, 1, 2, 4, 5]
    assert payload["behaviour"]["seeds_per_member"] == 2
    assert any(
        "left out: developer.delegated_fraction (marked for metr" in x for x in payload["behaviour"]["lines"]
    )
    for row in payload["differences"]:
        assert row["members"] == 5 and row["seeds_per_member"] == 2
        assert (
            row["dominant"] in ("seed noise", "behavioural uncertainty") and "dominates" in row["dominance"]
        )
        # the members' central 95%: inside the range the members produced, never a normal-theory spread
        assert row["behaviour_low"] is not None and row["behaviour_low"] <= row["behaviour_high"]
    (economics,) = payload["economics"]
    assert economics["members"] == 5 and economics["net_behaviour_low"] is not None
    assert 0 <= economics["other_work_share_arm"] < 1
    assert "behavioural interval" in payload["finding"]


def test_too_few_members_print_no_behavioural_interval(ensemble: Path) -> None:
    result = runner.invoke(app, [*ARMS, "--replications", "4", *SMALL, "--ensemble", str(ensemble), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert all(row["behaviour_low"] is None and row["members"] == 2 for row in payload["differences"])
    assert any("too few members (2)" in row["notes"] for row in payload["differences"])
    table = runner.invoke(app, [*ARMS, "--replications", "4", *SMALL, "--ensemble", str(ensemble)])
    assert table.exit_code == 0 and "too few members (2)" in table.output


def test_single_gives_the_seed_interval_alone(ensemble: Path) -> None:
    result = runner.invoke(app, [*ARMS, "--replications", "3", *SMALL, "--single", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["behaviour"]["members"] == [-1]
    assert all(row["behaviour_low"] is None and row["dominant"] == "n/a" for row in payload["differences"])
    both = runner.invoke(app, [*ARMS, *SMALL, "--single", "--ensemble", str(ensemble)])
    assert both.exit_code == 2 and "exclude each other" in both.output


def test_without_a_stored_ensemble_the_scenario_is_used_and_said_in_one_line() -> None:
    if default_ensemble_path().is_file():
        pytest.skip("a calibrated ensemble is stored")
    result = runner.invoke(app, [*ARMS, "--replications", "2", *SMALL])
    assert result.exit_code == 0, result.output
    assert "no calibrated ensemble stored yet" in result.output


def test_a_missing_or_bad_ensemble_is_one_clear_line(tmp_path: Path) -> None:
    missing = runner.invoke(app, [*ARMS, *SMALL, "--ensemble", str(tmp_path / "none.csv")])
    assert missing.exit_code == 2 and "no ensemble file" in missing.output
    bad = tmp_path / "bad.csv"
    bad.write_text("member,developer.review.detect_prob\n0,high\n")
    result = runner.invoke(app, [*ARMS, *SMALL, "--ensemble", str(bad)])
    assert result.exit_code == 2 and "not a finite number" in result.output
    assert len(result.output.strip().splitlines()) == 1
    outside = tmp_path / "outside.csv"
    outside.write_text("member,developer.review.detect_prob\n0,0.99\n")
    result = runner.invoke(app, [*ARMS, *SMALL, "--ensemble", str(outside)])
    assert result.exit_code == 2 and "outside its range" in result.output


def test_members_apply_only_where_they_fit_and_the_user_set_paths_stay() -> None:
    scenario = Scenario(name="team")
    member = {"developer.review.detect_prob": 0.6, "developer.delegated_fraction": 0.5}
    overrides, left = member_overrides(scenario, member, keep=())
    assert overrides == {"developer.review.detect_prob": 0.6}
    assert "metr" in left["developer.delegated_fraction"]
    overrides, left = member_overrides(Scenario(name="metr"), member, keep=["developer.review.detect_prob"])
    assert (
        overrides == {"developer.delegated_fraction": 0.5}
        and left["developer.review.detect_prob"] == "set by you"
    )
    assert choose_members(50, 10) == ([0, 12, 24, 37, 49], 2)
    assert choose_members(3, 3) == ([0], 3)
