"""``compare --decisions DIR``: the decisions over the ensemble's members, printed, in the JSON and
written as CSVs and a figure (speedtrap.cli.decisions)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from speedtrap.cli import app

runner = CliRunner()
SMALL = ["--set", "developers=2", "--set", "horizon_s=7200"]
ARMS = ["compare", "--backend", "gpu-batched", "--backend", "gpu-fast", "--backend", "manual"]
PATIENCE = "developer.attention.patience_s.median"


def _ensemble(tmp_path: Path) -> Path:
    values = [15, 20, 30, 45, 60, 90, 120, 200, 400, 600]
    frame = pd.DataFrame({"member": range(10), PATIENCE: values, "developer.review.detect_prob": 0.6})
    path = tmp_path / "ensemble.csv"
    frame.to_csv(path, index=False)
    return path


def test_compare_writes_every_decision_over_the_members(tmp_path: Path) -> None:
    out = tmp_path / "decisions"
    args = [*ARMS, *SMALL, "--replications", "20", "--ensemble", str(_ensemble(tmp_path))]
    result = runner.invoke(app, [*args, "--decisions", str(out), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert "nan" not in payload["finding"]  # a missing caveat is no caveat, never "nan"
    labels = [row["decision"] for row in payload["decisions"]]
    assert labels == ["gpu-fast vs gpu-batched", "AI (gpu-batched) vs by hand"]
    for row in payload["decisions"]:
        assert row["members"] == 10 and 0.0 <= row["share_paying"] <= 1.0
        assert row["share_low"] <= row["share_paying"] <= row["share_high"]
        assert row["verdict"] in ("pays", "does not pay", "depends")
        assert row["evpi_usd_per_dev_day"] >= 0.0
        assert row["evpi_seed_noise_usd_per_dev_day"] >= 0.0  # 2 seeds per member: the floor is known
    table = pd.read_csv(out / "decisions.csv")
    assert list(table["decision"]) == labels
    evppi = pd.read_csv(out / "evppi.csv")
    # only the varied parameter that applies to the headline is a candidate (detect_prob is constant)
    assert set(evppi["parameter"]) == {PATIENCE}
    measured = pd.read_csv(out / "measurements.csv")  # what a team can measure on gpu-batched
    assert set(measured["decision"]) == set(labels) and (measured["evppi_usd_per_dev_day"] >= 0).all()
    assert "usd_per_dev_day" in set(measured["measurement"]) and measured["how_to_measure"].notna().all()
    assert set(table["measure_first"]) <= set(measured["measurement"])
    members = pd.read_csv(out / "members.csv")
    assert len(members) == 10 and PATIENCE in members.columns
    assert "net_usd_per_dev_day: gpu-fast vs gpu-batched" in members.columns
    assert "measured on gpu-batched: share_idle" in members.columns
    assert (out / "decisions.png").stat().st_size > 0
    printed = runner.invoke(app, [*args[:5], *args[7:], "--decisions", str(out)])  # without by hand
    assert printed.exit_code == 0 and "Decisions over 10 members" in printed.output
    assert "What a team can measure on gpu-batched" in printed.output


def test_decisions_need_an_ensemble(tmp_path: Path) -> None:
    result = runner.invoke(app, [*ARMS, *SMALL, "--single", "--decisions", str(tmp_path / "d")])
    assert result.exit_code == 2 and "needs runs over a calibrated ensemble" in result.output


def test_a_teams_measurements_read_each_decision_over_the_members_consistent_with_them(
    tmp_path: Path,
) -> None:
    out = tmp_path / "decisions"
    args = [
        *ARMS,
        *SMALL,
        "--replications",
        "20",
        "--ensemble",
        str(_ensemble(tmp_path)),
        "--decisions",
        str(out),
    ]
    wide = runner.invoke(app, [*args, "--measured", "usd_per_dev_day=20:1000"])  # every member consistent
    assert wide.exit_code == 0, wide.output
    assert "Your team's answer: the decisions over the 10 members" in wide.output
    table = pd.read_csv(out / "decisions.csv")
    assert (table["team_members"] == 10).all()
    assert list(table["team_share_paying"]) == list(table["share_paying"])  # all kept: the same answer
    members = pd.read_csv(out / "members.csv")
    assert members["team kept"].all() and (members["team implausibility"] < 0.1).all()
    narrow = runner.invoke(app, [*args, "--measured", "usd_per_dev_day=1e6:1", "--json"])  # none consistent
    assert narrow.exit_code == 0, narrow.output
    for row in json.loads(narrow.stdout)["decisions"]:
        assert row["team_members"] == 0 and row["team_verdict"] == "too few members (0)"
        assert row["team_net_member_low"] is None and row["team_share_low"] is None  # no interval
    few = runner.invoke(app, [*args, "--measured", "usd_per_dev_day=20:1000", "--replications", "8"])
    assert few.exit_code == 0, few.output  # 4 members, all kept: below the minimum of 5
    team_rows = few.output.split("Your team's answer")[1].split("┡")[1].split("└")[0]
    assert "too few members (4)" in team_rows and "$" not in team_rows and "%" not in team_rows


@pytest.mark.parametrize(
    ("measured", "says"),
    [
        ("idle=0.1:0.02", "unknown measurement 'idle'"),
        ("share_idle=0.1", "expected NAME=VALUE:SE"),
        ("share_idle=0.1:0", "standard error positive"),
        ("share_idle=12:3", "between 0 and 1"),
    ],
)
def test_a_bad_measurement_is_refused_before_any_run(tmp_path: Path, measured: str, says: str) -> None:
    args = [*ARMS, *SMALL, "--ensemble", str(_ensemble(tmp_path)), "--decisions", str(tmp_path / "d")]
    result = runner.invoke(app, [*args, "--measured", measured])
    assert result.exit_code == 2 and says in result.output and "runs done" not in result.output
    twice = runner.invoke(
        app, [*args, "--measured", "share_idle=0.1:0.02", "--measured", "share_idle=0.2:0.02"]
    )
    assert twice.exit_code == 2 and "given twice" in twice.output
    alone = runner.invoke(app, [*ARMS, *SMALL, "--measured", "share_idle=0.1:0.02"])
    assert alone.exit_code == 2 and "--measured needs --decisions" in alone.output


def test_a_bracketed_phrase_in_a_table_is_printed_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    """Rich reads "[the members' central 95%]" as markup and would drop it from a title or a cell."""
    from speedtrap.cli.common import print_table

    print_table("mean [the members' central 95%]", ["a [b]"], [("[x] $+1 [-2, +3]",)])
    out = " ".join(capsys.readouterr().out.split())  # the title wraps over the table's width
    assert "mean [the members' central 95%]" in out and "a [b]" in out and "[x] $+1 [-2, +3]" in out
