import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import typer.main
from typer.testing import CliRunner

from speedtrap.cli import HEADLINE_SCENARIO, app, count_progress, parse_set
from speedtrap.config import BACKEND_PRESETS, Scenario
from speedtrap.models import SUMMARY_KEYS, simulate
from speedtrap.serving.pareto import pareto_frontier
from speedtrap.serving.replica import ReplicaPhysics

runner = CliRunner()

BACKEND_KEYS = {
    "name", "hardware", "model", "chips_per_replica", "serving_chips", "replicas", "typical_batch",
    "typical_context_tokens", "kv_batch_cap", "tok_s_per_stream", "ttft_s", "tok_s_per_chip", "bound", "tier",
    "price_multiplier",
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
        assert row["serving_chips"] == physics.counted_chips
    assert rows["gpu-batched"]["serving_chips"] == 24  # 8 decode GPUs and a 16-GPU prefill pool
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
            "unknown model preset 'gpt-9' (known: deepseek-r1, distilled-moe",
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


# --- run and demo -------------------------------------------------------------------------------

TINY = ["--set", "developers=2", "--set", "horizon_s=3600.0"]


def test_run_json_is_the_summary_of_the_same_simulation() -> None:
    result = runner.invoke(app, ["run", *TINY, "--seed", "3", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["schema_version"] == 1 and payload["seed"] == 3 and payload["scenario"] == "default"
    expected = simulate(Scenario(name="default", developers=2, horizon_s=3600.0), 3).summary()
    assert list(payload["summary"]) == list(SUMMARY_KEYS)
    assert payload["summary"] == pytest.approx(expected, nan_ok=True)


def test_run_backend_option_serves_the_same_tasks_with_another_backend(tmp_path: Path) -> None:
    scenario_file = tmp_path / "s.toml"
    scenario_file.write_text('name = "two"\ndevelopers = 2\nhorizon_s = 3600.0\n')
    out = {}
    for backend in ("gpu-batched", "wafer-distilled"):
        result = runner.invoke(app, ["run", str(scenario_file), "--backend", backend, "--json"])
        assert result.exit_code == 0, result.output
        out[backend] = json.loads(result.stdout)["summary"]
    assert out["wafer-distilled"]["mean_decode_tok_s"] > 10 * out["gpu-batched"]["mean_decode_tok_s"]


def test_run_reports_progress_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    quiet = runner.invoke(app, ["run", *TINY])  # the test runner's stderr is no terminal
    assert quiet.exit_code == 0, quiet.output
    assert "simulated" not in quiet.stderr
    monkeypatch.setattr("speedtrap.cli.common.stderr_is_terminal", lambda: True)
    shown = runner.invoke(app, ["run", *TINY])
    assert shown.exit_code == 0, shown.output
    assert "simulated 50% of 0.25 developer-days" in shown.stderr  # 2 developers × 1 h of an 8-h day
    assert shown.stderr.rstrip().endswith("simulated 100% of 0.25 developer-days")
    assert shown.stdout == quiet.stdout  # the same run and tables
    as_json = runner.invoke(app, ["run", *TINY, "--json"])
    assert as_json.exit_code == 0 and "simulated" not in as_json.stderr


def test_count_progress_writes_one_updating_line_on_a_terminal_only(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert count_progress("replications done:") is None  # pytest's stderr is no terminal
    monkeypatch.setattr("speedtrap.cli.common.stderr_is_terminal", lambda: True)
    assert count_progress("replications done:", enabled=False) is None  # e.g. with --json
    report = count_progress("replications done:")
    assert report is not None
    report(1, 3)
    report(2, 3, "gpu-fast")
    report(3, 3, "gpu")  # shorter: padded over the longer line's end
    assert capsys.readouterr().err == (
        "\rreplications done: 1/3\rreplications done: 2/3 (gpu-fast)\rreplications done: 3/3 (gpu)     \n"
    )


def test_run_table_shows_every_ledger_category() -> None:
    result = runner.invoke(app, ["run", *TINY])
    assert result.exit_code == 0, result.output
    for label in ("prompting", "waiting: generation", "fixing", "switching (resumption)", "idle"):
        assert label in result.stdout
    assert "tasks completed per developer-day" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "developer.attention.flow_threshold_s=soon"], "developer.attention.flow_threshold_s"),
        (["--set", "developer.atention.flow_threshold_s=5"], "developer.atention"),
        (["--set", "developers"], "expected path.to.field=value"),
        (["--set", "developers=0"], "developers"),
        (["--backend", "gpu-warp"], "gpu-warp"),
        (["no-such-file.toml"], "no such scenario file"),
    ],
)
def test_run_bad_input_is_one_line_naming_the_field(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["run", *args])
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output


def test_run_rejects_a_scenario_file_with_an_unknown_field(tmp_path: Path) -> None:
    scenario_file = tmp_path / "bad.toml"
    scenario_file.write_text("developers = 2\n[developer]\npatience_s = 3\n")
    result = runner.invoke(app, ["run", str(scenario_file)])
    assert result.exit_code == 2
    assert "developer.patience_s" in result.stderr


