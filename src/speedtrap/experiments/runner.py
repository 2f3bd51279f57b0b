"""The experiment runner: design points × replication seeds → a tidy table, stored as it runs.

The model is any picklable function ``(scenario, seed) -> dict of outcomes`` (default
:func:`speedtrap.models.workflow.simulate_summary`). :func:`run_experiment` evaluates every design
point with the same replication seeds (common random numbers) on a swappable executor, appends
finished runs to a :class:`ResultStore` batch by batch, skips runs the store already holds (an
interrupted sweep resumes where it stopped) and returns one row per point × replication, sorted,
so every executor gives the same table.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import ValidationError
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from speedtrap.config.base import describe_errors
from speedtrap.config.experiment import Experiment
from speedtrap.config.scenario import Scenario
from speedtrap.experiments.design import POINT, check_points, design_points, scenario_for
from speedtrap.experiments.executors import Executor, make_executor
from speedtrap.experiments.identity import adopt, experiment_identity
from speedtrap.experiments.seeds import replication_seeds
from speedtrap.experiments.store import ENGINE_COLUMNS, ResultStore
from speedtrap.models.workflow import simulate_summary

Model = Callable[[Scenario, int], Mapping[str, float]]
"""A model: ``(scenario, seed) -> {outcome: value}``; module-level (picklable) for parallel executors."""

FLUSH_RUNS = 256
"""Finished runs collected before a part file is written (assumption: keeps part files few)."""
FLUSH_S = 10.0
"""Seconds after which finished runs are written to a part file even if fewer than FLUSH_RUNS
(each run is journalled as it finishes, so an interruption loses no finished run)."""


@dataclass(frozen=True)
class RunTask:
    """One run: design point ``point``, replication ``replication`` with its ``seed``.

    ``outcomes`` lists the model outputs to keep (``None``: all of them except ``exclude``, the
    factor columns).
    """

    point: int
    replication: int
    seed: int
    scenario: Scenario
    model: Model
    outcomes: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()


def run_task(task: RunTask) -> dict[str, Any]:
    """Run one task: ``{"point", "replication", "seed", <outcome>: float, ...}`` (module-level, picklable)."""
    result = task.model(task.scenario, task.seed)
    keys = task.outcomes if task.outcomes is not None else [k for k in result if k not in task.exclude]
    missing = [k for k in keys if k not in result]
    if missing:
        raise KeyError(f"the model returned no outcome {missing[0]!r} (it returned: {', '.join(result)})")
    row: dict[str, Any] = {"point": task.point, "replication": task.replication, "seed": task.seed}
    row.update((k, float(result[k])) for k in keys)
    engine = getattr(result, "engine", None)  # a RunSummary names the engine that ran
    if isinstance(engine, str):
        row.update(engine=engine, engine_reason=getattr(result, "engine_reason", None))
    return row


def runs_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Run records as a DataFrame: int64 point, replication and seed, float64 outcomes."""
    frame = pd.DataFrame(list(rows))
    if frame.empty:
        return pd.DataFrame({c: pd.Series(dtype="int64") for c in ("point", "replication", "seed")})
    return frame.astype({"point": "int64", "replication": "int64", "seed": "int64"})


def _progress(enabled: bool, console: Console | None = None) -> Progress:
    """A progress bar on stderr, shown in a terminal and in Jupyter (where rich reports no
    terminal but renders a live widget); off when output goes to a file or a pipe."""
    console = console if console is not None else Console(stderr=True)
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("runs"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        disable=not (enabled and (console.is_terminal or console.is_jupyter)),
    )


