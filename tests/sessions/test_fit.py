"""Fitting: logs simulated from a known scenario (exported to the trace format) are fitted back,
and every fitted parameter's interval holds the truth; the fitted scenario file says what was
fitted and loads back."""

import json
import math
import re
import tomllib
from pathlib import Path
from typing import get_args

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from speedtrap.cli import app
from speedtrap.cli.common import LogFormat
from speedtrap.config.scenario import Scenario
from speedtrap.models.workflow import simulate
from speedtrap.sessions import (
    LOG_FORMATS,
    Sessions,
    fit_lognormal,
    fit_scenario,
    load_sessions,
    scenario_toml,
    trace_from_result,
)
from speedtrap.sessions.check import CHECKS
from speedtrap.sessions.fit import fit_checkin_every, max_parallel

TRUTH = Scenario.model_validate(
    {
        "name": "truth",
        "developers": 4,
        "horizon_s": 3 * 28_800.0,
        "task_mix": {
            "turns_exponent": 0.0,
            "turns_at_reference": 12.0,
            "turns_log_sd": 0.5,
            "initial_context_tokens": {"median": 50_000, "sigma": 0.3},
            "output_tokens": {"median": 200, "sigma": 1.0},
            "tool_result_tokens": {"median": 1_500, "sigma": 1.0},
            "tool_s": {"median": 4.0, "sigma": 1.4},
        },
        # No wrong results and no malformed tool calls: every session runs its drawn turns.
        "backends": {
            "gpu-batched": {
                "preset": "gpu-batched",
                "quality": {"failure_multiplier": 0.0, "tool_error_prob": 0.0},
            }
        },
        # No resumption lag and away episodes of a millisecond: the gap between the agent's stop and
        # the hand-back is the check-in (a file cannot say "no away episodes": TOML has no null).
        "developer": {
            "checkin_every_turns": 4,
            "checkin_random": True,
            "checkin_s": {"median": 30.0, "sigma": 1.0},
            "attention": {
                "resumption_short_s": 0.0,
                "resumption_max_s": 0.0,
                "away_s": {"median": 0.001, "sigma": 0.0},
            },
        },
    }
)
TRUE_VALUES = {
    ("task_mix.turns", "median"): 12.0,
    ("task_mix.turns", "sigma"): 0.5,
    ("task_mix.initial_context_tokens", "median"): 50_000.0,
    ("task_mix.initial_context_tokens", "sigma"): 0.3,
    ("task_mix.output_tokens", "median"): 200.0,
    ("task_mix.output_tokens", "sigma"): 1.0,
    ("task_mix.tool_result_tokens", "median"): 1_500.0,
    ("task_mix.tool_result_tokens", "sigma"): 1.0,
    ("task_mix.tool_s", "median"): 4.0,
    ("task_mix.tool_s", "sigma"): 1.4,
    ("developer.prompt_s", "median"): TRUTH.developer.prompt_s.median,
    ("developer.prompt_s", "sigma"): TRUTH.developer.prompt_s.sigma,
    ("developer.checkin_s", "median"): 30.0,
    ("developer.checkin_s", "sigma"): 1.0,
    ("developer.checkin_every_turns", "mean"): 4.0,
}
FAMILY_LEVEL = 1.0 - 0.05 / len(TRUE_VALUES)
"""Intervals at a family-wise 95% (Bonferroni over the 15 parameters): all must hold the truth."""


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory: pytest.TempPathFactory) -> tuple[Sessions, object]:
    """The truth simulated, written as a CSV trace, loaded and fitted."""
    path = tmp_path_factory.mktemp("round_trip") / "trace.csv"
    trace_from_result(simulate(TRUTH, 3)).to_csv(path, index=False)
    sessions = load_sessions([path])
    return sessions, fit_scenario(sessions, TRUTH, level=FAMILY_LEVEL)


def test_round_trip_intervals_hold_the_true_parameters(round_trip) -> None:
    sessions, fitted = round_trip
    assert not sessions.report.skipped
    assert sessions.n_sessions > 500
    table = fitted.table().set_index(["field", "parameter"])
    for key, truth in TRUE_VALUES.items():
        row = table.loc[key]
        assert row["ci_low"] <= truth <= row["ci_high"], (
            key,
            truth,
            row["estimate"],
            row["ci_low"],
            row["ci_high"],
        )
    assert fitted.scenario.developer.attention.parallel_sessions_probs == [1.0]
    assert fitted.scenario.developers == 4


def test_round_trip_fits_pass_ks(round_trip) -> None:
    _, fitted = round_trip
    for path, fit in fitted.fits.items():
        if fit.law == "lognormal" and path != "task_mix.turns":  # turns are whole numbers
            assert fit.ks_p > 0.01, (path, fit.ks_stat, fit.ks_p)


def test_fitted_toml_comments_every_fitted_value_and_loads_back(round_trip, tmp_path: Path) -> None:
    _, fitted = round_trip
    text = scenario_toml(fitted, "header line")
    path = tmp_path / "fitted.toml"
    path.write_text(text)
    assert Scenario.from_toml(path) == fitted.scenario
    lines = text.splitlines()
    commented = [lines[i + 1] for i, line in enumerate(lines[:-1]) if line.startswith("# fitted")]
    assert len(commented) == len(fitted.values)
    assert all(
        f"from {fitted.n_sessions} sessions" in lines[i]
        for i, line in enumerate(lines)
        if line.startswith("# fitted")
    )
    tomllib.loads(text)


