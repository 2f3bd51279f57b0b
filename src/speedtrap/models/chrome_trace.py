"""A run as a Chrome trace-event timeline (the JSON that Perfetto UI and chrome://tracing open).

One more output format of a run, beside its tables: pure functions of those tables (no Mesa), drawn
from anything shaped like a run result (:class:`TracedRun`; :class:`speedtrap.models.RunResult` is
one, and its ``to_trace`` method calls :func:`run_trace`). The trace is the JSON object format:
``{"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}`` with complete events
(``ph = "X"``: ``ts`` and ``dur`` in microseconds of simulated time), counters (``"C"``) and
metadata (``"M"``: process and thread names and sort order). Times are whole microseconds, rounded once per
boundary, so that spans that tile an interval in seconds tile it exactly in the trace.

Tracks:

* process ``developers``: one thread per developer. Its leaf spans are the ledger's intervals
  (name: the ledger category, ``args.task``: the task served, -1 for none); consecutive intervals
  of the same task are wrapped in a parent span ``task K`` (difficulty and outcome in ``args``).
  The leaves tile the horizon (or the window), so per developer they sum to it: the ledger
  invariant.
* one process per backend replica (``<backend> replica R``): a ``batch`` counter (the simulated
  streams admitted to the replica; background streams are not in the requests table) and the
  finished requests served there, laid out on as few ``slot`` threads as never overlap. A
  request span (name: tier and output tokens; ``args``: id, tier, tokens, developer, task, turn,
  cost) holds its ``queue`` (arrival → admission), ``prefill`` (→ first token) and ``decode`` (→
  last token) spans.
* one process per backend pool (``<backend> pool``) with a ``queue`` counter: requests that have
  arrived and wait for admission.

A window ``(start_s, end_s)`` keeps only what overlaps it, clipped to it.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable
from typing import Any, Protocol

import numpy as np
import pandas as pd

from speedtrap.config.scenario import Scenario

__all__ = ["US_PER_S", "TracedRun", "parse_window", "run_trace"]

US_PER_S = 1_000_000
"""Trace timestamps are in microseconds."""

DEVELOPERS_PID = 1
"""The process that holds one thread per developer."""

Window = tuple[float, float]


class TracedRun(Protocol):
    """The tables a trace is drawn from (those of :class:`speedtrap.models.RunResult`)."""

    @property
    def scenario(self) -> Scenario: ...
    @property
    def seed(self) -> int | None: ...
    @property
    def horizon_s(self) -> float: ...
    @property
    def ledger(self) -> pd.DataFrame: ...
    @property
    def tasks(self) -> pd.DataFrame: ...
    @property
    def requests(self) -> pd.DataFrame: ...
    @property
    def trace(self) -> pd.DataFrame | None: ...


def parse_window(text: str) -> Window:
    """``"START:END"`` in simulated seconds → (start, end); either side may be empty (from 0, to
    the end of the run: ``inf``). Raises ``ValueError`` for anything else."""
    start_text, sep, end_text = text.partition(":")
    if not sep:
        raise ValueError(f"--trace-window {text!r}: expected START:END in seconds, e.g. 3600:7200")
    try:
        start = float(start_text) if start_text.strip() else 0.0
        end = float(end_text) if end_text.strip() else math.inf
    except ValueError:
        raise ValueError(f"--trace-window {text!r}: START and END must be numbers of seconds") from None
    if not (start >= 0 and end > start):
        raise ValueError(f"--trace-window {text!r}: need 0 ≤ START < END")
    return start, end


def _us(seconds: float) -> int:
    return round(seconds * US_PER_S)


def _meta(pid: int, tid: int, kind: str, value: str | int) -> dict[str, Any]:
    """A metadata event: ``kind`` is process_name / thread_name (``value``: the name) or
    process_sort_index / thread_sort_index (``value``: the rank)."""
    key = "name" if kind.endswith("_name") else "sort_index"
    return {"name": kind, "ph": "M", "pid": pid, "tid": tid, "args": {key: value}}


def _span(name: str, cat: str, pid: int, tid: int, ts: int, end: int, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "cat": cat,
        "ph": "X",
        "pid": pid,
        "tid": tid,
        "ts": ts,
        "dur": end - ts,
        "args": args,
    }


def run_trace(result: TracedRun, window: Window | None = None) -> dict[str, Any]:
    """The trace of ``result`` (traced with ``trace=True``), optionally limited to ``window``
    (simulated seconds; clipped to the horizon). See the module docstring for the tracks."""
    if result.trace is None:
        raise ValueError("the run has no activity trace: simulate it with trace=True")
    start_s, end_s = window if window is not None else (0.0, result.horizon_s)
    end_s = min(end_s, result.horizon_s)
    if not (0.0 <= start_s < end_s):
        raise ValueError(f"trace window {start_s}:{end_s} does not overlap the run (0:{result.horizon_s})")
    w0, w1 = _us(start_s), _us(end_s)
    events: list[dict[str, Any]] = [
        _meta(DEVELOPERS_PID, 0, "process_name", "developers"),
        _meta(DEVELOPERS_PID, 0, "process_sort_index", 0),
    ]
    events += _developer_events(result, w0, w1)
    events += _request_events(result.requests, w0, w1, first_pid=DEVELOPERS_PID + 1)
    return {
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "generator": "speedtrap",
            "scenario": result.scenario.name,
            "seed": result.seed,
            "horizon_s": result.horizon_s,
            "window_s": [start_s, end_s],
            "time_unit": "simulated microseconds",
        },
    }


def _developer_events(result: TracedRun, w0: int, w1: int) -> list[dict[str, Any]]:
    trace = result.trace
    assert trace is not None
    tasks = result.tasks.set_index(["developer", "task"])[["difficulty", "outcome"]].to_dict("index")
    events: list[dict[str, Any]] = []
    developers = sorted(result.ledger["developer"].unique().tolist())
    for developer in developers:
        tid = int(developer) + 1
        events.append(_meta(DEVELOPERS_PID, tid, "thread_name", f"developer {developer}"))
        events.append(_meta(DEVELOPERS_PID, tid, "thread_sort_index", tid))
        rows = trace[(trace["developer"] == developer) & (trace["end_s"] > trace["start_s"])]
        rows = rows.sort_values("start_s", kind="stable")
        # Each boundary is rounded once: an interval ends where the next begins.
        starts = [_us(s) for s in rows["start_s"]]
        ends = [*starts[1:], _us(rows["end_s"].iloc[-1])] if starts else []
        leaves = [
            (max(a, w0), min(b, w1), str(category), int(task))
            for a, b, category, task in zip(starts, ends, rows["category"], rows["task"], strict=True)
            if min(b, w1) > max(a, w0)
        ]
        for group in _runs_of_same_task(leaves):
            task = group[0][3]
            if task >= 0:
                info = tasks.get((developer, task), {})
                args = {"task": task, **{k: str(v) for k, v in info.items()}}
                events.append(
                    _span(f"task {task}", "task", DEVELOPERS_PID, tid, group[0][0], group[-1][1], args)
                )
            for a, b, category, _ in group:
                events.append(_span(category, "ledger", DEVELOPERS_PID, tid, a, b, {"task": task}))
    return events


def _runs_of_same_task(leaves: list[tuple[int, int, str, int]]) -> Iterable[list[tuple[int, int, str, int]]]:
    group: list[tuple[int, int, str, int]] = []
    for leaf in leaves:
        if group and (leaf[3] != group[-1][3] or leaf[0] != group[-1][1]):
            yield group
            group = []
        group.append(leaf)
    if group:
        yield group


def _request_events(requests: pd.DataFrame, w0: int, w1: int, *, first_pid: int) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    pid = first_pid
    for backend, frame in requests.groupby("backend", sort=False):
        pool_pid = pid
        pid += 1
        events.append(_meta(pool_pid, 0, "process_name", f"{backend} pool"))
        events.append(_meta(pool_pid, 0, "process_sort_index", pool_pid))
        arrival = frame["arrival_s"].map(_us).to_numpy()
        admitted = frame["admitted_s"].map(_us).to_numpy()
        events += _counter(pool_pid, "queue", "requests", arrival, admitted, w0, w1)
        for replica, rows in frame.groupby("replica", sort=True):
            events.append(_meta(pid, 0, "process_name", f"{backend} replica {replica}"))
            events.append(_meta(pid, 0, "process_sort_index", pid))
            events += _replica_events(rows, pid, w0, w1)
            pid += 1
    return events


def _counter(
    pid: int, name: str, key: str, up: np.ndarray, down: np.ndarray, w0: int, w1: int
) -> list[dict[str, Any]]:
    """A step counter that rises at each ``up`` and falls at each ``down`` (µs), within [w0, w1]."""
    times = np.concatenate([up, down])
    steps = np.concatenate([np.ones(len(up), dtype=np.int64), -np.ones(len(down), dtype=np.int64)])
    order = np.lexsort((steps, times))  # at equal times, leaving before joining
    times, level = times[order], np.cumsum(steps[order])
    before = times < w0
    at: dict[int, int] = {w0: int(level[before][-1]) if before.any() else 0}
    inside = (times >= w0) & (times <= w1)
    for t, value in zip(times[inside].tolist(), level[inside].tolist(), strict=True):
        at[t] = value  # the level after every change at this instant
    events: list[dict[str, Any]] = []
    previous = None
    for t, value in at.items():
        if value != previous:
            events.append({"name": name, "ph": "C", "pid": pid, "tid": 0, "ts": t, "args": {key: value}})
            previous = value
    return events


def _replica_events(rows: pd.DataFrame, pid: int, w0: int, w1: int) -> list[dict[str, Any]]:
    arrival = rows["arrival_s"].map(_us).to_numpy()
    admitted = rows["admitted_s"].map(_us).to_numpy()
    first = rows["first_token_s"].map(_us).to_numpy()
    done = rows["done_s"].map(_us).to_numpy()
    events = _counter(pid, "batch", "streams", admitted, done, w0, w1)
    lanes: list[tuple[int, int]] = []  # heap of (busy until, lane)
    lane_count = 0
    spans: list[dict[str, Any]] = []
    records = rows[
        [
            "id",
            "tier",
            "input_tokens",
            "cached_tokens",
            "output_tokens",
            "developer",
            "task",
            "attempt",
            "turn",
            "cost_usd",
        ]
    ].to_dict("records")
    for i in np.argsort(arrival, kind="stable").tolist():
        a, b = max(int(arrival[i]), w0), min(int(done[i]), w1)
        if b <= a:
            continue
        if lanes and lanes[0][0] <= a:
            _, lane = heapq.heappop(lanes)
        else:
            lane, lane_count = lane_count, lane_count + 1
        heapq.heappush(lanes, (b, lane))
        record = records[i]
        args = {k: (v.item() if hasattr(v, "item") else v) for k, v in record.items()}
        name = f"{record['tier']} {record['output_tokens']} tok"
        spans.append(_span(name, "request", pid, lane + 1, a, b, args))
        bounds = (int(arrival[i]), int(admitted[i]), int(first[i]), int(done[i]))
        for phase, lo, hi in zip(("queue", "prefill", "decode"), bounds, bounds[1:], strict=False):
            lo, hi = max(lo, w0), min(hi, w1)
            if hi > lo:
                spans.append(_span(phase, "request", pid, lane + 1, lo, hi, {"id": args["id"]}))
    for lane in range(lane_count):
        events.append(_meta(pid, lane + 1, "thread_name", f"slot {lane}"))
    return events + spans
