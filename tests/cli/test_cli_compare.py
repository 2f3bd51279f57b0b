import json
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from speedtrap.cli import app
from speedtrap.config import Scenario
from speedtrap.config.experiment import Experiment
from speedtrap.experiments.runner import experiment_identity
from speedtrap.experiments.seeds import replication_seeds
from speedtrap.models import simulate

runner = CliRunner()
SMALL = ["--set", "developers=2", "--set", "horizon_s=7200"]


def test_compare_pairs_arms_on_the_same_seeds_and_prices_the_difference(tmp_path: Path) -> None:
    # the scenario's own parameter set: the runs below are those of the bare scenario
    args = [
        "compare",
        "--backend",
        "gpu-batched",
        "--backend",
        "gpu-fast",
        "--replications",
        "3",
        "--single",
        *SMALL,
    ]
    result = runner.invoke(app, [*args, "--set", "value.usd_per_dev_hour=100", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["baseline"] == "gpu-batched" and payload["arms"] == ["gpu-batched", "gpu-fast"]
    assert payload["value"]["usd_per_dev_hour"] == 100.0
    tasks = next(d for d in payload["differences"] if d["outcome"] == "tasks_per_dev_day")
    # the difference is paired: the mean of per-seed differences of the same seeds' runs
    scenario = Scenario(developers=2, horizon_s=7200.0)
    seeds = replication_seeds(0, 3)
    per_seed = [
        simulate(scenario.with_backend("gpu-fast"), s).summary()["tasks_per_dev_day"]
        - simulate(scenario.with_backend("gpu-batched"), s).summary()["tasks_per_dev_day"]
        for s in seeds
    ]
    assert payload["seeds"] == seeds
    assert abs(tasks["mean"] - sum(per_seed) / 3) < 1e-9
    assert tasks["caveat"] is not None and "3 replications" in tasks["caveat"]
    assert tasks["verdict"] in {"higher", "lower", "no detectable difference"}
    (economics,) = payload["economics"]
    assert economics["arm"] == "gpu-fast" and economics["pays"] in {
        "above",
        "below",
        "always",
        "never",
        "n/a",
    }
    assert "per developer-hour" in payload["finding"]

    figure = tmp_path / "cmp.png"
    result = runner.invoke(app, [*args, "--figure", str(figure)])
    assert result.exit_code == 0, result.output
    assert "Finding:" in result.stdout and "only 3 replications" in result.stdout
    assert "break-even" in result.stdout and figure.is_file()


def test_compare_arms_can_be_scenario_variants() -> None:
    result = runner.invoke(
        app,
        [
            "compare",
            "--backend",
            "gpu-batched",
            "--arm",
            "more-devs:developers=3",
            "--replications",
            "2",
            *SMALL[2:],
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["arms"] == ["gpu-batched", "more-devs"]


def test_compare_refuses_a_single_arm_and_a_bad_arm() -> None:
    result = runner.invoke(app, ["compare", "--backend", "gpu-batched"])
    assert result.exit_code == 2 and "at least two arms" in result.output
    result = runner.invoke(app, ["compare", "--backend", "gpu-batched", "--arm", "nolabel"])
    assert result.exit_code == 2 and "LABEL:" in result.output


def test_the_value_section_changes_neither_runs_nor_stored_identities() -> None:
    cheap = Scenario(developers=1, horizon_s=3600.0)
    dear = cheap.with_overrides({"value.usd_per_dev_hour": 500.0})
    assert simulate(cheap, 3).summary() == simulate(dear, 3).summary()
    base = Experiment.model_validate(
        {"name": "x", "scenario": cheap.model_dump(mode="json"), "replications": 1}
    )
    other = Experiment.model_validate(
        {"name": "x", "scenario": dear.model_dump(mode="json"), "replications": 1}
    )
    points = pd.DataFrame({"point": [0]})
    assert experiment_identity(base, points, [1], simulate) == experiment_identity(
        other, points, [1], simulate
    )


def test_sweep_cells_and_the_headline_finding_flag_unreliable_intervals() -> None:
    from speedtrap.cli.sweep import mean_pm as _mean_pm
    from speedtrap.experiments.canonical.headline import BASELINE, finding

    assert _mean_pm(15.25, -7.0, 37.5, 2, 1.0, "").endswith("(n=2)")
    assert _mean_pm(0.1538, 0.1538, 0.1538, 10, 100.0, "%").endswith("(zero width)")
    assert "(" not in _mean_pm(15.0, 14.0, 16.0, 10, 1.0, "")
    outcomes = ["tasks_per_dev_day", "usd_per_task", "fixing_share", "waiting_share", "share_switching"]
    summary = pd.DataFrame(
        {
            "backend": BASELINE,
            "outcome": outcomes,
            "n": 3,
            "mean": 1.0,
            "std": 0.0,
            "ci_low": 1.0,
            "ci_high": 1.0,
        }
    )
    paired = pd.DataFrame(
        {
            "backend": "gpu-fast", "outcome": outcomes, "n": 3, "baseline_mean": 1.0, "level_mean": 2.75,
            "mean": 1.75, "std": 0.0, "ci_low": 1.75, "ci_high": 1.75, "ratio": 2.75,
        }
    )  # fmt: skip
    assert "zero-width interval" in finding(summary, paired)


def test_compare_without_output_says_n_a_for_the_other_work_share(tmp_path: Path) -> None:
    """Ten minutes of one developer who never goes to other work (the scenario's own behaviour,
    ``--single``, with ``other_work_prob`` 0): no task finishes and nothing else is produced, so the
    other-work share has nothing to divide by; the table and the finding say "n/a" (they printed
    "nan%", found by the slow fuzz)."""
    scenario = tmp_path / "tiny.toml"
    scenario.write_text('name = "tiny"\ndevelopers = 1\nhorizon_s = 600.0\n', encoding="utf-8")
    args = [
        "compare",
        str(scenario),
        "--backend",
        "gpu-batched",
        "--backend",
        "gpu-fast",
        "--replications",
        "2",
        "--single",
        "--set",
        "developer.attention.other_work_prob=0",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "nan" not in result.stdout.lower()
    assert "other work while agents run is n/a of its output" in " ".join(result.stdout.split())