def test_set_values_are_read_as_toml() -> None:
    assert parse_set("horizon_s=3600") == ("horizon_s", 3600)
    assert parse_set("policy.backend=gpu-fast") == ("policy.backend", "gpu-fast")
    assert parse_set('name="x y"') == ("name", "x y")
    assert parse_set("task_mix.output_tokens={median = 300.0, sigma = 1.0}") == (
        "task_mix.output_tokens",
        {"median": 300.0, "sigma": 1.0},
    )


def test_headline_file_states_the_specs_defaults() -> None:
    headline = Scenario.from_toml(HEADLINE_SCENARIO)
    default_median = Scenario().developer.fixing.hand_fix_s.median  # the file rounds it to 0.01 s
    assert headline.developer.fixing.hand_fix_s.median == pytest.approx(default_median, abs=0.01)
    same = {
        "name": "scenario",
        "policy.backend": None,
        "developer.fixing.hand_fix_s.median": default_median,
        "developers": 20,  # the headline team and horizon are the file's own choice
        "horizon_s": 144_000.0,
        # today's agentic developer: heavy-tailed stretches, several transcripts a session and parallel
        # sessions in the logs' shares, which the spec's defaults leave off
        "developer.stretch_sigma": 0.0,
        "developer.stretches_per_transcript": None,
        "developer.attention.parallel_sessions_probs": None,
    }
    assert headline.with_overrides(same) == Scenario()


def test_demo_quick_writes_the_figure_and_table(tmp_path: Path) -> None:
    result = runner.invoke(app, ["demo", "--quick", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    for name in ("summary.csv", "ledger.png", "ledger.svg"):
        assert (tmp_path / name).stat().st_size > 0
    frame = pd.read_csv(tmp_path / "summary.csv")
    assert list(frame["backend"]) == ["gpu-batched", "gpu-fast", "wafer-distilled"]
    speeds = frame.set_index("backend")["mean_decode_tok_s"]
    assert speeds["gpu-batched"] < speeds["gpu-fast"] < speeds["wafer-distilled"]
    assert "Finding:" in result.stdout and "wafer-distilled" in result.stdout


def _strict_json(text: str) -> object:
    def refuse(constant: str) -> None:
        raise ValueError(f"non-standard JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


def test_run_json_is_strict_when_an_outcome_has_no_value() -> None:
    # every tool call malformed: no session ends, so there is no cost per task (null, not NaN)
    sets = ["developers=2", "horizon_s=1800", "backends.gpu-batched.quality.tool_error_prob=1.0"]
    result = runner.invoke(app, ["run", "--json", *(a for s in sets for a in ("--set", s))])
    assert result.exit_code == 0, result.output
    payload = _strict_json(result.stdout)
    assert payload["summary"]["usd_per_task"] is None  # type: ignore[index]


def test_an_error_raised_during_the_run_is_one_line_naming_the_field() -> None:
    sets = ["developers=1", "horizon_s=600", "task_mix.output_tokens.median=1e12"]
    result = runner.invoke(app, ["run", *(a for s in sets for a in ("--set", s))])
    assert result.exit_code == 2
    message = result.stderr.strip()
    assert "\n" not in message and "could never be admitted" in message
    assert "backends.gpu-batched" in message and "task_mix.output_tokens" in message


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command and group under ``command`` with its argument path (the root is ``()``)."""
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


def _paragraphs_on_one_line(text: str | None) -> bool:
    return not text or all("\n" not in p for p in text.split("\n\n"))


def test_every_help_reads_cleanly_at_a_fixed_width() -> None:
    commands = list(_commands(typer.main.get_command(app)))
    assert {path for path, _ in commands} >= {("sweep",), ("pareto",), ("validate", "serving")}
    width = 100
    for path, command in commands:
        # typer keeps single line breaks of rich-markup help: each paragraph must be one line
        assert _paragraphs_on_one_line(command.help) and _paragraphs_on_one_line(command.short_help), path
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": str(width)})
        assert result.exit_code == 0, (path, result.output)
        text = result.stdout
        assert "<bool>" not in text, path  # a flag takes no value
        assert "``" not in text, path  # no raw reStructuredText
        lines = text.splitlines()
        for line in lines:
            assert not re.search(r" \.\s*(│|$)", line), (path, line)  # a sentence cut by swallowed markup
        prose = [line.rstrip() for line in lines if not line.lstrip().startswith(("│", "╭", "╰"))]
        for line, following in itertools.pairwise(prose):
            if line.strip() and following.strip():  # a line broken although the next word would fit
                assert len(line) + 1 + len(following.split()[0]) > width - 2, (path, line)
    pareto = runner.invoke(app, ["pareto", "--help"], env={"COLUMNS": "200"}).stdout
    assert "tokens [default: min(96000, window)]." in pareto  # bracketed notes are shown, not swallowed
    assert (
        "(pip install 'speedtrap[app]')"
        in runner.invoke(app, ["app", "--help"], env={"COLUMNS": "200"}).stdout
    )
