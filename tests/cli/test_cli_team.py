"""``speedtrap fit LOGS --ensemble team.csv`` and ``compare --ensemble team.csv`` on the command line:
bad input fails clearly before any work; a team ensemble's sidecar makes compare print each
behavioural interval's width before and after."""

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from speedtrap.cli import app
from speedtrap.experiments.ensemble import default_ensemble_path
from speedtrap.experiments.team import SIDECAR_SCHEMA

runner = CliRunner()
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sessions" / "trace.csv"


def stored(rows: slice) -> pd.DataFrame:
    return pd.read_csv(default_ensemble_path()).iloc[rows].reset_index(drop=True)


def test_no_logs_fail_clearly_and_write_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "logs"
    empty.mkdir()
    result = runner.invoke(
        app, ["fit", str(empty), "--out", str(tmp_path / "f.toml"), "--ensemble", str(tmp_path / "team.csv")]
    )
    assert result.exit_code == 2
    assert "no usable request" in result.output
    assert not (tmp_path / "team.csv").exists() and not (tmp_path / "team.fit.json").exists()


def test_an_empty_prior_fails_before_fitting(tmp_path: Path) -> None:
    prior = tmp_path / "prior.csv"
    stored(slice(0, 0)).to_csv(prior, index=False)  # the columns, no member
    args = ["fit", str(EXAMPLE), "--out", str(tmp_path / "f.toml"), "--ensemble", str(tmp_path / "team.csv")]
    result = runner.invoke(app, [*args, "--prior", str(prior)])
    assert result.exit_code == 2
    assert "--prior" in result.output and "no members" in result.output
    assert not (tmp_path / "f.toml").exists()  # it failed before the fit wrote anything
    missing = runner.invoke(app, [*args, "--prior", str(tmp_path / "nowhere.csv")])
    assert missing.exit_code == 2 and "no ensemble file" in missing.output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--ensemble", "team.txt"], "a team ensemble is a CSV file"),
        (["--prior", "prior.csv"], "give --ensemble too"),
    ],
)
def test_bad_options_are_named(tmp_path: Path, extra: list[str], message: str) -> None:
    result = runner.invoke(app, ["fit", str(EXAMPLE), "--out", str(tmp_path / "f.toml"), *extra])
    assert result.exit_code == 2
    assert message in result.output


@pytest.mark.slow
def test_fit_writes_a_team_ensemble_or_names_why_not(tmp_path: Path) -> None:
    prior = tmp_path / "prior.csv"
    stored(slice(0, 3)).to_csv(prior, index=False)
    team = tmp_path / "team.csv"
    result = runner.invoke(
        app,
        [
            "fit", str(EXAMPLE), "--out", str(tmp_path / "f.toml"), "--ensemble", str(team),
            "--prior", str(prior), "--days", "1", "--replications", "2", "--json",
        ],
    )  # fmt: skip
    if result.exit_code == 0:
        payload = json.loads(result.stdout)["team"]
        assert payload["of"] == 3 and payload["kept"] == len(pd.read_csv(team))
        assert json.loads((tmp_path / "team.fit.json").read_text())["kept_members"] == payload["kept_members"]
    else:
        assert result.exit_code == 2 and "no member of the prior" in result.output
        assert not team.exists()


def test_compare_prints_each_interval_before_and_after(tmp_path: Path) -> None:
    prior = tmp_path / "prior.csv"
    stored(slice(0, 10)).to_csv(prior, index=False)
    team = tmp_path / "team.csv"
    stored(slice(0, 6)).to_csv(team, index=False)
    sidecar = {
        "schema_version": SIDECAR_SCHEMA,
        "kind": "team ensemble",
        "prior": {"path": str(prior), "default": False, "members": 10},
        "kept": 6,
        "of": 10,
    }
    (tmp_path / "team.fit.json").write_text(json.dumps(sidecar))
    args = [
        "compare", "--backend", "gpu-batched", "--backend", "manual", "--ensemble", str(team),
        "--replications", "10", "--set", "developers=1", "--set", "horizon_s=1800",
    ]  # fmt: skip
    text = runner.invoke(app, args)
    assert text.exit_code == 0, text.output
    words = " ".join(text.output.split())  # the table's title wraps
    assert "interval width, before → after your logs" in words
    assert "the prior's 10 members → the team ensemble's 6" in words
    data = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    rows = {(r["arm"], r["outcome"]): r for r in data["narrowing"]}
    row = rows[("manual", "tasks_per_dev_day")]
    after = next(
        d for d in data["differences"] if (d["arm"], d["outcome"]) == ("manual", "tasks_per_dev_day")
    )
    assert row["width_after"] == pytest.approx(after["behaviour_high"] - after["behaviour_low"])
    assert row["width_before"] > 0 and row["members_before"] == 5
    plain = runner.invoke(app, [*args[:6], str(prior), *args[7:], "--json"])  # a plain ensemble: no table
    assert json.loads(plain.stdout)["narrowing"] == []


def test_compare_names_a_missing_prior(tmp_path: Path) -> None:
    team = tmp_path / "team.csv"
    stored(slice(0, 6)).to_csv(team, index=False)
    sidecar = {"schema_version": SIDECAR_SCHEMA, "kind": "team ensemble", "kept": 6, "of": 10}
    sidecar["prior"] = {"path": str(tmp_path / "gone.csv"), "default": False}
    (tmp_path / "team.fit.json").write_text(json.dumps(sidecar))
    args = ["compare", "--backend", "gpu-batched", "--backend", "manual", "--ensemble", str(team)]
    result = runner.invoke(
        app, [*args, "--replications", "4", "--set", "horizon_s=600", "--set", "developers=1"]
    )
    assert result.exit_code == 2
    assert "the prior of the team ensemble" in result.output and "gone.csv" in result.output


def test_the_command_defaults_are_the_team_fit_defaults() -> None:
    import inspect

    from speedtrap.cli.sessions import fit
    from speedtrap.experiments.team import DEFAULT_DAYS, DEFAULT_REPLICATIONS

    parameters = inspect.signature(fit).parameters
    assert parameters["replications"].default == DEFAULT_REPLICATIONS
    assert parameters["days"].default == DEFAULT_DAYS
