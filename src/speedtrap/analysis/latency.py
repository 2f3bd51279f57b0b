"""Latency percentiles of runs: each run's percentiles of time to first token, time between tokens
and end to end over all of its requests (``speedtrap.models.latency.request_metrics``), kept as flat
keys of the run's row beside its summary, and their mean over the runs of each arm, backend or design
point — what ``compare``, ``demo`` and the canonical experiments report (seconds)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # loaded where used: the command line imports this module as it starts
    import pandas as pd

LATENCY_NAMES: dict[str, tuple[str, str]] = {
    "ttft_s": ("ttft", "time to first token"),
    "tbt_s": ("tbt", "time between tokens"),
    "e2e_s": ("e2e", "end to end"),
}
"""Per metric of ``speedtrap.models.latency.LATENCY_METRICS``: the prefix of its flat keys and the
label of its row in a table."""

PERCENTILES: tuple[int, ...] = (50, 90, 99)
"""The percentiles kept per run (those of ``speedtrap.models.latency.LATENCY_PERCENTILES``)."""

LATENCY_KEYS: tuple[str, ...] = tuple(
    f"{prefix}_p{p}_s" for prefix, _ in LATENCY_NAMES.values() for p in PERCENTILES
)
"""The flat keys a run's row gains: ``ttft_p50_s`` … ``e2e_p99_s`` (seconds)."""


def run_percentiles(metrics: pd.DataFrame) -> dict[str, float]:
    """The flat :data:`LATENCY_KEYS` of one run's request metrics (seconds, numpy's default
    percentile over the requests that have the metric; NaN where none has)."""
    import numpy as np

    out: dict[str, float] = {}
    for metric, (prefix, _) in LATENCY_NAMES.items():
        values = metrics[metric].to_numpy(dtype=np.float64)
        kept = values[~np.isnan(values)]
        found = np.percentile(kept, PERCENTILES) if kept.size else [float("nan")] * len(PERCENTILES)
        out.update({f"{prefix}_p{p}_s": float(v) for p, v in zip(PERCENTILES, found, strict=True)})
    return out


def latency_by(runs: pd.DataFrame, by: str | Sequence[str]) -> pd.DataFrame:
    """Per group of ``by`` (a column or several, groups in order of first appearance): ``runs`` (the
    number of runs) and the mean over its runs of each run's percentile (:data:`LATENCY_KEYS`,
    seconds; NaN where no run of the group has the metric)."""
    columns = [by] if isinstance(by, str) else list(by)
    grouped = runs.groupby(columns, sort=False)
    table = grouped[list(LATENCY_KEYS)].mean()
    table.insert(0, "runs", grouped.size())
    return table.reset_index()


def latency_table(runs: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame | None:
    """:func:`latency_by` of ``runs`` per group of the columns ``by`` (an experiment's factors), one
    block per set of latency columns found: the run-wide :data:`LATENCY_KEYS`, and each
    ``<tier>_ttft_p50_s`` … ``<tier>_e2e_p99_s`` set (a tier's or a backend's requests alone), whose
    rows name it in a ``tier`` column. None when ``runs`` has no latency columns."""
    import pandas as pd

    first = LATENCY_KEYS[0]
    prefixes = [c[: -len(first)] for c in runs.columns if c.endswith(first)]
    blocks: list[pd.DataFrame] = []
    for prefix in prefixes:
        columns = [f"{prefix}{key}" for key in LATENCY_KEYS]
        if not set(columns) <= set(runs.columns):
            continue
        block = runs[[*by, *columns]].rename(columns=dict(zip(columns, LATENCY_KEYS, strict=True)))
        tier = [] if not prefix else ["tier"]
        if prefix:
            block = block.assign(tier=prefix.rstrip("_"))
        blocks.append(latency_by(block, [*by, *tier]))
    if not blocks:
        return None
    table = pd.concat(blocks, ignore_index=True)
    if "tier" in table.columns:
        table = table[[*by, "tier", "runs", *LATENCY_KEYS]]
    return table
