"""Fuzzing the loaders with damaged logs: shuffled, truncated or reversed transcripts, byte-order
marks, deeply nested JSON, inf and NaN in trace columns, year-9999 timestamps, huge counts and
missing columns. Every case ends in a named, counted skip (the fit then runs), or in one line that
says there is no usable request, with the counts, the file and the column where that is why.
Never a traceback, and never an error that names a scenario field. Bounded to a few seconds."""

import json
import math
import random
from pathlib import Path

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from speedtrap.sessions import NoRequestsError, fit_scenario, load_sessions
from speedtrap.sessions.plain_trace import REQUIRED_COLUMNS

EPOCH = "2026-03-02T09:"
SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _transcript(n: int) -> list[str]:
    """A Claude Code 2.1-style transcript: a prompt, then ``n`` responses of two lines each (a text
    and a tool call) with their tool results, every five a human check-in."""
    lines: list[dict] = []

    def stamp(s: float) -> str:
        return f"{EPOCH}{int(s // 60):02d}:{s % 60:06.3f}Z"

    def line(kind: str, s: float, message: dict) -> None:
        lines.append(
            {
                "type": kind,
                "uuid": f"u{len(lines)}",
                "sessionId": "s",
                "timestamp": stamp(s),
                "message": message,
            }
        )

    line("user", 0.0, {"role": "user", "content": "go"})
    t = 1.0
    for k in range(n):
        usage = {"input_tokens": 3, "cache_read_input_tokens": 1_000 * (k + 1), "output_tokens": 5 + k}
        line("assistant", t, {"id": f"m{k}", "content": [{"type": "text", "text": "x" * 40}], "usage": usage})
        block = {"type": "tool_use", "id": f"c{k}", "name": "Bash", "input": {"command": "ls"}}
        line("assistant", t + 0.5, {"id": f"m{k}", "content": [block], "usage": usage})
        line("user", t + 1.5, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"c{k}"}]})
        t += 3.0
        if k % 5 == 4:
            t += 20.0
            line("user", t - 1.0, {"role": "user", "content": "next"})
    return [json.dumps(x) for x in lines]


def _trace_csv(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "session": [f"s{k // 10}" for k in range(n)],
            "start_s": [10.0 * k for k in range(n)],
            "end_s": [10.0 * k + 4.0 for k in range(n)],
            "input_tokens": [1_000 + 100 * k for k in range(n)],
            "output_tokens": [50 + k for k in range(n)],
            "tool_s": [3.0] * n,
            "human_gap_s": [0.0 if k % 10 else math.nan for k in range(n)],
        }
    )


def _check(path: Path) -> None:
    """The contract: a load never raises; a fit either runs or says in one line why not."""
    try:
        loaded = load_sessions([path])
    except Exception as exc:  # pragma: no cover - the assertion names the failure
        raise AssertionError(f"load raised {exc!r}") from exc
    lines = loaded.report.lines()
    assert all("\n" not in line for line in lines)
    if len(loaded.trace):
        try:
            fit_scenario(loaded)
        except ValidationError as exc:  # pragma: no cover
            raise AssertionError(f"a scenario field was blamed for log data: {exc}") from exc
        return
    try:
        loaded.require_requests()
    except NoRequestsError as exc:
        message = str(exc)
        assert "\n" not in message and message.startswith("no usable request in the session logs: read")
        assert loaded.report.skipped or loaded.report.notes or loaded.report.files, message
    else:  # pragma: no cover
        raise AssertionError("an empty load did not say so")


@SETTINGS
@given(
    n=st.integers(1, 25),
    damage=st.sampled_from(
        ["shuffle", "reverse", "truncate", "bom", "nested", "year9999", "huge", "nan", "drop"]
    ),
    seed=st.integers(0, 10_000),
)
def test_damaged_transcripts(tmp_path_factory, n: int, damage: str, seed: int) -> None:
    rng = random.Random(seed)
    lines = _transcript(n)
    if damage == "shuffle":
        rng.shuffle(lines)
    elif damage == "reverse":
        lines.reverse()
    elif damage == "nested":
        lines.insert(rng.randrange(len(lines) + 1), "[" * 50_000 + "]" * 50_000)
    elif damage == "year9999":
        k = rng.randrange(len(lines))
        lines[k] = lines[k].replace("2026-03-02", "9999-12-31")
    elif damage == "huge":
        k = rng.randrange(len(lines))
        lines[k] = (
            lines[k]
            .replace('"output_tokens": ', '"output_tokens": 1e30 + ')
            .replace("1e30 + ", '1e30, "x": ')
        )
    elif damage == "nan":
        k = rng.randrange(len(lines))
        lines[k] = lines[k].replace('"cache_read_input_tokens": ', '"cache_read_input_tokens": NaN, "y": ')
    elif damage == "drop":
        for k in rng.sample(range(len(lines)), k=min(len(lines), rng.randint(1, 5))):
            lines[k] = json.dumps(
                {
                    kk: v
                    for kk, v in json.loads(lines[k]).items()
                    if kk != rng.choice(["timestamp", "type", "message", "uuid"])
                }
            )
    text = "\n".join(lines) + "\n"
    data = text.encode()
    if damage == "bom":
        data = b"\xef\xbb\xbf" + data
    if damage == "truncate":
        data = data[: rng.randrange(1, len(data))]
    path = tmp_path_factory.mktemp("t") / "s.jsonl"
    path.write_bytes(data)
    _check(path)


@SETTINGS
@given(
    n=st.integers(1, 40),
    damage=st.sampled_from(
        ["inf", "nan", "year9999", "huge", "missing", "text", "negative", "truncate", "bom"]
    ),
    column=st.sampled_from(
        ["start_s", "end_s", "input_tokens", "output_tokens", "tool_s", "human_gap_s", "session"]
    ),
    seed=st.integers(0, 10_000),
)
def test_damaged_traces(tmp_path_factory, n: int, damage: str, column: str, seed: int) -> None:
    rng = random.Random(seed)
    df = _trace_csv(n).astype(object)
    rows = rng.sample(range(n), k=rng.randint(1, n))
    if damage == "inf":
        df.loc[rows, column] = rng.choice([math.inf, -math.inf])
    elif damage == "nan":
        df.loc[rows, column] = math.nan
    elif damage == "year9999":
        df["start_s"] = [
            f"9999-12-31T00:00:{k % 60:02d}Z" if k in rows else f"{EPOCH}00:{k % 60:02d}Z" for k in range(n)
        ]
        df["end_s"] = df["start_s"]
    elif damage == "huge":
        df.loc[rows, column] = 10**40
    elif damage == "missing":
        df = df.drop(columns=[column])
    elif damage == "text":
        df.loc[rows, column] = "twelve"
    elif damage == "negative":
        df.loc[rows, column] = -5
    path = tmp_path_factory.mktemp("c") / "trace.csv"
    text = df.to_csv(index=False)
    data = text.encode()
    if damage == "truncate":
        data = data[: rng.randrange(1, len(data))]
    if damage == "bom":
        data = b"\xef\xbb\xbf" + data
    path.write_bytes(data)
    _check(path)
    if damage == "missing" and column in REQUIRED_COLUMNS:
        loaded = load_sessions([path])
        assert f"trace.csv: no column {column}" in " ".join(loaded.report.lines())
