"""``speedtrap validate serving`` and the serving options of ``speedtrap pareto``."""

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from speedtrap.cli import app
from speedtrap.config import hardware_preset, llm_preset
from speedtrap.config.hardware import FITTED_ROWS
from speedtrap.serving.pareto import pareto_frontier
from speedtrap.serving.replica import ReplicaPhysics
from speedtrap.validation.serving import load_measurements, validate_serving
from speedtrap.validation.serving_table import row_spec_toml, ttft_is_median

runner = CliRunner()


def test_validate_serving_json_covers_every_row(tmp_path: Path) -> None:
    # --in-sample-only skips the leave-one-group-out refits (tests/validation runs them)
    figure = tmp_path / "fig.png"
    result = runner.invoke(
        app, ["validate", "serving", "--json", "--in-sample-only", "--figure", str(figure)]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["schema_version"] == 3
    kinds = {(r["by"], r["name"], r["metric"]) for r in payload["by_vendor_and_stack"]}
    for metric in ("tok_s_per_gpu", "tok_s_per_user", "ttft_s"):
        assert ("vendor", "NVIDIA", metric) in kinds and ("stack", "vLLM", metric) in kinds
    assert all(r["groups"] >= 1 and r["rows"] >= r["groups"] for r in payload["by_vendor_and_stack"])
    table = load_measurements()
    assert {row["id"] for row in payload["rows"]} == set(table["id"])
    assert set(payload["groups"]) == set(table["group"]) and len(payload["sources"]) >= 6
    assert {(s["fit"], s["metric"]) for s in payload["summary"]} == {
        ("in_sample", "tok_s_per_user"),
        ("in_sample", "tok_s_per_gpu"),
        ("in_sample", "ttft_s"),
    }
    assert {r["comparison"] for r in payload["rows"]} == {
        "equal_interactivity",
        "equal_throughput",
        "at_concurrency",
    }
    assert payload["fit"]["date"] and payload["fit"]["rows"] == FITTED_ROWS < len(table)
    assert payload["targets"]["worst_abs_error"] == 1.0  # serving physics v3's acceptance
    assert figure.stat().st_size > 10_000


def test_validate_serving_table_prints_errors_and_medians() -> None:
    result = runner.invoke(app, ["validate", "serving", "--no-figure", "--in-sample-only"])
    assert result.exit_code == 0, result.output
    assert "in_sample" in result.stdout and "median" in result.stdout and "%" in result.stdout
    assert "equal interactivity" in result.stdout and "Targets" in result.stdout
    assert "per serving stack" in result.stdout and "SGLang" in result.stdout and "TTFT" in result.stdout


@pytest.mark.parametrize(
    "row_id",
    [
        "ix-dsr1-mi300x-sglang-8k1k",
        "ix-gptoss-b200-trt-8k1k",
        "sglang-dsv3-h100-ep72-decode",
        "groq-mixtral-8x7b",
    ],
)
def test_pareto_reproduces_a_validation_row_from_its_spec_file(tmp_path: Path, row_id: str) -> None:
    # everything validate uses is expressible in a pareto spec, with the same defaults
    table = load_measurements()
    subset = table[table["id"] == row_id]
    row = next(subset.itertuples(index=False))
    spec = tmp_path / "row.toml"
    spec.write_text(row_spec_toml(row))
    check = validate_serving(table=subset, cross_validate=False)
    at = check[check["comparison"] == "at_concurrency"].set_index("metric")["predicted"]
    chips = int(check["chips"].iloc[0])
    batch = int(row.concurrency)
    shape = (
        ["--context", str(int(row.isl))]
        if math.isnan(row.osl)
        else ["--isl", str(int(row.isl)), "--osl", str(int(row.osl))]
    )
    args = ["pareto", "--spec", str(spec), "--chips", str(chips), *shape, "--batch", str(batch), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    point = json.loads(result.stdout)["points"][0]
    ttft_key = "ttft_median_s" if ttft_is_median(row) else "ttft_s"  # the statistic the source printed
    for metric, key in (
        ("tok_s_per_user", "tok_s_per_user"),
        ("tok_s_per_gpu", "tok_s_per_chip"),
        ("ttft_s", ttft_key),
    ):
        if metric in at.index:
            assert point[key] == pytest.approx(at[metric], rel=1e-9), metric


def test_pareto_explains_fast_mode_mechanism_by_mechanism() -> None:
    result = runner.invoke(app, ["pareto", "--explain", "gpu-fast", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert (payload["fast"], payload["standard"]) == ("gpu-fast", "gpu-batched")
    mechanisms = {m["mechanism"]: m for m in payload["mechanisms"]}
    assert set(mechanisms) == {
        "smaller batch",
        "priority admission",
        "speculative decoding",
        "newer hardware",
    }
    assert sum(m["share"] for m in mechanisms.values()) == pytest.approx(1.0)
    assert mechanisms["smaller batch"]["share"] == pytest.approx(1.0)  # the preset differs only in its batch
    assert payload["speedup"] == pytest.approx(2.34, abs=0.01)  # 145.5 / 62.3 tok/s per stream
    table = runner.invoke(
        app, ["pareto", "--explain", "gpu-fast", "--isl", "9600", "--osl", "213", "--cached", "86294"]
    )
    assert table.exit_code == 0, table.output
    assert "priority admission" in table.stdout and "steady load" in table.stdout
    # both tiers draft: the line says which part of the speeds rests on the assumed drafting
    assert "Fitted terms only (no drafting): gpu-batched 39.2, gpu-fast 86.7" in " ".join(
        table.stdout.split()
    )
    plain = runner.invoke(app, ["pareto", "--explain", "gpu-fast"], catch_exceptions=False)
    assert "(2.21×); with the assumed drafting (α=0.65): 62.3 and 145.5 (2.34×)" in " ".join(
        plain.stdout.split()
    )


def test_explain_needs_a_preset_with_a_standard_counterpart() -> None:
    result = runner.invoke(app, ["pareto", "--explain", "gpu-batched"])
    assert result.exit_code == 2
    assert "no standard-tier preset" in result.stderr


def test_pareto_cached_context_shortens_nothing_but_adds_kv() -> None:
    base = [
        "pareto",
        "--model",
        "qwen3-32b",
        "--hardware",
        "h200",
        "--chips",
        "4",
        "--isl",
        "2000",
        "--osl",
        "200",
    ]
    plain = json.loads(runner.invoke(app, [*base, "--batch", "8", "--json"]).stdout)
    cached = json.loads(runner.invoke(app, [*base, "--cached", "20000", "--batch", "8", "--json"]).stdout)
    assert cached["cached_tokens"] == 20000 and cached["context_tokens"] > plain["context_tokens"]
    assert cached["points"][0]["tok_s_per_user"] < plain["points"][0]["tok_s_per_user"]


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
    assert payload["cached_tokens"] == 0
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


def test_pareto_spec_takes_layout_disaggregation_and_drafting(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[model]\npreset = "deepseek-r1"\n[hardware]\npreset = "h100-sxm"\n'
        "[parallel]\nattention_data_parallel = 16\nexpert_parallel = 16\ndispatch_bytes = 1.0\n"
        "[disaggregation]\nprefill_chips = 16\nprefill_instance_chips = 8\n"
        "[speculative]\nacceptance_rate = 0.8\ndraft_tokens = 1\n"
    )
    args = ["pareto", "--spec", str(spec), "--chips", "16", "--isl", "2000", "--osl", "500", "--batch", "256"]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    point = json.loads(result.stdout)["points"][0]
    # per chip counts the prefill pool: 32 chips for this replica
    assert point["tok_s_per_replica"] == pytest.approx(32 * point["tok_s_per_chip"])
    bad = tmp_path / "bad.toml"
    bad.write_text(
        '[model]\npreset = "deepseek-r1"\n[hardware]\npreset = "h100-sxm"\n[parallel]\nexpert_parallel = 3\n'
    )
    result = runner.invoke(app, ["pareto", "--spec", str(bad), "--chips", "16", "--context", "2000"])
    assert result.exit_code == 2 and "does not divide" in result.stderr


def test_isl_without_osl_is_bad_input() -> None:
    result = runner.invoke(app, ["pareto", "--model", "qwen3-32b", "--hardware", "h200", "--isl", "100"])
    assert result.exit_code == 2
    assert "--isl and --osl together" in result.stderr


def test_pareto_help_says_time_to_first_token_queues_as_the_code_does() -> None:
    # the help once said "no network or queueing" while steady_load queued prompts for the prefill
    text = " ".join(runner.invoke(app, ["pareto", "--help"], env={"COLUMNS": "200"}).stdout.split())
    assert "no network or queueing" not in text
    assert "queues: for the prefill server" in text
    # and the code does queue: under load the mean first token waits, the unloaded one does not
    args = ["pareto", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--json"]
    loaded = json.loads(runner.invoke(app, [*args, "--isl", "4000", "--osl", "200"]).stdout)["points"]
    assert loaded[-1]["ttft_s"] > loaded[-1]["ttft_median_s"] > 0
    plain = json.loads(runner.invoke(app, args).stdout)["points"]
    assert all(p["ttft_s"] == p["ttft_median_s"] for p in plain)
