"""WorkflowModel: developers, their agent sessions and the shared backends on one Mesa timeline."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from speedtrap.agents.backend import Backend
from speedtrap.agents.developer import Developer, TaskFeed
from speedtrap.agents.task import Task
from speedtrap.config.scenario import Scenario
from speedtrap.models.base import EventModel
from speedtrap.models.ledger import Ledger
from speedtrap.models.results import RunResult, build_result
from speedtrap.models.tasks import ATTENTION_STREAM, TaskSource, stream_rng
from speedtrap.serving.speed import SpeedModel


class WorkflowModel(EventModel):
    """The developer workflow of one scenario, advanced with ``run_until(t)`` (seconds).

    ``rng`` is the run's root seed: every random stream (tasks, agent behaviour, quality draws,
    human behaviour) is spawned from it by key, so the same seed gives the same task stream under
    every backend and policy. ``speeds`` optionally replaces the roofline speed of named backends
    (e.g. ``{"gpu-batched": FixedRate(65.0)}``). ``trace`` keeps every ledger interval.
    ``task_sources`` optionally replaces each developer's backlog (developer index → task feed),
    e.g. with recorded sessions (:mod:`speedtrap.sessions.replay`).
    """

    def __init__(
        self,
        scenario: Scenario,
        *,
        rng: int | None = None,
        speeds: Mapping[str, SpeedModel] | None = None,
        trace: bool = False,
        task_sources: Callable[[int], TaskFeed] | None = None,
    ) -> None:
        root = np.random.SeedSequence(rng)
        super().__init__(rng=np.random.default_rng(np.random.SeedSequence(root.entropy, spawn_key=(99,))))
        self.spec = scenario
        """The scenario being run (Mesa's own ``Model.scenario`` is a different, Mesa concept)."""
        self.seed = rng
        self.root_seed = root
        speeds = speeds or {}
        unknown = sorted(set(speeds) - set(scenario.backends))
        if unknown:
            raise KeyError(
                f"speeds names unknown backend {unknown[0]!r} (known: {', '.join(scenario.backends)})"
            )
        self.backends: dict[str, Backend] = {
            name: Backend(self, name, spec, speed=speeds.get(name))
            for name, spec in scenario.backends.items()
        }
        self.policy = scenario.policy.build(scenario.backends)
        self.ledger = Ledger(scenario.developers, trace=trace)
        self.tasks: list[Task] = []
        self.developers: list[Developer] = [
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
                on_task_started=self.tasks.append,
            )
            for i in range(scenario.developers)
        ]
        for developer in self.developers:
            developer.start()

    def settle(self) -> None:
        """Charge every developer's current activity up to now (idempotent)."""
        for developer in self.developers:
            developer.charge()

    def result(self) -> RunResult:
        """The run's tidy results as of now (normally the horizon)."""
        self.settle()
        return build_result(self)


def simulate(scenario: Scenario, seed: int | None = None, *, trace: bool = False) -> RunResult:
    """Run ``scenario`` with root seed ``seed`` to its horizon and return the results."""
    model = WorkflowModel(scenario, rng=seed, trace=trace)
    model.run_until(scenario.horizon_s)
    return model.result()


def simulate_summary(scenario: Scenario, seed: int | None = None) -> dict[str, float]:
    """The experiment engine's model function: ``simulate(scenario, seed).summary()``."""
    return simulate(scenario, seed).summary()
