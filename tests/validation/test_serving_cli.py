"""``speedtrap validate serving`` and the serving options of ``speedtrap pareto``."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from speedtrap.cli import app
from speedtrap.config import hardware_preset, llm_preset
from speedtrap.serving.pareto import pareto_frontier
from speedtrap.serving.replica import ReplicaPhysics
from speedtrap.validation.serving import load_measurements

runner = CliRunner()


def test_validate_serving_json_covers_every_row_and_both_parts(tmp_path: Path) -> None:
    figure = tmp_path / "fig.png"
    result = runner.invoke(app, ["validate", "serving", "--json", "--figure", str(figure)])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["schema_version"] == 1
    assert {row["id"] for row in payload["rows"]} == set(load_measurements()["id"])
    assert {(s["part"], s["metric"]) for s in payload["summary"]} >= {
        ("heldout", "tok_s_per_user"),
        ("heldout", "tok_s_per_gpu"),
        ("calibration", "tok_s_per_user"),
    }
    assert payload["fit"]["ids"] and payload["fit"]["date"]
    assert figure.stat().st_size > 10_000


def test_validate_serving_table_prints_errors_and_medians() -> None:
    result = runner.invoke(app, ["validate", "serving", "--no-figure"])
    assert result.exit_code == 0, result.output
    assert "heldout" in result.stdout and "median" in result.stdout and "%" in result.stdout


def test_pareto_takes_a_toml_spec_precisions_lengths_and_batches(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[model]\npreset = "qwen3-32b"\nbytes_per_param = 1.0\ncompute_dtype = "fp8"\n'
        '[hardware]\npreset = "h200"\n'
    )
    args = ["pareto", "--spec", str(spec), "--chips", "4", "--isl", "4000", "--osl", "500", "--kv-bytes", "1"]
    result = runner.invoke(app, [*args, "--batch", "11", "--batch", "20", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert (payload["isl_tokens"], payload["osl_tokens"], payload["chips_per_replica"]) == (4000, 500, 4)
    assert [p["batch"] for p in payload["points"]] == [11, 20]
    llm = llm_preset("qwen3-32b").with_overrides(
        {"bytes_per_param": 1.0, "compute_dtype": "fp8", "kv_bytes_per_element": 1.0}
    )
    physics = ReplicaPhysics.from_parts(hardware_preset("h200"), llm, 4)
    expected = pareto_frontier(physics, 0, [11, 20], isl=4000, osl=500, usd_per_chip_hour=3.5)
    for point, row in zip(payload["points"], expected.itertuples(), strict=True):
        assert point["tok_s_per_user"] == pytest.approx(row.tok_s_per_user)
        assert point["tok_s_per_chip"] == pytest.approx(row.tok_s_per_chip)
        assert point["ttft_s"] == pytest.approx(row.ttft_s)
        assert point["cost_usd_per_mtok"] == pytest.approx(row.cost_usd_per_mtok)
    assert "only the batches given" in payload["warning"]


def test_a_one_point_frontier_says_why() -> None:
    result = runner.invoke(
        app, ["pareto", "--model", "llama-3.1-70b", "--hardware", "h100-sxm", "--context", "8000"]
    )
    assert result.exit_code == 0, result.output
    assert "warning: only 1 point(s): the KV-memory cap" in result.stderr


def test_moe_expert_options_change_the_weight_read() -> None:
    base = [
        "pareto",
        "--model",
        "gpt-oss-120b",
        "--hardware",
        "b200",
        "--chips",
        "1",
        "--context",
        "2000",
        "--batch",
        "64",
        "--json",
    ]
    sparse = json.loads(runner.invoke(app, base).stdout)["points"][0]
    # the same active parameters over two experts per token: 64 streams touch fewer distinct experts
    fewer = json.loads(runner.invoke(app, [*base, "--experts-per-token", "2"]).stdout)["points"][0]
    assert fewer["tok_s_per_user"] > sparse["tok_s_per_user"]


def test_isl_without_osl_is_bad_input() -> None:
    result = runner.invoke(app, ["pareto", "--model", "qwen3-32b", "--hardware", "h200", "--isl", "100"])
    assert result.exit_code == 2
    assert "--isl and --osl together" in result.stderr
