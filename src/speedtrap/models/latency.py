"""Per-request latency of a run, from its request table (``RunResult.requests``): the metrics of
every request and their percentiles per backend — what ``speedtrap run`` prints beside the means of
the summary, and what ``run --export`` writes as ``request_metrics.parquet``.

Metrics (seconds; a request's times are those of ``serving.request.REQUEST_COLUMNS``):

==========  ==========================================================================================
``queue_s``  waiting for admission: admitted_s − arrival_s
``ttft_s``   time to first token: first_token_s − arrival_s (queue wait and prefill)
``tbt_s``    time between tokens: decode_s / (output_tokens − 1), the decode seconds per output token
             after the first (NaN for a request of one token)
``e2e_s``    end to end: done_s − arrival_s
==========  ==========================================================================================

Percentiles are numpy's default (linear interpolation between order statistics), over the requests
that have the metric (NaN where none has).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from speedtrap.analysis.latency import run_percentiles

if TYPE_CHECKING:
    from speedtrap.config.scenario import Scenario
    from speedtrap.models.results import RunSummary

LATENCY_PERCENTILES: tuple[int, ...] = (50, 90, 99)
"""The percentiles reported per backend (p50, p90, p99)."""

LATENCY_METRICS: tuple[str, ...] = ("ttft_s", "tbt_s", "e2e_s")
"""The metrics whose percentiles are reported."""

METRIC_COLUMNS: dict[str, str] = {
    "backend": "str",
    "tier": "str",
    "developer": "int64",
    "task": "int64",
    "arrival_s": "float64",
    "queue_s": "float64",
    "ttft_s": "float64",
    "tbt_s": "float64",
    "e2e_s": "float64",
    "tokens": "int64",
}
"""Columns of :func:`request_metrics`: one row per finished request; ``developer`` and ``task`` as in
the request table (−1 when it has none), ``tokens`` its output tokens."""


def request_metrics(requests: pd.DataFrame) -> pd.DataFrame:
    """One row per request of a run's request table (columns arrival_s, admitted_s, first_token_s,
    done_s, output_tokens, decode_s, backend, tier; developer and task where present) with its
    latency metrics (schema :data:`METRIC_COLUMNS`, definitions in the module docstring)."""
    arrival = requests["arrival_s"].to_numpy(dtype=np.float64)
    tokens = requests["output_tokens"].to_numpy(dtype=np.int64)
    decoded = tokens - 1
    decode_s = requests["decode_s"].to_numpy(dtype=np.float64)
    tbt = np.where(decoded > 0, decode_s / np.where(decoded > 0, decoded, 1), np.nan)
    n = len(requests)
    missing = np.full(n, -1, dtype=np.int64)
    data: dict[str, Any] = {
        "backend": requests["backend"].astype(str).to_numpy(),
        "tier": requests["tier"].astype(str).to_numpy(),
        "developer": requests["developer"].to_numpy(dtype=np.int64) if "developer" in requests else missing,
        "task": requests["task"].to_numpy(dtype=np.int64) if "task" in requests else missing,
        "arrival_s": arrival,
        "queue_s": requests["admitted_s"].to_numpy(dtype=np.float64) - arrival,
        "ttft_s": requests["first_token_s"].to_numpy(dtype=np.float64) - arrival,
        "tbt_s": tbt,
        "e2e_s": requests["done_s"].to_numpy(dtype=np.float64) - arrival,
        "tokens": tokens,
    }
    return pd.DataFrame({name: pd.Series(data[name], dtype=dtype) for name, dtype in METRIC_COLUMNS.items()})


def _percentiles(values: np.ndarray) -> dict[str, float]:
    kept = values[~np.isnan(values)]
    if kept.size == 0:
        return {f"p{p}": math.nan for p in LATENCY_PERCENTILES}
    return {
        f"p{p}": float(v)
        for p, v in zip(LATENCY_PERCENTILES, np.percentile(kept, LATENCY_PERCENTILES), strict=True)
    }


def latency_percentiles(requests: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Per backend (in order of first appearance): ``{"requests": n, "ttft_s": {"p50", "p90",
    "p99"}, "tbt_s": {...}, "e2e_s": {...}}`` of a run's request table (seconds; NaN where no
    request has the metric)."""
    metrics = request_metrics(requests)
    out: dict[str, dict[str, Any]] = {}
    for backend, rows in metrics.groupby("backend", sort=False):
        entry: dict[str, Any] = {"requests": len(rows)}
        for metric in LATENCY_METRICS:
            entry[metric] = _percentiles(rows[metric].to_numpy(dtype=np.float64))
        out[str(backend)] = entry
    return out


def simulate_summary_with_latency(scenario: Scenario, seed: int | None = None) -> RunSummary:
    """A model function for the experiment engine: ``simulate(scenario, seed).summary()`` with the
    run's latency percentiles over all of its requests added
    (:data:`speedtrap.analysis.latency.LATENCY_KEYS`, seconds; NaN where no request has the metric),
    naming the engine that ran. The summary's own values are those of
    :func:`~speedtrap.models.workflow.simulate_summary`, bit for bit."""
    from speedtrap.models.workflow import simulate

    result = simulate(scenario, seed)
    summary = result.summary()
    summary.update(run_percentiles(request_metrics(result.requests)))
    return summary
