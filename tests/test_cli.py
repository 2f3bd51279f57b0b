import json

import pytest
from typer.testing import CliRunner

from speedtrap.cli import app
from speedtrap.config import BACKEND_PRESETS
from speedtrap.serving.pareto import pareto_frontier
from speedtrap.serving.replica import ReplicaPhysics

runner = CliRunner()

BACKEND_KEYS = {
    "name", "hardware", "model", "chips_per_replica", "replicas", "typical_batch", "typical_context_tokens",
    "kv_batch_cap", "tok_s_per_stream", "ttft_s", "tok_s_per_chip", "bound", "tier", "price_multiplier",
    "input_usd_per_mtok", "output_usd_per_mtok", "failure_multiplier", "tool_error_prob",
}  # fmt: skip


def test_backends_json_matches_the_physics() -> None:
    result = runner.invoke(app, ["backends", "--json", "--uncached-tokens", "2000"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["schema_version"] == 1 and payload["uncached_tokens"] == 2000
    rows = {row["name"]: row for row in payload["backends"]}
    assert set(rows) == set(BACKEND_PRESETS)
    for name, backend in BACKEND_PRESETS.items():
        row = rows[name]
        assert set(row) == BACKEND_KEYS
        physics = ReplicaPhysics.from_backend(backend)
        batch, context = backend.typical_batch, backend.typical_context_tokens
        assert row["tok_s_per_stream"] == pytest.approx(physics.decode_rate_tok_s(batch, context))
        assert row["tok_s_per_chip"] == pytest.approx(physics.throughput_tok_s_per_chip(batch, context))
        assert row["ttft_s"] == pytest.approx(physics.ttft_s(2000))
        assert row["chips_per_replica"] == backend.chips
    assert rows["gpu-fast"]["output_usd_per_mtok"] == 150.0
    assert rows["gpu-fast"]["price_multiplier"] == 6.0
    assert rows["wafer-distilled"]["failure_multiplier"] == 1.2


def test_backends_table_has_units_in_headers() -> None:
    result = runner.invoke(app, ["backends"])
    assert result.exit_code == 0, result.output
    for text in ("gpu-batched", "gpu-fast", "wafer-distilled", "tok/s per stream", "TTFT (s)", "($/MTok)"):
        assert text in result.stdout


def test_pareto_json_matches_the_frontier() -> None:
    result = runner.invoke(
        app, ["pareto", "--model", "llama-3.1-70b", "--hardware", "h200", "--context", "32000", "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert (payload["model"], payload["hardware"], payload["context_tokens"]) == (
        "llama-3.1-70b",
        "h200",
        32000,
    )
    assert payload["chips_per_replica"] == 2  # 141 GB of weights + one stream: two 141 GB H200s
    from speedtrap.config import hardware_preset, llm_preset

    physics = ReplicaPhysics.from_parts(hardware_preset("h200"), llm_preset("llama-3.1-70b"), 2)
    expected = pareto_frontier(physics, 32_000)
    assert [p["batch"] for p in payload["points"]] == expected["batch"].tolist()
    assert payload["kv_batch_cap"] == expected["batch"].iloc[-1]
    for point, row in zip(payload["points"], expected.itertuples(), strict=True):
        assert point["tok_s_per_user"] == pytest.approx(row.tok_s_per_user)
        assert point["tok_s_per_chip"] == pytest.approx(row.tok_s_per_chip)
        assert point["bound"] == row.bound


def test_pareto_table_and_default_context() -> None:
    result = runner.invoke(app, ["pareto", "--model", "qwen3-32b", "--hardware", "h100-sxm"])
    assert result.exit_code == 0, result.output
    assert "qwen3-32b on 2× h100-sxm at 32,768 context tokens" in result.stdout  # min(96k, window)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--model", "gpt-9", "--hardware", "h100-sxm"],
            "unknown model preset 'gpt-9' (known: distilled-moe",
        ),
        (["--model", "llama-3.1-8b", "--hardware", "tpu"], "unknown hardware preset 'tpu' (known: b200"),
        (
            ["--model", "llama-3.1-405b", "--hardware", "h100-sxm", "--chips", "8"],
            "chips_per_replica: model llama-3.1-405b needs",
        ),
        (["--model", "frontier-moe", "--hardware", "h100-sxm", "--chips", "8"], "computes in fp4"),
    ],
)
def test_bad_input_is_one_line_on_stderr_with_exit_code_2(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["pareto", *args])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: ")
    assert message in result.stderr
    assert "Traceback" not in result.stderr
