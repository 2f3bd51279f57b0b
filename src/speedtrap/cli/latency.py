"""Per-request latency in ``compare`` and ``demo`` (the percentiles of
:mod:`speedtrap.analysis.latency`): each run's percentiles of time to first token,
time between tokens and end to end (:mod:`speedtrap.models.latency`, over all of the run's requests),
kept as flat columns of the run's row beside its summary (the summary's own keys unchanged), their
mean over an arm's runs as a table, a JSON list and a CSV, and ``compare --latency-csv``'s
per-request metrics of every run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from speedtrap.cli.common import json_number, print_table, shown, writing

__all__ = ["arm_latency", "latency_records", "print_latency_table"]
_REEXPORTED = ("LATENCY_KEYS", "LATENCY_NAMES", "PERCENTILES", "latency_by", "run_percentiles")


def __getattr__(name: str) -> Any:
    """The percentile names and functions of :mod:`speedtrap.analysis.latency`, imported when first
    used: importing :mod:`speedtrap.analysis` loads pandas, which the command line's start leaves out
    (``compare`` imports this module for its option type)."""
    if name in _REEXPORTED:
        from speedtrap.analysis import latency

        return getattr(latency, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if TYPE_CHECKING:
    import pandas as pd

    from speedtrap.config.scenario import Scenario

LatencyCsvOption = Annotated[
    Path | None,
    typer.Option(
        "--latency-csv",
        help="Write the latency of every request of every run as CSV (arm, member, seed, then "
        "backend, tier, developer, task, arrival_s, queue_s, ttft_s, tbt_s, e2e_s in seconds, tokens).",
    ),
]


def summary_with_latency(
    kept: list[pd.DataFrame] | None = None,
) -> Callable[[Scenario, int], dict[str, float]]:
    """The function ``behaviour_runs`` calls per run: the run's summary and its latency percentiles
    (:data:`LATENCY_KEYS`); given ``kept``, each run's request metrics are appended to it, in the
    order of the runs."""

    def simulate_summary(scenario: Scenario, seed: int) -> dict[str, float]:
        from speedtrap.models.latency import request_metrics
        from speedtrap.models.workflow import simulate

        result = simulate(scenario, seed)
        metrics = request_metrics(result.requests)
        if kept is not None:
            kept.append(metrics)
        from speedtrap.analysis.latency import run_percentiles

        return {**result.summary(), **run_percentiles(metrics)}

    return simulate_summary


def arm_latency(runs: pd.DataFrame, column: str = "arm") -> pd.DataFrame:
    """Per arm (``column``, in order of first appearance): ``runs`` (the number of runs) and the mean
    over its runs of each run's percentile (:data:`LATENCY_KEYS`, seconds)."""
    from speedtrap.analysis.latency import latency_by

    return latency_by(runs, column)


def latency_records(runs: pd.DataFrame) -> list[dict[str, Any]]:
    """``compare --json``'s ``latency``: per arm ``{"arm", "runs", "ttft_p50_s", …, "e2e_p99_s"}``
    (seconds; null where no request has the metric)."""
    return [{k: json_number(v) for k, v in row.items()} for row in arm_latency(runs).to_dict("records")]


def print_latency_table(runs: pd.DataFrame, column: str = "arm") -> None:
    """The table of :func:`arm_latency`: a row per arm and metric, p50, p90 and p99 in seconds."""
    from speedtrap.analysis.latency import LATENCY_NAMES, PERCENTILES

    table = arm_latency(runs, column)
    print_table(
        "Latency per arm (seconds; mean over runs of each run's percentile)",
        [column, "runs", "measure", *(f"p{p}" for p in PERCENTILES)],
        [
            [
                row[column],
                row["runs"],
                label,
                *(shown(row[f"{prefix}_p{p}_s"], ".3g") + " s" for p in PERCENTILES),
            ]
            for row in table.to_dict("records")
            for prefix, label in LATENCY_NAMES.values()
        ],
    )


def write_request_latency(runs: pd.DataFrame, kept: Sequence[pd.DataFrame], path: Path, option: str) -> None:
    """Write every run's request metrics (``kept``, in the order of ``runs``' rows) as one CSV with
    the run's ``arm``, ``member`` and ``seed`` first; an error while writing is one line naming
    ``option``."""
    import pandas as pd

    frames = [
        metrics.assign(arm=run.arm, member=run.member, seed=run.seed)
        for run, metrics in zip(runs.itertuples(), kept, strict=True)
    ]
    columns = ["arm", "member", "seed", *kept[0].columns] if kept else ["arm", "member", "seed"]
    table = pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)
    with writing(path, option):
        path.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(path, index=False)
