"""The typed core: the workflow model's hot path compiled with Cython, for the scenarios it covers.

``speedtrap.models._typed_core`` (Cython, built on install where a C compiler and Cython are found;
``hatch_build.py``) runs the event loop, the serving pool, the agent sessions and the developers of
one run in C structures, rule for rule as :class:`~speedtrap.models.workflow.WorkflowModel` and its
agents do, with the same random streams drawn in the same order: its tables and summary are the
Mesa model's, bit for bit (``tests/models/test_typed_core.py``). :func:`~speedtrap.models.simulate`
and :func:`~speedtrap.models.simulate_summary` use it where it is built and :func:`not_covered`
finds nothing it lacks; everything else — and every run when it is not built, is stale, or
``SPEEDTRAP_PURE`` is set — runs on the Mesa model, which stays the public face (``WorkflowModel``,
its agents, traces, replays).

What it covers (:func:`not_covered` names the first thing a scenario needs beyond it): the one
backend a run's sessions are routed to, every tier of it (a scenario may hold other backends, idle
under the policies the core runs: :func:`backend_stats` gives their rows as the Mesa model's idle
pools do), and every field of the scenario that :mod:`speedtrap.models.core_fields` lists as read by
the core; each field only the Mesa model reads (``MESA_ONLY``: the routing policy's kind, ``always``,
``manual``, or one that routes one backend's tiers, ``fast_share`` by developer, ``interactive_fast``
and ``background_slow`` by turn; the attention rule; a prompt cache per tier) at a value the core
runs. The core's pool admits several tiers as :class:`~speedtrap.serving.pool.ServingPool` does
(priority levels, per-tier batch caps and prices, reservations), and each developer's routes come
from the policy's own ``for_developer``, ``for_session`` and ``for_turn`` (:func:`_developer_routes`).
Hybrid hand work beside the agent (``delegated_fraction`` below 1) and the manual policy are the
core's (issue 41). Every run names its engine (:class:`Engine`, recorded in ``RunResult``, the
summary, the JSON outputs, the sweep store's rows, ``claim.json`` and the provenance record).

The Mesa model is the reference: every rule is written there first, and each function of the core
names, in its docstring, the Mesa method it mirrors. The randomised differential test
(``tests/models/test_engine_differential.py``) and the mutation check (``scripts/mutants.py``,
docs/performance.md) hold the two to each other.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from speedtrap.build import MODELS, StaleBuildWarning, core_state, pure_requested
from speedtrap.config.scenario import Scenario
from speedtrap.models.base import fewer_collections
from speedtrap.models.core_fields import mesa_only_field

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "MESA",
    "TYPED_CORE",
    "Engine",
    "backend_stats",
    "choose_engine",
    "core_module",
    "engine_for",
    "engines_of",
    "not_covered",
    "run_core",
]

TYPED_CORE = "typed core"
"""The name :class:`Engine` gives a run of the compiled typed core."""
MESA = "mesa"
"""The name :class:`Engine` gives a run of the Mesa model
(:class:`~speedtrap.models.workflow.WorkflowModel`)."""


@dataclass(frozen=True)
class Engine:
    """Which engine ran a run: ``name`` :data:`TYPED_CORE` or :data:`MESA`, and ``reason`` why the
    typed core was not taken (``None`` when it was): what :func:`not_covered` names, ``"SPEEDTRAP_PURE=1"``,
    ``"not built"``, ``"stale build"`` or ``"trace asked for"``."""

    name: str
    reason: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        """``{"engine": name, "engine_reason": reason}`` (the keys of every JSON output and store row)."""
        return {"engine": self.name, "engine_reason": self.reason}


def unavailable_reason() -> str:
    """Why :func:`core_module` gives no core here: ``"SPEEDTRAP_PURE=1"``, ``"not built"``, ``"stale
    build"``, or ``"not in use"`` (built and fresh, but left out by the caller)."""
    if pure_requested():
        return "SPEEDTRAP_PURE=1"
    state = core_state()
    if state == "absent":
        return "not built"
    if state == "stale":
        return "stale build (its source changed since it was compiled; reinstall speedtrap)"
    return "not in use"


