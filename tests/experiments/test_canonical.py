"""The canonical experiments: each `--quick` run writes its runs, tables and figures and prints a
finding with numbers, through the script and through `speedtrap experiment`."""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pandas as pd
import pytest
from typer.testing import CliRunner

from speedtrap.analysis.latency import LATENCY_KEYS
from speedtrap.cli import app
from speedtrap.config.experiment import Experiment
from speedtrap.experiments.canonical import CANONICAL, EXPERIMENTS_DIR, experiment_file, load_spec
from speedtrap.models.typed_core import engine_for

runner = CliRunner()


class Quick(NamedTuple):
    """A quick variant's runs table, spec, output folder and printed report."""

    table: pd.DataFrame
    spec: Experiment
    out: Path
    finding: str


FILES: dict[str, tuple[str, ...]] = {
    "headline": (
        "summary.csv",
        "paired.csv",
        "ledger.png",
        "ledger.svg",
        "outcomes.png",
        "outcomes.svg",
        "latency.csv",
    ),
    "fast_mode_externality": (
        "summary.csv",
        "economics.csv",
        "externality.png",
        "externality.svg",
        "latency.csv",
    ),
    "break_even": (
        "relative.csv",
        "analytic.csv",
        "economics.csv",
        "break_even.png",
        "break_even.svg",
        "latency.csv",
    ),
}


def written(out: Path, name: str) -> None:
    assert (out / "spec.json").is_file()
    assert list((out / "runs").glob("*.parquet"))
    for file in FILES[name]:
        assert (out / file).stat().st_size > 0, file


@pytest.fixture(scope="module")
def quick_script(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Quick]:
    """Run a canonical experiment's quick variant through its script (once per module) and read its
    runs back from the store (no new runs)."""
    import importlib

    from speedtrap.experiments.runner import run_experiment

    done: dict[str, Quick] = {}

    def get(name: str) -> Quick:
        if name not in done:
            root = tmp_path_factory.mktemp(name)
            script = [
                sys.executable,
                str(EXPERIMENTS_DIR / f"{name}.py"),
                "--quick",
                "--single",  # the scenario file's own parameter set: one store, read back below
                "--results-dir",
                str(root),
            ]
            ran = subprocess.run(script, capture_output=True, text=True, check=False, timeout=600)
            assert ran.returncode == 0, ran.stderr
            spec = load_spec(name, quick=True)
            model = importlib.import_module(f"speedtrap.experiments.canonical.{name}").MODEL
            table = run_experiment(spec, results_dir=root, progress=False, model=model, max_runs=0)
            assert len(table) == len(table.drop_duplicates("point")) * spec.replications  # all stored
            done[name] = Quick(table, spec, root / spec.name, ran.stdout)
        return done[name]

    return get


@pytest.mark.parametrize("name", [n for n in CANONICAL if n in FILES])
def test_quick_script_writes_its_files_and_a_finding(name: str, quick_script: Callable[[str], Quick]) -> None:
    quick = quick_script(name)
    written(quick.out, name)
    assert "Wrote" in quick.finding


@pytest.mark.parametrize("name", [n for n in CANONICAL if n in FILES])
def test_quick_script_writes_latency_percentiles_per_design_point(
    name: str, quick_script: Callable[[str], Quick]
) -> None:
    """latency.csv: per design point (per tier where the runs keep tiers apart) the number of runs and
    the mean over them of each run's p50/p90/p99 (seconds), the same as the runs table's columns."""
    table, spec, out, _ = quick_script(name)
    latency = pd.read_csv(out / "latency.csv")
    factors = list(spec.factor_paths)
    tiers = ["standard", "fast"] if name == "fast_mode_externality" else [""]
    assert list(latency.columns) == [*factors, *(["tier"] if tiers != [""] else []), "runs", *LATENCY_KEYS]
    assert len(latency) == len(table.drop_duplicates("point")) * len(tiers)
    assert (latency["runs"] == spec.replications).all()
    for tier in tiers:
        columns = [f"{tier}_{key}" if tier else key for key in LATENCY_KEYS]
        expected = table.groupby(factors, sort=False)[columns].mean().reset_index()
        got = latency[latency["tier"] == tier] if tier else latency
        pd.testing.assert_frame_equal(
            got[[*factors, *LATENCY_KEYS]].reset_index(drop=True),
            expected.set_axis([*factors, *LATENCY_KEYS], axis=1),
            check_dtype=False,
        )
    served = latency.dropna(subset=["ttft_p50_s"])
    assert len(served) > 0
    for prefix in ("ttft", "tbt", "e2e"):
        assert (served[f"{prefix}_p50_s"] <= served[f"{prefix}_p90_s"]).all()
        assert (served[f"{prefix}_p90_s"] <= served[f"{prefix}_p99_s"]).all()