def test_lognormal_interval_covers_at_its_level() -> None:
    """Coverage of the median interval over 400 samples of 30 is 95% within sampling error."""
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(400):
        fit = fit_lognormal("x", 7.0 * np.exp(0.8 * rng.standard_normal(30)))
        assert fit is not None
        hits += fit.ci["median"][0] <= 7.0 <= fit.ci["median"][1]
    assert abs(hits / 400 - 0.95) <= 4 * math.sqrt(0.95 * 0.05 / 400)


def test_censored_geometric_uses_only_check_ins_as_events() -> None:
    # One session: stretches of 3 (check-in), 1 (check-in), 4 (the session ends: censored).
    rows = [(0.0 if k not in (0, 3, 4) else 5.0) for k in range(8)]
    trace = pd.DataFrame(
        {
            "developer": "d",
            "session": "s",
            "start_s": np.arange(8.0) * 10,
            "end_s": np.arange(8.0) * 10 + 1,
            "human_gap_s": rows,
        }
    )
    fit = fit_checkin_every(trace)
    assert fit is not None and fit.n == 2
    assert fit.params["mean"] == pytest.approx(1 + (2 + 0 + 3) / 2)


def test_most_sessions_open_at_once() -> None:
    trace = pd.DataFrame(
        {
            "developer": ["a", "a", "a", "b"],
            "session": ["1", "2", "3", "4"],
            "start_s": [0.0, 5.0, 10.0, 0.0],
            "end_s": [6.0, 10.0, 12.0, 1.0],
        }
    )
    assert max_parallel(trace).to_dict() == {"a": 2, "b": 1}


def test_fit_command_writes_scenario_and_figure(examples: Path, tmp_path: Path) -> None:
    out = tmp_path / "me.toml"
    result = CliRunner().invoke(app, ["fit", str(examples / "trace.csv"), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    trace = pd.read_csv(examples / "trace.csv")  # the fixture's own counts (scripts/make_session_fixtures.py)
    assert payload["sessions"] == trace.groupby(["developer", "session"]).ngroups
    assert payload["developers"] == trace["developer"].nunique() == 2
    fitted = Scenario.from_toml(out)
    assert fitted.developers == 2
    # A few hours of open sessions (under the 8 h needed): too little to fit how many sessions a
    # developer keeps open
    assert fitted.developer.attention.parallel_sessions_probs is None
    kept = re.search(
        r"# kept: developer.attention.parallel_sessions_probs: too little data: ([\d.]+) h", out.read_text()
    )
    assert kept is not None and float(kept.group(1)) < 8.0
    assert (tmp_path / "me_qq.png").stat().st_size > 0


def test_fit_command_reports_what_it_skipped(examples: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["fit", str(examples / "awkward"), "--out", str(tmp_path / "f.toml")])
    assert result.exit_code == 0, result.output
    assert "skipped 1 lines that are not JSON" in result.output
    assert "skipped 1 truncated last lines" in result.output


def test_fit_command_without_requests_fails_in_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("session,start_s,end_s,input_tokens,output_tokens\n")
    result = CliRunner().invoke(app, ["fit", str(empty), "--out", str(tmp_path / "f.toml")])
    assert result.exit_code == 2 and "no usable request" in result.output


REAL = Path(__file__).resolve().parent / "data" / "real"


def test_fit_command_prints_the_load_report_and_kept_fields_and_checks_itself(tmp_path: Path) -> None:
    out = tmp_path / "me.toml"
    result = CliRunner().invoke(app, ["fit", str(REAL), "--out", str(out), "--check"])
    assert result.exit_code == 0, result.output
    assert (
        "1 Codex CLI or Desktop rollout file(s)" in result.output
        and "Claude Code transcript file(s)" in result.output
    )
    assert "Kept at the base value (the logs cannot fit them):" in result.output
    assert "developer.prompt_s: the logs do not record" in result.output
    assert "Does the fitted scenario reproduce its own logs?" in result.output
    assert "measures within tolerance" in result.output
    payload = json.loads(
        CliRunner().invoke(app, ["fit", str(REAL), "--out", str(out), "--check", "--json"]).output
    )
    assert payload["report"] and "developer.prompt_s" in payload["kept"]
    assert [row["measure"] for row in payload["check"]] == [check.key for check in CHECKS]


def test_the_cli_log_formats_are_the_loaders() -> None:
    assert list(get_args(LogFormat)) == list(LOG_FORMATS)


def test_fit_command_reads_a_format_on_request(tmp_path: Path) -> None:
    codex = next((REAL / "codex").rglob("*.jsonl"))
    renamed = tmp_path / "session.jsonl"  # no rollout- prefix
    renamed.write_bytes(codex.read_bytes())
    out = tmp_path / "f.toml"
    result = CliRunner().invoke(app, ["fit", str(renamed), "--out", str(out), "--format", "codex", "--json"])
    assert result.exit_code == 0, result.output
    assert any("Codex CLI or Desktop rollout" in line for line in json.loads(result.output)["report"])


def test_fit_command_without_requests_prints_the_counts(tmp_path: Path) -> None:
    logs = tmp_path / "x.jsonl"
    logs.write_text('{"type": "mystery"}\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["fit", str(logs), "--out", str(tmp_path / "f.toml")])
    assert result.exit_code == 2
    assert "no usable request in the session logs: read 1 file" in result.output
    assert "skipped 1 events of unknown type" in result.output


def test_fit_command_says_how_many_requests_have_estimated_output(tmp_path: Path) -> None:
    out = tmp_path / "me.toml"
    result = CliRunner().invoke(app, ["fit", str(REAL), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (
        "the output-token fit (task_mix.output_tokens): 5 of 12 requests have estimated output"
        in result.output
    )
    payload = json.loads(CliRunner().invoke(app, ["fit", str(REAL), "--out", str(out), "--json"]).output)
    assert payload["estimated_output_requests"] == 5