def choose_engine(module: ModuleType | None, scenario: Scenario, *, trace: bool = False) -> Engine:
    """The engine :func:`~speedtrap.models.simulate` and :func:`~speedtrap.models.simulate_summary`
    run ``scenario`` on, given the core ``module`` in use (:func:`core_module`; ``None``: none) and
    whether a ``trace`` is asked for (the core keeps none)."""
    if module is None:
        return Engine(MESA, unavailable_reason())
    if trace:
        return Engine(MESA, "trace asked for (the typed core keeps no ledger trace)")
    reason = not_covered(scenario)
    return Engine(MESA, reason) if reason is not None else Engine(TYPED_CORE)


def engine_for(scenario: Scenario, *, trace: bool = False) -> Engine:
    """The engine a run of ``scenario`` takes in this process (:func:`choose_engine` with
    :func:`core_module`)."""
    return choose_engine(core_module(), scenario, trace=trace)


_loaded: dict[str, ModuleType | None] = {}


def core_module() -> ModuleType | None:
    """The compiled core, or ``None`` where it is not built, ``SPEEDTRAP_PURE`` is set, or it is
    stale (then with a :class:`~speedtrap.build.StaleBuildWarning`: an editable install whose source
    changed since it was compiled; reinstall, or ``make``, to compile it again)."""
    if pure_requested():
        return None
    if "core" not in _loaded:
        state = core_state()
        module = None
        if state == "fresh":
            module = importlib.import_module("speedtrap.models._typed_core")
        elif state == "stale":
            warnings.warn(
                f"the compiled typed core in {MODELS} was built from another source than the one beside "
                "it; running the Mesa model (reinstall speedtrap to compile it again)",
                StaleBuildWarning,
                stacklevel=2,
            )
        _loaded["core"] = module
    return _loaded["core"]


def engines_of(scenarios: Mapping[str, Scenario]) -> dict[str, dict[str, str | None]]:
    """Each labelled scenario's engine as JSON data (:meth:`Engine.as_dict` of :func:`engine_for`),
    for :func:`speedtrap.provenance.provenance`."""
    return {label: engine_for(scenario).as_dict() for label, scenario in scenarios.items()}


def not_covered(scenario: Scenario) -> str | None:
    """Why the typed core does not run ``scenario``, or ``None``: the first field only the Mesa model
    reads (:data:`~speedtrap.models.core_fields.MESA_ONLY`) set to another value than the one the core
    runs, named by its path (a routing policy the core does not run among them: one that could send
    sessions to more than one backend, route a session by its task, or fan it out). Every other field
    of the spec is one the core reads or one no engine reads (:mod:`speedtrap.models.core_fields`)."""
    return mesa_only_field(scenario)


def backend_stats(core: Any, scenario: Scenario) -> pd.DataFrame:
    """The run's backend statistics as :meth:`WorkflowModel.backend_stats_frame
    <speedtrap.models.workflow.WorkflowModel.backend_stats_frame>` gives them: a row per backend of
    ``scenario`` in its order, the routed one's from the core (every tier's requests together, as the
    Mesa model's pool counts them), every other one idle (no session of a run the core covers can
    reach it: its pool serves nothing, so 0 streams in service and
    waiting, utilization 0 and 0 requests, on its own replicas and slot capacity, as the Mesa model's
    idle :class:`~speedtrap.serving.pool.ServingPool` reports them)."""
    import pandas as pd

    routed = core.backend_stats_frame()
    if len(scenario.backends) == 1:
        return routed
    route, _ = _route(scenario)
    rows = []
    for name, spec in scenario.backends.items():
        if name == route:
            rows.append(routed.iloc[0].to_dict())
            continue
        rows.append(
            {
                "backend": name,
                "replicas": spec.replicas,
                # as ServingPool.capacity_streams: replicas × the largest tier cap
                "capacity_streams": spec.replicas * max(t.batch_cap for t in spec.tiers),
                "mean_in_service": 0.0,
                "mean_waiting": 0.0,
                "utilization": 0.0,
                "requests": 0,
            }
        )
    return pd.DataFrame(rows).astype(routed.dtypes.to_dict())


