"""Fuzzing: mutated scenario files through loading, ``simulate`` and the CLI.

Every case must end in one of two ways: a one-line error that names the field (exit 2 from the
CLI), or a run whose ledger sums to the horizon with finite, non-negative outputs (an outcome with
no value, such as the cost per task when no task was completed, is NaN in Python and ``null`` in
JSON), within its time and memory bounds. Mutations: inf, nan, 1e308, integers past 2^63,
booleans, strings, wrong names, removed and duplicated sections, unknown and misspelt keys.
The default suite runs 200 cases on tiny scenarios (2 developers, 1 h); ``-m slow`` runs 2000.
"""

from __future__ import annotations

import copy
import json
import math
import resource
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from typer.testing import CliRunner

from fuzz_cases import time_limit
from speedtrap.cli import app
from speedtrap.config import Scenario
from speedtrap.models import simulate

SCENARIOS = Path(__file__).resolve().parents[1] / "experiments" / "scenarios"
TINY = {"developers": 2, "horizon_s": 3600.0}
RUN_LIMIT_S = 60
"""Time bound of one fuzzed run (the tiny scenarios take well under a second)."""
MEMORY_LIMIT_KB = 4 * 1024 * 1024
"""Memory bound of the test process (peak resident set), KiB."""


def _base_documents() -> list[dict[str, Any]]:
    docs = []
    for name in ("headline", "two_backends", "shared_fleet", "metr"):
        with (SCENARIOS / f"{name}.toml").open("rb") as f:
            docs.append({**tomllib.load(f), **TINY})
    docs.append(
        {
            **TINY,
            "backends": {"gpu": "gpu-fast", "wafer": {"preset": "wafer-distilled", "replicas": 2}},
            "policy": {"kind": "interactive_fast", "backend": "gpu"},
        }
    )
    escalate = {"kind": "escalate", "first": "gpu", "then": "gpu"}
    docs.append({**TINY, "backends": {"gpu": "gpu-fast"}, "policy": escalate})
    # the fully resolved headline: every field of every spec (hardware, model, tiers) is in the file
    docs.append(Scenario.model_validate(docs[0]).model_dump(mode="json", exclude_none=True))
    return docs


BASES = _base_documents()
BAD_VALUES: list[Any] = [
    math.inf, -math.inf, math.nan, 1e308, -1e308, 1e16, 1e15, 1e9, 1e6, 2**63, 2**64, -(2**63) - 1,
    True, False, "text", "1.5", "", "no-such-name", "gpu-fast", 0, -1, 1, 0.5, 1e-300, [], {}, [1.0, "x"],
]  # fmt: skip


OPERATIONS = ["value", "value", "scale", "scale", "scale", "remove", "unknown", "rename"]


def _paths(node: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield (*prefix, key)
            yield from _paths(value, (*prefix, key))


def _parent(doc: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    node = doc
    for key in path[:-1]:
        node = node[key]
    return node


@st.composite
def mutated(draw: Any) -> tuple[str, list[str]]:
    """A mutated scenario file (TOML text) and the key names its mutations touched."""
    doc = json.loads(json.dumps(draw(st.sampled_from(BASES)), allow_nan=True))
    touched: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(doc))
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent, key = _parent(doc, path), path[-1]
        touched.extend(path)
        op = draw(st.sampled_from(OPERATIONS))
        if op == "value":
            # a copy: a later "unknown" mutation writes into a drawn {} and must not reach BAD_VALUES
            parent[key] = copy.deepcopy(draw(st.sampled_from(BAD_VALUES)))
        elif op == "scale" and isinstance(parent[key], int | float) and not isinstance(parent[key], bool):
            factor = draw(st.sampled_from([-1.0, 0.0, 0.1, 2.0, 10.0]))
            parent[key] = type(parent[key])(parent[key] * factor)
        elif op == "remove":
            del parent[key]
        elif op == "unknown":
            target = parent[key] if isinstance(parent[key], dict) else parent
            target["unknown_field"] = 1
            touched.append("unknown_field")
        elif op == "rename":
            parent[key + "x"] = parent.pop(key)
            touched.append(key + "x")
    text = tomli_w.dumps(doc)
    if draw(st.booleans()) and draw(st.booleans()):  # a quarter of the cases: a duplicated section
        headers = [line for line in text.splitlines() if line.startswith("[")]
        if headers:
            header = draw(st.sampled_from(headers))
            text += f"\n{header}\n"
            touched.append(header.strip("[]").split(".")[-1])
    return text, touched


def _strict_json(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise ValueError(f"non-standard JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


def _assert_one_line_error(result: Any, touched: list[str]) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, (result.exit_code, result.output)
    message = result.stderr.strip()
    assert "\n" not in message and message.startswith("error: "), message
    lowered = message.lower()
    named = any(key.lower().rstrip("s") in lowered for key in touched)
    assert named or "not valid toml" in lowered, (message, touched)


def check_case(text: str, touched: list[str], seed: int, tmp_path: Path) -> str:
    """Run one mutated file through loading, ``simulate`` and the CLI; return the outcome's name."""
    path = tmp_path / "scenario.toml"
    path.write_text(text, encoding="utf-8")
    cli = CliRunner().invoke(app, ["run", str(path), "--json", "--seed", str(seed)])
    try:
        scenario = Scenario.from_toml(path)
    except (tomllib.TOMLDecodeError, ValidationError, ValueError):
        _assert_one_line_error(cli, touched)
        return "refused"
    try:
        with time_limit(RUN_LIMIT_S, TimeoutError):
            result = simulate(scenario, seed)
    except ValueError:  # a scenario that cannot run (e.g. a request too large for the KV cache)
        _assert_one_line_error(cli, touched)
        return "refused at run"
    wide = result.ledger_wide()
    assert len(wide) == scenario.developers
    assert (wide.to_numpy() >= 0.0).all()
    np.testing.assert_allclose(wide.sum(axis=1).to_numpy(), scenario.horizon_s, rtol=1e-9)
    summary = result.summary()
    for key, value in summary.items():
        assert math.isnan(value) or (math.isfinite(value) and value >= 0.0), (key, value)
    assert cli.exit_code == 0, cli.output
    payload = _strict_json(cli.stdout)
    for key, value in summary.items():
        shown = payload["summary"][key]
        assert (shown is None) if math.isnan(value) else shown == pytest.approx(value), (key, value, shown)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < MEMORY_LIMIT_KB
    return "ran"


FUZZ_SETTINGS = {
    "deadline": None,
    "derandomize": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
}


@settings(max_examples=200, **FUZZ_SETTINGS)  # type: ignore[arg-type]
@given(case=mutated(), seed=st.integers(0, 2**32 - 1))
def test_mutated_scenario_files_fail_cleanly_or_run_soundly(
    case: tuple[str, list[str]], seed: int, tmp_path: Path
) -> None:
    check_case(*case, seed, tmp_path)


@pytest.mark.slow
@settings(max_examples=2000, **{**FUZZ_SETTINGS, "derandomize": False})  # type: ignore[arg-type]
@given(case=mutated(), seed=st.integers(0, 2**32 - 1))
def test_mutated_scenario_files_many(case: tuple[str, list[str]], seed: int, tmp_path: Path) -> None:
    check_case(*case, seed, tmp_path)