def test_headline_finding_reports_every_backend_against_the_baseline(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["experiment", "headline", "--quick", "--single", "--results-dir", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    written(tmp_path / "headline-quick", "headline")
    assert "gpu-fast: " in result.stdout and "wafer-distilled: " in result.stdout
    paired = pd.read_csv(tmp_path / "headline-quick" / "paired.csv")
    assert set(paired["backend"]) == {"gpu-fast", "wafer-distilled", "manual"}
    spec = load_spec("headline", quick=True)
    assert (paired["n"] == spec.replications).all()  # every pair matched by seed
    economics = pd.read_csv(tmp_path / "headline-quick" / "economics.csv")
    assert list(economics["arm"]) == ["gpu-fast", "wafer-distilled"]  # not the no-AI arm
    assert "per developer-hour: net" in result.stdout and "× its price" in result.stdout


def test_every_canonical_experiment_has_a_file_and_a_script() -> None:
    for name in CANONICAL:
        assert experiment_file(name).is_file()
        assert (EXPERIMENTS_DIR / f"{name}.py").is_file()
        assert load_spec(name).name == name


def test_unknown_experiment_is_one_line_exit_2() -> None:
    result = runner.invoke(app, ["experiment", "speed_of_light"])
    assert result.exit_code == 2
    assert "unknown experiment 'speed_of_light'" in result.stderr


def test_fleet_outcomes_split_tiers_groups_and_provider() -> None:
    from speedtrap.experiments.canonical.fast_mode_externality import fleet_outcomes

    spec = load_spec("fast_mode_externality", quick=True)
    scenario = spec.scenario.with_overrides({"policy.share": 0.5, "horizon_s": 3600.0})
    out = fleet_outcomes(scenario, 1)
    result_cost = out["revenue_usd_per_gpu_hour"]
    assert out["fast_decode_tok_s"] > 0 and out["standard_decode_tok_s"] > 0
    assert out["fast_tasks_per_dev_day"] >= 0 and out["standard_tasks_per_dev_day"] >= 0
    assert result_cost > 0 and out["provider_tok_s_per_gpu"] > 0
    # it names its engine as simulate_summary does (fast_share's tiers: the typed core where it is built)
    engine = engine_for(scenario)
    assert (out.engine, out.engine_reason) == (engine.name, engine.reason)
    none = fleet_outcomes(scenario.with_overrides({"policy.share": 0.0}), 1)
    assert math.isnan(none["fast_ttft_s"]) and math.isnan(none["fast_tasks_per_dev_day"])
    assert math.isnan(none["fast_usd_per_dev_day"])
    # fast mode is billed at 6x: the same work earns more per GPU-hour when half the team buys it
    assert result_cost > none["revenue_usd_per_gpu_hour"]
    # the groups count tasks as the run summary does: with nobody on fast mode the standard group is
    # the team; and the two groups' tasks and spend add up to the team's
    assert none["standard_tasks_per_dev_day"] == pytest.approx(none["tasks_per_dev_day"])
    assert none["standard_usd_per_dev_day"] == pytest.approx(none["usd_per_dev_day"])
    for key in ("tasks_per_dev_day", "usd_per_dev_day"):
        assert (out[f"fast_{key}"] + out[f"standard_{key}"]) / 2 == pytest.approx(out[key])  # 50% each
    assert out["fast_usd_per_dev_day"] > 0 and out["usd_per_dev_day"] == pytest.approx(
        out["usd_per_task"] * out["tasks_per_dev_day"]
    )


def test_fleet_outcomes_needs_a_fast_share_policy() -> None:
    from speedtrap.config import Scenario
    from speedtrap.experiments.canonical.fast_mode_externality import fleet_outcomes

    with pytest.raises(ValueError, match="fast_share"):
        fleet_outcomes(Scenario(developers=1, horizon_s=600.0), 1)


def test_break_even_relative_values_are_paired_ratios_to_the_reference() -> None:
    from speedtrap.experiments.canonical.break_even import relative_table, simulated_break_even

    spec = load_spec("break_even", quick=True)
    speed, mult = spec.factor_paths
    table = pd.DataFrame(
        {
            "seed": [1, 2, 1, 2, 1, 2],
            speed: [1.0, 1.0, 6.0, 6.0, 6.0, 6.0],
            mult: [1.0, 1.0, 1.0, 1.0, 2.0, 2.0],
            "tasks_per_dev_day": [10.0, 20.0, 12.0, 24.0, 9.0, 18.0],
            "usd_per_task": [4.0, 4.0, 4.0, 4.0, 5.0, 5.0],
        }
    )
    rel = relative_table(table, spec).set_index(["speedup", "failure_multiplier", "metric"])
    assert rel.loc[(6.0, 1.0, "tasks_per_dev_day"), "relative"] == pytest.approx(1.2)
    assert rel.loc[(6.0, 1.0, "tasks_per_dev_day"), "ci_high"] == pytest.approx(1.2)  # identical ratios
    assert rel.loc[(6.0, 2.0, "usd_per_task"), "relative"] == pytest.approx(1.25)
    crossing = simulated_break_even(relative_table(table, spec), "tasks_per_dev_day").set_index("speedup")
    # 1.2 at m = 1, 0.9 at m = 2: crosses 1 two thirds of the way
    assert crossing.loc[6.0, "m_star_simulated"] == pytest.approx(1.0 + 2.0 / 3.0)


def test_a_script_refuses_an_unknown_executor_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from speedtrap.experiments.canonical import main

    assert main("headline", ["--executor", "threads"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: --executor: unknown executor 'threads' (known: serial, processes, dask)"


def _net_by_hand(table: pd.DataFrame, factor: str, base: object, level: object, spec: Experiment) -> float:
    """Mean over seeds of :func:`speedtrap.analysis.value.net_value_per_dev_day` of the ``level``
    runs against the ``base`` runs, paired by seed with a merge."""
    from speedtrap.analysis.value import OTHER_WORK, net_value_per_dev_day

    if OTHER_WORK in table.columns:  # output counts other work (task-equivalents) where runs carry it
        table = table.assign(tasks_per_dev_day=table["tasks_per_dev_day"] + table[OTHER_WORK])
    cols = ["seed", "tasks_per_dev_day", "usd_per_dev_day"]
    pairs = table[table[factor] == base][cols].merge(table[table[factor] == level][cols], on="seed")
    net = net_value_per_dev_day(
        pairs["tasks_per_dev_day_x"].to_numpy(),
        pairs["usd_per_dev_day_x"].to_numpy(),
        pairs["tasks_per_dev_day_y"].to_numpy(),
        pairs["usd_per_dev_day_y"].to_numpy(),
        value=spec.scenario.value,
        workday_s=spec.scenario.workday_s,
    )
    return float(net.mean())


def test_break_even_economics_prices_every_point_against_the_reference(
    quick_script: Callable[[str], Quick],
) -> None:
    from speedtrap.analysis.value import VALUE_COLUMNS

    table, spec, out, text = quick_script("break_even")
    speed, mult = spec.factor_paths
    economics = pd.read_csv(out / "economics.csv")
    assert list(economics.columns) == ["speedup", "failure_multiplier", *VALUE_COLUMNS]
    points = table.drop_duplicates("point")
    assert len(economics) == len(points) - 1  # every point but the reference
    assert not ((economics["speedup"] == 1.0) & (economics["failure_multiplier"] == 1.0)).any()
    assert (economics["n"] == spec.replications).all()
    reference = int(points[(points[speed] == 1.0) & (points[mult] == 1.0)]["point"].iloc[0])
    for row in economics.itertuples():
        point = int(
            points[(points[speed] == row.speedup) & (points[mult] == row.failure_multiplier)]["point"].iloc[0]
        )
        assert row.net_usd_per_dev_day == pytest.approx(_net_by_hand(table, "point", reference, point, spec))
        assert row.net_ci_low <= row.net_usd_per_dev_day <= row.net_ci_high
    article = economics[(economics["speedup"] == 6.0) & (economics["failure_multiplier"] == 1.2)].iloc[0]
    assert (
        f"Same price: 6× speed, 1.2× mistakes at ${spec.scenario.value.usd_per_dev_hour:g} per developer-hour"
        in text
    )
    assert (
        f"net {article['net_usd_per_dev_day']:+,.0f} USD per developer-day against gpu-batched as is" in text
    )
    assert "only 2 replications" in text  # the quick variant's intervals are flagged


def test_externality_economics_of_the_team_and_each_group_against_no_adoption(
    quick_script: Callable[[str], Quick],
) -> None:
    from speedtrap.analysis.value import VALUE_COLUMNS
    from speedtrap.experiments.canonical.fast_mode_externality import (
        SHARE,
        economics_finding,
        economics_table,
    )

    table, spec, out, text = quick_script("fast_mode_externality")
    economics = pd.read_csv(out / "economics.csv")
    assert list(economics.columns) == ["share", "group", *VALUE_COLUMNS]
    shares = sorted(set(table[SHARE]) - {0.0})
    assert sorted(set(economics["share"])) == shares
    by = economics.set_index(["share", "group"])
    for share in shares:
        team = _net_by_hand(table, SHARE, 0.0, share, spec)
        assert by.loc[(share, "team"), "net_usd_per_dev_day"] == pytest.approx(team)
        # net value is linear in tasks and spend: the team's is the head-count average of its groups'
        n_fast = round(share * spec.scenario.developers)
        groups = (
            n_fast * by.loc[(share, "fast"), "net_usd_per_dev_day"]
            + (spec.scenario.developers - n_fast) * by.loc[(share, "standard"), "net_usd_per_dev_day"]
        )
        assert groups / spec.scenario.developers == pytest.approx(team)
    assert "the team's net value is" in text and "the standard tier's net value is" in text

    # runs stored without the spend columns are re-analysed from usd_per_task × tasks_per_dev_day:
    # the same team economics, and the groups left out with a reason
    stored = table.drop(columns=["usd_per_dev_day", "fast_usd_per_dev_day", "standard_usd_per_dev_day"])
    again = economics_table(stored, spec)
    assert set(again["group"]) == {"team"}
    team_rows = economics[economics["group"] == "team"].reset_index(drop=True)
    pd.testing.assert_series_equal(
        again["net_usd_per_dev_day"].reset_index(drop=True),
        team_rows["net_usd_per_dev_day"],
        check_exact=False,
    )
    words = economics_finding(again, stored, spec.scenario.value.usd_per_dev_hour)
    assert "recorded no group's inference spend" in words and "left out" in words


def test_behaviour_table_splits_each_contrast_into_the_two_intervals() -> None:
    """Five members × three seeds, two arms: the table's differences are those of
    ``two_intervals`` on the member-and-seed pairs; a contrast over two columns names its levels by
    both values, and only the levels it says go into the finding's lines."""
    import numpy as np

    from speedtrap.analysis.intervals import two_intervals
    from speedtrap.experiments.canonical import Contrast, behaviour_lines, behaviour_table

    rng = np.random.default_rng(4)
    rows = []
    for member, effect in ((3, 1.0), (8, 2.5), (11, 1.5), (14, 0.5), (20, 2.0)):
        for seed in range(3):
            base = float(rng.normal(10.0, 1.0))
            for arm, speed, add in (("slow", 1.0, 0.0), ("fast", 2.0, effect + float(rng.normal(0, 0.2)))):
                rows.append(
                    {
                        "member": member,
                        "seed": 100 * member + seed,
                        "arm": arm,
                        "speed": speed,
                        "mult": 1.0,
                        "tasks": base + add,
                    }
                )
    table = pd.DataFrame(rows)
    out = behaviour_table(table, [Contrast("arm", "slow", ("tasks",))])
    fast = table[table["arm"] == "fast"].set_index(["member", "seed"])["tasks"]
    slow = table[table["arm"] == "slow"].set_index(["member", "seed"])["tasks"]
    d = (fast - slow).sort_index()
    expected = two_intervals(d.to_numpy(), d.index.get_level_values("member").to_numpy())
    row = out.iloc[0]
    assert row["arm"] == "fast" and row["baseline"] == "slow"
    assert row["mean"] == pytest.approx(expected.mean) and row["ci_low"] == pytest.approx(expected.seed_low)
    assert row["behaviour_high"] == pytest.approx(expected.behaviour_high)
    assert row["behaviour_low"] == pytest.approx(expected.behaviour_low)
    assert math.isfinite(row["behaviour_low"]) and row["members"] == 5
    pair = behaviour_table(
        table, [Contrast(("speed", "mult"), (1.0, 1.0), ("tasks",), label="as is", said=((3.0, 1.0),))]
    )
    assert list(pair["arm"]) == ["2 × 1"] and not pair["said"].any()
    assert behaviour_lines(pair) == []
    assert (
        "behavioural interval" in behaviour_lines(out)[0] and "fast against slow" in behaviour_lines(out)[0]
    )


def test_a_canonical_experiment_runs_under_an_ensemble_with_both_intervals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ten replications under a six-member ensemble: 5 members × 2 seeds, each member on its own
    seeds with its values applied (the experiment's factor kept), stored apart, and both intervals
    in behaviour.csv and the finding."""
    import speedtrap.experiments.canonical as canonical
    from speedtrap.experiments.ensemble import write_ensemble

    quick = load_spec("headline", quick=True)
    small = quick.model_copy(
        update={
            "replications": 10,
            "scenario": quick.scenario.with_overrides({"developers": 2, "horizon_s": 4 * 3600.0}),
        }
    )
    monkeypatch.setattr(canonical, "load_spec", lambda name, quick=False: small)
    patience = "developer.attention.patience_s.median"
    ensemble = write_ensemble(
        pd.DataFrame({"member": range(6), patience: [15.0, 300.0, 60.0, 30.0, 120.0, 500.0]}),
        tmp_path / "ens.csv",
    )
    report = canonical.run_canonical(
        "headline", quick=True, results_dir=tmp_path / "results", ensemble=ensemble, progress=False
    )
    stores = sorted(p.name for p in (tmp_path / "results" / f"{small.name}-members").iterdir())
    assert stores == [f"member-{k}" for k in (0, 1, 2, 4, 5)]  # 5 of the 6 members, evenly spread
    behaviour = pd.read_csv(tmp_path / "results" / small.name / "behaviour.csv")
    tasks = behaviour[(behaviour["arm"] == "gpu-fast") & (behaviour["outcome"] == "tasks_per_dev_day")].iloc[
        0
    ]
    assert tasks["members"] == 5 and tasks["seeds_per_member"] == 2 and tasks["n"] == 10
    assert math.isfinite(tasks["behaviour_low"]) and math.isfinite(tasks["ci_low"])
    assert "5 of them × 2 seeds each" in report.finding and "applied: " + patience in report.finding
    assert "Seed and behavioural intervals (behaviour.csv):" in report.finding
    seeds = {
        p.name: set(pd.read_parquet(p / "runs").seed)
        for p in (tmp_path / "results" / f"{small.name}-members").iterdir()
    }
    assert not seeds["member-0"] & seeds["member-2"]  # each member on seeds of its own