def execute(
    tasks: Sequence[RunTask],
    executor: str | Executor = "serial",
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool = False,
    description: str = "runs",
    on_batch: Callable[[list[dict[str, Any]]], None] | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Run ``tasks`` on ``executor`` (a name for :func:`make_executor`, or an executor) and return
    their records in completion order.

    ``on_batch`` receives finished records every :data:`FLUSH_RUNS` runs or :data:`FLUSH_S`
    seconds, and once more at the end — also when a run fails or the sweep is interrupted, so that
    finished work is kept; ``on_record`` receives each record as it arrives (the store's journal).
    """
    records: list[dict[str, Any]] = []
    if not tasks:  # nothing to run: start no workers
        return records
    batch: list[dict[str, Any]] = []
    last_flush = time.monotonic()
    with ExitStack() as stack:
        if isinstance(executor, str):
            made = make_executor(executor, workers=workers, scheduler=scheduler)
            stack.enter_context(made)
            executor = made
        bar = stack.enter_context(_progress(progress))
        bar_task = bar.add_task(description, total=len(tasks))
        results: Iterator[dict[str, Any]] = executor.map_unordered(run_task, tasks)
        try:
            for record in results:
                records.append(record)
                batch.append(record)
                if on_record is not None:
                    on_record(record)
                bar.advance(bar_task)
                if on_batch is not None and (
                    len(batch) >= FLUSH_RUNS or time.monotonic() - last_flush >= FLUSH_S
                ):
                    on_batch(batch)
                    batch, last_flush = [], time.monotonic()
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()
            if on_batch is not None and batch:
                on_batch(batch)
    return records


def evaluate(
    scenarios: Sequence[Scenario],
    seeds: Sequence[int],
    *,
    model: Model = simulate_summary,
    executor: str | Executor = "serial",
    workers: int | None = None,
    scheduler: str | None = None,
    outcomes: Sequence[str] | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Run every scenario with every seed (common random numbers); nothing is stored.

    Returns one row per scenario × seed: ``point`` (the scenario's index), ``replication`` (the
    seed's index), ``seed`` and one float column per outcome, sorted by point and replication.
    """
    tasks = [
        RunTask(i, r, int(seed), scenario, model, tuple(outcomes) if outcomes is not None else None)
        for i, scenario in enumerate(scenarios)
        for r, seed in enumerate(seeds)
    ]
    records = execute(tasks, executor, workers=workers, scheduler=scheduler, progress=progress)
    runs = runs_frame(records).drop(columns=list(ENGINE_COLUMNS), errors="ignore")  # not outcomes
    return runs.sort_values(["point", "replication"], ignore_index=True)


def _scenario(spec: Experiment, row: Mapping[str, Any]) -> Scenario:
    try:
        return scenario_for(spec, row)
    except ValidationError as exc:
        raise ValueError(f"point {row[POINT]}: {describe_errors(exc)}") from None
    except (ValueError, KeyError) as exc:
        raise ValueError(f"point {row[POINT]}: {exc}") from None


class SweepInterrupted(KeyboardInterrupt):
    """A sweep stopped by an interrupt (Ctrl-C): every run finished by then is stored; the message
    says how many runs the store holds and how to resume."""

    def __init__(self, directory: Path, stored: int) -> None:
        super().__init__(f"{stored} runs stored in {directory}; run the same sweep again to resume")
        self.directory = directory
        self.stored = stored


def _tasks(
    spec: Experiment,
    design: pd.DataFrame,
    numbers: Sequence[int],
    seeds: Sequence[int],
    done: set[tuple[int, int]],
    model: Model,
    max_runs: int | None,
) -> list[RunTask]:
    """The runs of the design not in ``done`` ((number, seed) pairs), at most ``max_runs`` of them."""
    done = set(done)
    outcomes = tuple(spec.outcomes) if spec.outcomes is not None else None
    exclude = tuple(spec.factor_paths)
    tasks: list[RunTask] = []
    for row, number in zip(design.to_dict(orient="records"), numbers, strict=True):
        pending = [r for r in range(spec.replications) if (number, seeds[r]) not in done]
        if not pending:
            continue
        done.update((number, seeds[r]) for r in pending)  # a point listed twice runs once
        scenario = _scenario(spec, row)
        tasks.extend(RunTask(number, r, seeds[r], scenario, model, outcomes, exclude) for r in pending)
    return tasks if max_runs is None else tasks[:max_runs]


def run_experiment(
    spec: Experiment,
    *,
    executor: str | Executor = "serial",
    workers: int | None = None,
    scheduler: str | None = None,
    results_dir: str | Path | None = "results",
    progress: bool = True,
    model: Model = simulate_summary,
    max_runs: int | None = None,
    points: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Run (or resume) an experiment and return its tidy results table.

    * ``executor``: ``"serial"``, ``"processes"``, ``"dask"`` (see :func:`make_executor`, with
      ``workers`` and ``scheduler``) or an executor object (kept open by the caller);
    * ``results_dir``: runs are stored in ``<results_dir>/<spec.name>/`` as they finish, and runs
      already there — matched by their point's factor values and their seed, so a spec that gains
      design points or replications reuses them (:mod:`speedtrap.experiments.identity`) — are not
      run again; ``None`` stores nothing;
    * ``points``: explicit design points (one column per factor path, e.g. a Saltelli sample)
      instead of the spec's design;
    * ``max_runs``: run at most this many new runs, then stop (the table holds what is done).

    The table has one row per point × replication, sorted by both: ``point``, ``replication``,
    ``seed``, one column per factor (named by its path) and one float column per outcome.
    ``table.attrs`` records ``factors`` and ``outcomes`` (the column names) for the statistics
    helpers. The engine that ran each run is in the store's rows, not in the table
    (:data:`~speedtrap.experiments.store.ENGINE_COLUMNS`).

    Before any run, a store that cannot be used raises a one-line
    :class:`~speedtrap.experiments.store.StoreError` naming the path: runs the spec cannot reuse
    (another base scenario, root seed, model, …: :class:`StoreMismatchError`, naming what
    changed), a path of the wrong kind, a damaged ``spec.json``, a directory this process cannot
    write while runs remain (a complete one is read as it is), or another sweep writing it
    (:class:`~speedtrap.experiments.store.StoreLockedError`, naming its pid). An interrupt
    (Ctrl-C) stores every run finished by then and raises :class:`SweepInterrupted`, a
    ``KeyboardInterrupt`` that says how many runs are stored.
    """
    if max_runs is not None and max_runs < 0:
        raise ValueError(f"max_runs must be ≥ 0, got {max_runs}")
    design = design_points(spec) if points is None else check_points(spec, points)
    seeds = replication_seeds(spec.seed, spec.replications)
    if results_dir is None:
        numbers = [int(p) for p in design[POINT]]  # each design point's number
        tasks = _tasks(spec, design, numbers, seeds, set(), model, max_runs)
        records = execute(
            tasks, executor, workers=workers, scheduler=scheduler, progress=progress, description=spec.name
        )
        return results_table(design, runs_frame(records), spec.factor_paths)
    store = ResultStore(Path(results_dir) / spec.name)
    identity = experiment_identity(spec, design, seeds, model, fixed=True if points is not None else None)

    def save(batch: list[dict[str, Any]]) -> None:
        store.append(runs_frame(batch))

    with store.writing() as unwritable:
        try:
            adoption = adopt(store.directory, store.identity(), identity)  # refuses a store of other runs
            done = store.completed_keys(by="seed")  # (number, seed) of the stored runs
            tasks = _tasks(spec, design, adoption.numbers, seeds, done, model, max_runs)
            if unwritable is not None:
                if tasks:
                    raise store.unwritable_error(unwritable, len(tasks))
            else:
                if adoption.rewrite:  # new points or replications: stored runs stay valid
                    store.extend_identity(adoption.identity)
                store.open(adoption.identity)
                execute(
                    tasks,
                    executor,
                    workers=workers,
                    scheduler=scheduler,
                    progress=progress,
                    description=spec.name,
                    on_batch=save,
                    on_record=store.record,
                )
            runs = design_runs(store.read(), design[POINT], adoption.numbers, seeds)
        except KeyboardInterrupt:
            raise SweepInterrupted(store.directory, len(store.completed_keys())) from None
    return results_table(design, runs, spec.factor_paths)


def design_runs(
    runs: pd.DataFrame, points: Sequence[int] | pd.Series, numbers: Sequence[int], seeds: Sequence[int]
) -> pd.DataFrame:
    """The stored ``runs`` of the design: those of design point ``points[i]`` (stored as number
    ``numbers[i]``) with one of the replication ``seeds``, renumbered by design point and by the
    seed's replication. Runs of points no longer in the design are left out."""
    if runs.empty:
        return runs
    replication_of = {int(seed): r for r, seed in enumerate(seeds)}
    runs = runs[runs["seed"].isin(list(replication_of))]
    mapping = pd.DataFrame(
        {"_stored": pd.Series(numbers, dtype="int64"), POINT: pd.Series(list(points), dtype="int64")}
    )
    runs = runs.rename(columns={POINT: "_stored"}).merge(mapping, on="_stored", how="inner")
    return runs.drop(columns="_stored").assign(replication=runs["seed"].map(replication_of).astype("int64"))


def results_table(design: pd.DataFrame, runs: pd.DataFrame, factors: Sequence[str]) -> pd.DataFrame:
    """Runs joined with their design points' factor values, in the documented column order."""
    outcome_columns = [c for c in runs.columns if c not in ("point", "replication", "seed", *ENGINE_COLUMNS)]
    table = runs.merge(design, on=POINT, how="inner", validate="many_to_one")
    table = table[["point", "replication", "seed", *factors, *outcome_columns]]  # no engine columns
    table = table.sort_values(["point", "replication"], ignore_index=True)
    table.attrs = {"factors": list(factors), "outcomes": outcome_columns}
    return table