def _route(scenario: Scenario) -> tuple[str, str]:
    """The backend the run's sessions take and a session's tier (``for_session``'s route: every policy
    the core runs keeps one backend); under ``manual``, which opens none, the only backend and its
    default tier (its pool stays idle, as the Mesa model's does)."""
    from speedtrap.policies.base import build_policy

    if scenario.policy.kind == "manual":
        name, backend = next(iter(scenario.backends.items()))
        return name, backend.default_tier
    route = build_policy(scenario.policy, scenario.backends).for_session("medium", 0)
    return route.backend, route.tier


def _developer_routes(scenario: Scenario, backend: str) -> list[tuple[str, str, str]]:
    """Each developer's tiers on ``backend`` as the Mesa model's developers ask their policy
    (``RoutingPolicy.for_developer``; every policy kind the core runs routes a session alike whatever
    its task's difficulty and attempt): the session's route (``for_session``, the tier of its
    estimate key until a turn moves it), a turn's while the developer attends the session
    (``for_turn(..., attending=True)``) and while not (``attending=False``). Under ``manual``, which
    opens no session, the backend's default tier."""
    from speedtrap.policies.base import build_policy

    n = scenario.developers
    if scenario.policy.kind == "manual":
        tier = scenario.backends[backend].default_tier
        return [(tier, tier, tier)] * n
    shared = build_policy(scenario.policy, scenario.backends)
    tiers = []
    for index in range(n):
        policy = shared.for_developer(index, n)
        session = policy.for_session("medium", 0)
        routes = (session, policy.for_turn(session, True), policy.for_turn(session, False))
        for route in routes:
            if route.backend != backend:  # Session._start_turn's rule: a session keeps its backend
                raise ValueError(
                    f"policy moved a turn from backend {backend!r} to {route.backend!r}; "
                    "a session keeps its backend (only the tier may change per turn)"
                )
        tiers.append((session.tier, routes[1].tier, routes[2].tier))
    return tiers


def run_core(
    module: ModuleType,
    scenario: Scenario,
    seed: int | None,
    *,
    tables: bool = True,
    progress: Any = None,
    slices: int = 50,
) -> Any:
    """Run ``scenario`` with root seed ``seed`` on the compiled core ``module`` to its horizon (in
    ``slices`` equal slices with a ``progress`` callback, as :func:`~speedtrap.models.simulate`
    does) and return the finished core: with ``tables``, its tables (``ledger_frame``,
    ``requests_frame``, ``stretches_frame``, ``tasks``, ``backend_stats_frame``); without, only what
    the summary needs (``ledger_frame``, ``summary_parts``, ``backend_stats_frame``), folded as the
    Mesa model's summary-only run folds it (each finished request into a ``RequestTally``, each final
    task into a ``TaskTally``; a request's slot is reused once its turn ends)."""
    from speedtrap.serving.admission import PriorityLevel, TierAdmission
    from speedtrap.serving.replica import ReplicaPhysics

    name, _ = _route(scenario)
    spec = scenario.backends[name]
    speed = ReplicaPhysics.from_backend(spec)
    kv_capacity = float(speed.kv_capacity_tokens)
    if not kv_capacity > 0:  # as ServingPool refuses it
        raise ValueError(f"speed.kv_capacity_tokens must be positive, got {kv_capacity}")
    tiers = [t.name for t in spec.tiers]
    price = spec.price.for_cache_ttl(scenario.task_mix.cache_ttl_s)
    # ServingPool.__init__: a PriorityLevel per distinct priority, a TierAdmission per tier
    levels = {p: PriorityLevel(p) for p in {t.priority for t in spec.tiers}}
    infos = [TierAdmission(t, levels[t.priority], price, spec.cache_writes) for t in spec.tiers]
    routes = [tuple(tiers.index(tier) for tier in route) for route in _developer_routes(scenario, name)]
    with fewer_collections():  # the sessions and tasks are Python objects: collect as the Mesa model does
        core = module.Core(scenario, seed, name, tiers, routes, speed, infos, tables)
        horizon = scenario.horizon_s
        if progress is None:
            core.run_until(horizon)
        else:
            for k in range(1, slices + 1):
                core.run_until(horizon if k == slices else horizon * k / slices)
                progress(k / slices)
        core.finish()
    return core
