"""Chrome trace export: the JSON follows the trace-event format, spans nest per track, each
developer's spans sum to the horizon (the ledger invariant) and request spans match the requests
table."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from speedtrap.cli import HEADLINE_SCENARIO, app
from speedtrap.config import Scenario
from speedtrap.models import RunResult, simulate
from speedtrap.models.chrome_trace import US_PER_S, parse_window

SMALL = {"developers": 2, "horizon_s": 3600.0}
"""Two developers for an hour of the headline population: every kind of span, in a blink."""


@pytest.fixture(scope="module")
def result() -> RunResult:
    scenario = Scenario.from_toml(HEADLINE_SCENARIO).with_overrides(SMALL)
    return simulate(scenario, 3, trace=True)


@pytest.fixture(scope="module")
def shared_fleet() -> RunResult:
    """Six developers with parallel sessions on one replica that admits two streams (one on the
    fast tier): requests queue and overlap."""
    scenario = Scenario.from_toml(HEADLINE_SCENARIO).with_overrides(
        {
            "developers": 6,
            "horizon_s": 1800.0,
            "backends": {
                "fleet": {
                    "preset": "gpu-fast",
                    "replicas": 1,
                    "typical_batch": 1,
                    "tiers": [
                        {"name": "standard", "priority": 0, "batch_cap": 2},
                        {"name": "fast", "priority": 1, "batch_cap": 1, "price_multiplier": 6.0},
                    ],
                }
            },
            "policy": {"kind": "fast_share", "share": 0.5, "standard_tier": "standard"},
            "developer.attention.max_parallel_sessions": 3,
            "developer.attention.parallel_sessions_probs": None,  # the cap decides, not the headline's mix
        }
    )
    return simulate(scenario, 5, trace=True)


# --- the trace-event format ---------------------------------------------------------------------

METADATA_NAMES = {"process_name", "thread_name", "process_sort_index", "thread_sort_index"}


def format_problems(trace: Any) -> list[str]:
    """What makes ``trace`` invalid as a JSON-object-format trace of X, C and M events."""
    problems = []
    try:
        json.dumps(trace, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return [f"not strict JSON: {exc}"]
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        return ["not an object with a traceEvents list"]
    if trace.get("displayTimeUnit", "ms") not in ("ms", "ns"):
        problems.append("displayTimeUnit must be ms or ns")
    for i, e in enumerate(trace["traceEvents"]):
        where = f"event {i} {e!r:.120}"
        if not isinstance(e.get("name"), str) or not isinstance(e.get("pid"), int):
            problems.append(f"{where}: name (str) and pid (int) are required")
        if not isinstance(e.get("tid"), int):
            problems.append(f"{where}: tid (int) is required")
        match e.get("ph"):
            case "X":
                ok = isinstance(e.get("ts"), int | float) and isinstance(e.get("dur"), int | float)
                if not ok or e["ts"] < 0 or e["dur"] < 0:
                    problems.append(f"{where}: a complete event needs ts >= 0 and dur >= 0")
                if not isinstance(e.get("args", {}), dict):
                    problems.append(f"{where}: args must be an object")
            case "C":
                args = e.get("args")
                if not isinstance(e.get("ts"), int | float) or not isinstance(args, dict) or not args:
                    problems.append(f"{where}: a counter needs ts and args")
                elif not all(isinstance(v, int | float) for v in args.values()):
                    problems.append(f"{where}: counter values must be numbers")
            case "M":
                key = "name" if e.get("name", "").endswith("_name") else "sort_index"
                if e.get("name") not in METADATA_NAMES or key not in e.get("args", {}):
                    problems.append(f"{where}: unknown metadata event or missing args.{key}")
            case other:
                problems.append(f"{where}: unexpected phase {other!r}")
    return problems


def nesting_problems(trace: dict[str, Any]) -> list[str]:
    """Complete events on one (pid, tid) track must nest: each lies inside or after the previous."""
    tracks: dict[tuple[int, int], list[tuple[int, int, str]]] = defaultdict(list)
    for e in trace["traceEvents"]:
        if e["ph"] == "X":
            tracks[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], e["name"]))
    problems = []
    for track, spans in tracks.items():
        stack: list[tuple[int, int, str]] = []
        for start, end, name in sorted(spans, key=lambda s: (s[0], -s[1])):
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][1]:
                problems.append(f"track {track}: {name} [{start}, {end}] overlaps {stack[-1]}")
            stack.append((start, end, name))
    return problems


def spans(trace: dict[str, Any], cat: str) -> list[dict[str, Any]]:
    return [e for e in trace["traceEvents"] if e["ph"] == "X" and e.get("cat") == cat]


def names(trace: dict[str, Any], kind: str) -> dict[tuple[int, int], str]:
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"] if e["name"] == kind}


# --- tests --------------------------------------------------------------------------------------


def test_trace_is_valid_and_nests(result: RunResult, shared_fleet: RunResult) -> None:
    for run in (result, shared_fleet):
        trace = run.to_trace()
        assert format_problems(trace) == []
        assert nesting_problems(trace) == []
        assert json.loads(json.dumps(trace)) == trace
        total: dict[int, int] = defaultdict(int)
        for e in spans(trace, "ledger"):
            total[e["tid"]] += e["dur"]
        assert len(total) == run.scenario.developers
        assert set(total.values()) == {round(run.horizon_s * US_PER_S)}  # the ledger invariant


def test_developer_spans_sum_to_the_horizon_and_match_the_ledger(result: RunResult) -> None:
    trace = result.to_trace()
    threads = names(trace, "thread_name")
    assert sorted(v for v in threads.values() if v.startswith("developer")) == ["developer 0", "developer 1"]
    leaves = spans(trace, "ledger")
    total: dict[int, int] = defaultdict(int)
    by_category: dict[tuple[int, str], int] = defaultdict(int)
    for e in leaves:
        developer = int(threads[(e["pid"], e["tid"])].split()[1])
        total[developer] += e["dur"]
        by_category[(developer, e["name"])] += e["dur"]
    assert total == {0: round(result.horizon_s * US_PER_S), 1: round(result.horizon_s * US_PER_S)}
    for row in result.ledger.itertuples():
        # Each boundary is rounded to a microsecond once: at most 1 µs off per span.
        spans_n = sum(1 for e in leaves if e["name"] == row.category)
        got = by_category[(row.developer, str(row.category))]
        assert abs(got - row.seconds * US_PER_S) <= spans_n + 1
    tasks = spans(trace, "task")
    assert tasks and all(e["name"] == f"task {e['args']['task']}" and "outcome" in e["args"] for e in tasks)
    labelled = {(e["tid"], e["args"]["task"]) for e in leaves if e["args"]["task"] >= 0}
    assert labelled == {(e["tid"], e["args"]["task"]) for e in tasks}


def test_request_spans_match_the_requests_table(shared_fleet: RunResult) -> None:
    requests = shared_fleet.requests
    assert (requests["queue_wait_s"] > 0).any(), "the scenario should make requests queue"
    trace = shared_fleet.to_trace()
    processes = names(trace, "process_name")
    by_id = {e["args"]["id"]: e for e in spans(trace, "request") if "tier" in e["args"]}
    assert sorted(by_id) == sorted(requests["id"])
    phases: dict[int, dict[str, dict[str, Any]]] = defaultdict(dict)
    for e in spans(trace, "request"):
        if "tier" not in e["args"]:
            phases[e["args"]["id"]][e["name"]] = e
    for row in requests.itertuples():
        e = by_id[row.id]
        assert processes[(e["pid"], 0)] == f"{row.backend} replica {row.replica}"
        assert e["name"] == f"{row.tier} {row.output_tokens} tok"
        assert e["args"]["tier"] == row.tier and e["args"]["output_tokens"] == row.output_tokens
        assert e["args"]["developer"] == row.developer and e["args"]["turn"] == row.turn
        assert e["ts"] == round(row.arrival_s * US_PER_S)
        assert e["ts"] + e["dur"] == round(row.done_s * US_PER_S)
        expected = {"queue": row.queue_wait_s, "prefill": row.prefill_s, "decode": row.decode_s}
        for phase, seconds in expected.items():
            got = phases[row.id].get(phase, {"dur": 0})["dur"]
            assert abs(got - seconds * US_PER_S) <= 1, (row.id, phase)
    assert {row.tier for row in requests.itertuples()} == {"fast", "standard"}


def test_batch_counter_follows_admissions_and_completions(shared_fleet: RunResult) -> None:
    trace = shared_fleet.to_trace()
    batch = [e for e in trace["traceEvents"] if e["ph"] == "C" and e["name"] == "batch"]
    queue = [e for e in trace["traceEvents"] if e["ph"] == "C" and e["name"] == "queue"]
    requests = shared_fleet.requests
    # The counter's level at any instant is the requests admitted and not yet done.
    for e in batch[:: max(1, len(batch) // 50)]:
        t = e["ts"] / US_PER_S
        in_service = ((requests["admitted_s"] <= t + 1e-6) & (requests["done_s"] > t + 1e-6)).sum()
        assert e["args"]["streams"] == in_service
    assert max(e["args"]["requests"] for e in queue) >= 1
    assert all(e["args"]["streams"] >= 0 for e in batch)


def test_window_keeps_only_what_overlaps_it(result: RunResult) -> None:
    trace = result.to_trace((600.0, 1800.0))
    assert format_problems(trace) == [] and nesting_problems(trace) == []
    x = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert all(e["ts"] >= 600 * US_PER_S and e["ts"] + e["dur"] <= 1800 * US_PER_S for e in x)
    total: dict[int, int] = defaultdict(int)
    for e in spans(trace, "ledger"):
        total[e["tid"]] += e["dur"]
    assert set(total.values()) == {1200 * US_PER_S}
    inside = result.requests[(result.requests["done_s"] > 600) & (result.requests["arrival_s"] < 1800)]
    assert len([e for e in spans(trace, "request") if "tier" in e["args"]]) == len(inside)
    assert trace["otherData"]["window_s"] == [600.0, 1800.0]


def test_untraced_run_and_bad_windows_are_refused(result: RunResult) -> None:
    untraced = simulate(Scenario.from_toml(HEADLINE_SCENARIO).with_overrides(SMALL), 3)
    with pytest.raises(ValueError, match="trace=True"):
        untraced.to_trace()
    with pytest.raises(ValueError, match="overlap"):
        result.to_trace((4000.0, 5000.0))
    assert parse_window("60:") == (60.0, math.inf) and parse_window(":90") == (0.0, 90.0)
    for text in ("60", "a:b", "90:60", "-1:5"):
        with pytest.raises(ValueError, match="--trace-window"):
            parse_window(text)


def test_cli_writes_the_trace(tmp_path: Path) -> None:
    out = tmp_path / "traces" / "run.json"
    sets = ["--set", "developers=2", "--set", "horizon_s=1800"]
    runner = CliRunner()
    done = runner.invoke(
        app, ["run", str(HEADLINE_SCENARIO), *sets, "--json", "--trace", str(out), "--trace-window", "300:"]
    )
    assert done.exit_code == 0, done.output
    trace = json.loads(out.read_text())
    assert format_problems(trace) == [] and trace["otherData"]["window_s"] == [300.0, 1800.0]
    assert json.loads(done.stdout)["summary"]["developers"] == 2.0
    bad = runner.invoke(app, ["run", *sets, "--trace-window", "300:600"])
    assert bad.exit_code == 2 and "needs --trace" in bad.output
    bad = runner.invoke(app, ["run", *sets, "--trace", str(out), "--trace-window", "5000:"])
    assert bad.exit_code == 2 and "after the horizon" in bad.output
