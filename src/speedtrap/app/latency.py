"""The app's latency table: each arm's p50, p90 and p99 time to first token, time between tokens and
end to end, in seconds, over the requests of the run so far (finished requests only), as ``run``,
``compare`` and ``demo`` report them (:mod:`speedtrap.analysis.latency`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from html import escape

from speedtrap.models.results import RunResult

__all__ = ["latency_html"]


def _cell(seconds: float) -> str:
    return "n/a" if math.isnan(seconds) else f"{seconds:.3g} s"


def latency_html(results: Mapping[str, RunResult]) -> str:
    """An HTML table, a row per arm and measure (an arm without requests, such as ``manual``, shows
    n/a)."""
    from speedtrap.analysis.latency import LATENCY_NAMES, PERCENTILES, run_percentiles
    from speedtrap.models.latency import request_metrics

    rows = []
    for arm, result in results.items():
        values = run_percentiles(request_metrics(result.requests))
        for prefix, label in LATENCY_NAMES.values():
            cells = "".join(f"<td>{_cell(values[f'{prefix}_p{p}_s'])}</td>" for p in PERCENTILES)
            rows.append(f"<tr><td>{escape(arm)}</td><td>{label}</td>{cells}</tr>")
    head = "".join(f"<th>p{p}</th>" for p in PERCENTILES)
    return (
        '<table class="st-latency" style="font-size:13px;margin-top:8px"><tr><th>arm</th>'
        f"<th>latency (seconds, requests finished so far)</th>{head}</tr>{''.join(rows)}</table>"
    )
