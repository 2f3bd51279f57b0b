"""WorkflowModel: developers, their agent sessions and the shared backends on one Mesa timeline."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from itertools import chain
from typing import Any, NoReturn

import numpy as np
import pandas as pd

from speedtrap.agents.backend import Backend
from speedtrap.agents.developer import Developer, TaskFeed
from speedtrap.agents.task import Task
from speedtrap.config.scenario import Scenario
from speedtrap.models.base import EventModel, fewer_collections
from speedtrap.models.ledger import Ledger
from speedtrap.models.results import RunResult, RunSummary, request_means, summarize, tasks_frame
from speedtrap.models.tallies import TaskCounts, TaskTally, task_counts
from speedtrap.models.tasks import ATTENTION_STREAM, TaskSource, stream_rng
from speedtrap.models.typed_core import Engine, backend_stats, choose_engine, core_module, run_core
from speedtrap.policies.base import build_policy
from speedtrap.serving.request import REQUEST_COLUMNS, tally_means
from speedtrap.serving.speed import SpeedModel


def check_root_seed(rng: object) -> None:
    """Refuse a root seed that is not an integer or ``None`` (every stream is spawned from it)."""
    if rng is not None and (isinstance(rng, bool) or not isinstance(rng, int | np.integer)):
        raise TypeError(
            f"rng must be an integer root seed or None, got {type(rng).__name__}: every random "
            "stream of the run is spawned from the seed (pass e.g. rng=1)"
        )


class WorkflowModel(EventModel):
    """The developer workflow of one scenario, advanced with ``run_until(t)`` (seconds).

    ``rng`` is the run's root seed, an integer (or ``None``: fresh entropy): every random stream
    (tasks, agent behaviour, quality draws, human behaviour) is spawned from it by key, so the same
    seed gives the same task stream under every backend and policy. A ``numpy`` Generator is
    refused (streams are spawned from a seed, not drawn from a generator). ``speeds`` optionally
    replaces the roofline speed of named backends (e.g. ``{"gpu-batched": FixedRate(65.0)}``).
    ``trace`` keeps every ledger interval. ``task_sources`` optionally replaces each developer's
    backlog (developer index → task feed), e.g. with recorded sessions
    (:mod:`speedtrap.sessions.replay`). ``tables=False`` keeps only what :meth:`summary` needs
    (memory that does not grow with finished requests and agent stretches, but for a few packed
    floats per request and the task list); :meth:`result` then refuses.

    Mesa's ``step()`` advances one time unit (1 s), never past the horizon, and counts
    ``steps``; ``running`` becomes ``False`` once the horizon is reached (by ``step`` or
    ``run_until``). ``mesa.batch_run`` is refused with a pointer to the experiment runner: it
    counts steps rather than time and needs a DataCollector.
    """

    def __init__(
        self,
        scenario: Scenario,
        *,
        rng: int | None = None,
        speeds: Mapping[str, SpeedModel] | None = None,
        trace: bool = False,
        task_sources: Callable[[int], TaskFeed] | None = None,
        tables: bool = True,
    ) -> None:
        check_root_seed(rng)
        root = np.random.SeedSequence(rng)
        super().__init__(rng=np.random.default_rng(np.random.SeedSequence(root.entropy, spawn_key=(99,))))
        self.spec = scenario
        """The scenario being run (Mesa's own ``Model.scenario`` is a different, Mesa concept)."""
        self.seed = rng
        self.tables = tables
        self.root_seed = root
        speeds = speeds or {}
        unknown = sorted(set(speeds) - set(scenario.backends))
        if unknown:
            raise KeyError(
                f"speeds names unknown backend {unknown[0]!r} (known: {', '.join(scenario.backends)})"
            )
        self.backends: dict[str, Backend] = {
            name: Backend(
                self,
                name,
                spec,
                speed=speeds.get(name),
                record=tables,
                cache_ttl_s=scenario.task_mix.cache_ttl_s,
            )
            for name, spec in scenario.backends.items()
        }
        self.policy = build_policy(scenario.policy, scenario.backends)
        self.ledger = Ledger(scenario.developers, trace=trace)
        self.tasks: list[Task] = []
        """Every task started (with ``tables=True``; a summary-only run keeps the unfinished ones
        in ``task_tally`` and folds the rest)."""
        self.task_tally: TaskTally | None = None if tables else TaskTally()
        with fewer_collections():  # many new objects: as while events run
            self.developers = self._developers(scenario, root, task_sources, tables)
            for developer in self.developers:
                developer.start()

    def _developers(
        self,
        scenario: Scenario,
        root: np.random.SeedSequence,
        task_sources: Callable[[int], TaskFeed] | None,
        tables: bool,
    ) -> list[Developer]:
        return [
            Developer(
                self,
                i,
                spec=scenario.developer,
                task_mix=scenario.task_mix,
                tasks=TaskSource(root, i, scenario.task_mix, scenario.developer)
                if task_sources is None
                else task_sources(i),
                policy=self.policy.for_developer(i, scenario.developers),
                backends=self.backends,
                ledger=self.ledger,
                rng=stream_rng(root, ATTENTION_STREAM, i),
                on_task_started=self.tasks.append if self.task_tally is None else self.task_tally.started,
                keep_stretches=tables,
            )
            for i in range(scenario.developers)
        ]

    def run_until(self, end_time: float) -> None:
        """Run every event up to ``end_time`` seconds; at the horizon, ``running`` becomes False."""
        super().run_until(end_time)
        if self.time >= self.spec.horizon_s:
            self.running = False

    def _wrapped_step(self) -> None:
        """What Mesa's ``model.step()`` runs: one time unit (1 s), never past the horizon."""
        if self.time < self.spec.horizon_s:
            self.run_until(min(self.time + 1.0, self.spec.horizon_s))
            self.steps += 1
        self.running = self.time < self.spec.horizon_s

    @property
    def datacollector(self) -> NoReturn:
        """Not available: ``mesa.batch_run`` counts steps, not time, and collects through a Mesa
        DataCollector; speedtrap's experiment runner replaces it."""
        raise TypeError(
            "WorkflowModel does not run under mesa.batch_run (it counts 1-s steps, not the horizon, and "
            "needs a DataCollector): use speedtrap.experiments.evaluate or run_experiment"
        )

    def settle(self) -> None:
        """Charge every developer's current activity up to now (idempotent)."""
        for developer in self.developers:
            developer.charge()

    def result(self) -> RunResult:
        """The run's tidy results as of now (normally the horizon); needs ``tables=True``."""
        if not self.tables:
            raise ValueError(
                "this run kept no tables (tables=False): ask for summary(), or run with tables=True"
            )
        self.settle()
        with fewer_collections():  # large tables of new objects: as while events run
            return RunResult(
                scenario=self.spec,
                seed=self.seed,
                horizon_s=float(self.time),
                ledger=self.ledger.frame(),
                tasks=tasks_frame(self.tasks),
                requests=self.requests_frame(),
                backend_stats=self.backend_stats_frame(),
                trace=self.ledger.trace_frame(),
                stretches=self.stretches_frame(),
            )

    def task_counts(self) -> TaskCounts:
        """The task aggregates of the summary, of every task started so far."""
        if self.task_tally is not None:
            return self.task_tally.counts()
        return task_counts(tasks_frame(self.tasks))

    def summary(self) -> dict[str, float]:
        """The run's flat summary as of now: ``result().summary()``, bit for bit, without building
        the request and stretch tables (and with ``tables=False``, without having kept them)."""
        self.settle()
        tallies = [b.tally for b in self.backends.values() if b.tally is not None]
        if len(tallies) == len(self.backends):
            requests = tally_means(tallies)
        else:
            requests = request_means(self.requests_frame())
        return summarize(
            self.spec,
            float(self.time),
            self.ledger.frame(),
            self.task_counts(),
            requests,
            self.backend_stats_frame(),
        )

    # ------------------------------------------------------------------ the run's tables

    def requests_frame(self) -> pd.DataFrame:
        """Every backend's finished requests, with backend, developer, task, attempt and turn columns."""
        frames = []
        for name, backend in self.backends.items():
            frame = backend.pool.requests_frame()
            # (developer, task, attempt, turn) of every request
            flat = np.fromiter(chain.from_iterable(frame.pop("tag")), dtype=np.int64, count=4 * len(frame))
            tags = flat.reshape(len(frame), 4)
            frame.insert(0, "backend", pd.Series([name] * len(frame), dtype="str", index=frame.index))
            for i, column in enumerate(("developer", "task", "attempt", "turn")):
                frame[column] = pd.Series(tags[:, i], dtype="int64", index=frame.index)
            frames.append(frame)
        columns = [
            "backend",
            *(c for c in REQUEST_COLUMNS if c != "tag"),
            "developer",
            "task",
            "attempt",
            "turn",
        ]
        return pd.concat(frames, ignore_index=True)[columns].sort_values(
            "arrival_s", kind="stable", ignore_index=True
        )

    def backend_stats_frame(self) -> pd.DataFrame:
        """Per backend: replicas, own-slot capacity, time-averaged own streams in service and waiting,
        utilization (busy own slots / capacity) and finished requests."""
        rows = []
        for name, backend in self.backends.items():
            pool = backend.pool
            rows.append(
                {
                    "backend": name,
                    "replicas": pool.replicas,
                    "capacity_streams": pool.capacity_streams,
                    "mean_in_service": pool.mean_in_service,
                    "mean_waiting": pool.mean_waiting,
                    "utilization": pool.utilization,
                    "requests": pool.completed,
                }
            )
        return pd.DataFrame(rows)

    def stretches_frame(self) -> pd.DataFrame:
        """Every agent stretch of the run (see :class:`RunResult`), closed sessions first."""
        rows: list[tuple[Any, ...]] = []
        for dev in self.developers:
            rows.extend((dev.index, *row) for row in dev.closed_stretches)
            for session in dev.sessions:
                rows.extend((dev.index, session.task.index, session.attempt, *r) for r in session.stretches)
        frame = pd.DataFrame(
            rows, columns=["developer", "task", "attempt", "handoff_s", "need_s", "back_s", "transcript"]
        )
        for column in ("need_s", "back_s"):
            frame[column] = frame[column].astype("float64").replace(math.inf, math.nan)
        return frame


PROGRESS_SLICES = 50
"""Equal slices of the horizon a run with a ``progress`` callback is advanced in (one call each)."""


def simulate(
    scenario: Scenario,
    seed: int | None = None,
    *,
    trace: bool = False,
    progress: Callable[[float], None] | None = None,
) -> RunResult:
    """Run ``scenario`` with root seed ``seed`` to its horizon and return the results.

    ``progress``, if given, is called with the fraction of the horizon simulated (0 < f <= 1) after
    each of :data:`PROGRESS_SLICES` equal slices; the results are those of one uninterrupted run
    (events run in the same order: a slice ends only between events).

    Where the typed core is built and covers the scenario (:mod:`speedtrap.models.typed_core`), and
    no ``trace`` is asked for, the run is the core's: the same results, bit for bit.
    """
    core, engine = _typed_core_for(scenario, trace=trace)
    if core is not None:
        check_root_seed(seed)
        with fewer_collections():
            run = run_core(core, scenario, seed, progress=progress, slices=PROGRESS_SLICES)
            return RunResult(
                scenario=scenario,
                seed=seed,
                horizon_s=float(run.time),
                ledger=run.ledger_frame(),
                tasks=tasks_frame(run.tasks()),
                requests=run.requests_frame(),
                backend_stats=backend_stats(run, scenario),
                trace=None,
                stretches=run.stretches_frame(),
                engine=engine.name,
                engine_reason=None,
            )
    model = WorkflowModel(scenario, rng=seed, trace=trace)
    if progress is None:
        model.run_until(scenario.horizon_s)
    else:
        for k in range(1, PROGRESS_SLICES + 1):
            model.run_until(
                scenario.horizon_s if k == PROGRESS_SLICES else scenario.horizon_s * k / PROGRESS_SLICES
            )
            progress(k / PROGRESS_SLICES)
    return dataclasses.replace(model.result(), engine=engine.name, engine_reason=engine.reason)


def simulate_summary(scenario: Scenario, seed: int | None = None) -> RunSummary:
    """The experiment engine's model function: ``simulate(scenario, seed).summary()``, bit for bit,
    from a run that keeps no per-request or per-stretch tables (``WorkflowModel(tables=False)``, or
    the typed core's run without tables where it is built and covers the scenario), naming the engine
    that ran (:class:`~speedtrap.models.results.RunSummary`)."""
    core, engine = _typed_core_for(scenario)
    if core is not None:
        check_root_seed(seed)
        with fewer_collections():
            run = run_core(core, scenario, seed, tables=False)
            counts, requests = run.summary_parts()
            values = summarize(
                scenario, float(run.time), run.ledger_frame(), counts, requests, backend_stats(run, scenario)
            )
            return RunSummary(values, engine)
    model = WorkflowModel(scenario, rng=seed, tables=False)
    model.run_until(scenario.horizon_s)
    return RunSummary(model.summary(), engine)


def _typed_core_for(scenario: Scenario, *, trace: bool = False) -> tuple[Any, Engine]:
    """The compiled typed core if it is in use, covers ``scenario`` and no ``trace`` is asked for
    (else ``None``), and the engine the run takes (:func:`~speedtrap.models.typed_core.choose_engine`)."""
    module = core_module()
    engine = choose_engine(module, scenario, trace=trace)
    return (module if engine.reason is None else None), engine
