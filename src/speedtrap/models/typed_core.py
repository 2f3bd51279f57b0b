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

What it covers (:func:`not_covered` names the first thing a scenario needs beyond it): one backend
whose speed is the roofline physics, routed by the ``always`` policy; the ``expected_wait``
attention rule; agents doing the whole task (``delegated_fraction`` 1). Within that every option of
the task mix, the developer, review and fixing is followed.
"""

from __future__ import annotations

import importlib
import warnings
from types import ModuleType
from typing import Any

from speedtrap.build import MODELS, StaleBuildWarning, core_state, pure_requested
from speedtrap.config.scenario import Scenario
from speedtrap.models.base import fewer_collections

__all__ = ["core_module", "not_covered", "run_core"]

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


def not_covered(scenario: Scenario) -> str | None:
    """The first thing ``scenario`` needs that the typed core does not do, or ``None`` (module
    docstring)."""
    from speedtrap.policies.always import AlwaysPolicy
    from speedtrap.policies.base import build_policy

    if len(scenario.backends) != 1:
        return f"{len(scenario.backends)} backends (the core runs one)"
    policy = build_policy(scenario.policy, scenario.backends)
    if type(policy) is not AlwaysPolicy:
        return f"policy kind {scenario.policy.kind!r} (the core runs 'always')"
    attention = scenario.developer.attention
    if attention.rule != "expected_wait":
        return f"attention rule {attention.rule!r} (the core runs 'expected_wait')"
    if scenario.developer.delegated_fraction != 1.0:
        return "delegated_fraction below 1 (hand work beside the agent)"
    from speedtrap.serving.replica import ReplicaPhysics

    name, _ = _route(scenario)
    speed = ReplicaPhysics.from_backend(scenario.backends[name])
    if type(speed) is not ReplicaPhysics:
        return f"backend {name!r}'s speed model {type(speed).__name__} (the core runs the roofline physics)"
    return None


def _route(scenario: Scenario) -> tuple[str, str]:
    from speedtrap.policies.base import build_policy

    route = build_policy(scenario.policy, scenario.backends).for_session("medium", 0)
    return route.backend, route.tier


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

    name, tier_name = _route(scenario)
    spec = scenario.backends[name]
    speed = ReplicaPhysics.from_backend(spec)
    kv_capacity = float(speed.kv_capacity_tokens)
    if not kv_capacity > 0:  # as ServingPool refuses it
        raise ValueError(f"speed.kv_capacity_tokens must be positive, got {kv_capacity}")
    tier = next(t for t in spec.tiers if t.name == tier_name)
    price = spec.price.for_cache_ttl(scenario.task_mix.cache_ttl_s)
    info = TierAdmission(tier, PriorityLevel(tier.priority), price, spec.cache_writes)
    with fewer_collections():  # the sessions and tasks are Python objects: collect as the Mesa model does
        core = module.Core(scenario, seed, name, tier_name, speed, info, tables)
        horizon = scenario.horizon_s
        if progress is None:
            core.run_until(horizon)
        else:
            for k in range(1, slices + 1):
                core.run_until(horizon if k == slices else horizon * k / slices)
                progress(k / slices)
        core.finish()
    return core
