"""What the analytic mean-value model covers (``speedtrap.analysis.mean_value``, whose docstring
states its rules): the overrides that put a scenario under its rules, what takes a scenario
outside them, and which backend and tier of a scenario it models."""

from __future__ import annotations

from speedtrap.config.backend import Backend
from speedtrap.config.presets import BACKEND_PRESETS, backend_preset
from speedtrap.config.scenario import Scenario
from speedtrap.config.tier import Tier

__all__ = ["ANALYTIC_RULES", "resolve_backend", "scope_problems"]

ANALYTIC_RULES: dict[str, object] = {
    "task_mix.sizing": "difficulty",
    "developer.attention.rule": "threshold",
    "developer.attention.other_work_prob": 0.5,
    "developer.checkin_every_turns": 15,
    "developer.checkin_random": False,
    "developer.delegated_fraction": 1.0,
    "developer.attention.parallel_sessions_probs": None,
    "task_mix.shared_prefix_tokens": 0,
}
"""Overrides that put a scenario under the rules this model follows (those of the workflow model
before effort sizing, expected waits and a shared prompt-cache head, with its defaults of the time: an
even split of breaks between other work and idleness, a check-in every 15 turns)."""


def scope_problems(scenario: Scenario) -> list[str]:
    """What takes ``scenario`` outside the analytic model's rules (empty: inside)."""
    dev, mix = scenario.developer, scenario.task_mix
    problems = []
    if mix.sizing != "difficulty":
        problems.append("task_mix.sizing must be 'difficulty' (tasks sized by effort are not covered)")
    if dev.attention.rule != "threshold":
        problems.append(
            "developer.attention.rule must be 'threshold' (attention by expected wait is not covered)"
        )
    if dev.checkin_random:
        problems.append("developer.checkin_random must be false (geometric agent stretches are not covered)")
    if dev.delegated_fraction != 1.0:
        problems.append("developer.delegated_fraction must be 1 (hybrid hand work is not covered)")
    if dev.attention.parallel_sessions_probs is not None:
        problems.append("developer.attention.parallel_sessions_probs must be unset (one session at a time)")
    if mix.shared_prefix_tokens:
        problems.append(
            "task_mix.shared_prefix_tokens must be 0 (a prompt-cache head shared between a developer's "
            "conversations is not covered)"
        )
    problems.extend(
        f"backends.{name}.quality.autonomy must be 1 (agent stretches scaled per backend are not covered)"
        for name, backend in sorted(scenario.backends.items())
        if backend.quality.autonomy != 1.0
    )
    if scenario.policy.kind == "manual":
        problems.append("policy 'manual' (no AI) is not covered")
    return problems


def resolve_backend(scenario: Scenario, backend: str | Backend | None) -> tuple[str, Backend, Tier]:
    """The backend to model, its name and its tier: ``backend`` (a backend of ``scenario``, a preset
    name or a spec) or by default the backend of the scenario's ``always`` policy (or its only
    backend), on the tier that policy names for it, else its default tier. Raises ``ValueError``
    for an unknown backend and, without ``backend``, for a scenario routing between several
    backends."""
    policy = scenario.policy
    always = policy.kind == "always"
    policy_backend = getattr(policy, "backend", None) if always else None
    policy_tier = getattr(policy, "tier", None) if always else None
    if backend is None:
        if policy_backend is not None:
            name = policy_backend
        elif len(scenario.backends) == 1:
            name = next(iter(scenario.backends))
        else:
            raise ValueError(
                f"scenario {scenario.name!r} routes between several backends "
                f"({', '.join(scenario.backends)}); name the one to model"
            )
        spec = scenario.backends[name]
    elif isinstance(backend, Backend):
        name, spec = backend.name, backend
    elif backend in scenario.backends:
        name, spec = backend, scenario.backends[backend]
    elif backend in BACKEND_PRESETS:
        name, spec = backend, backend_preset(backend)
    else:
        raise ValueError(
            f"backend {backend!r} is neither a backend of this scenario ({', '.join(scenario.backends)}) "
            f"nor a preset ({', '.join(BACKEND_PRESETS)})"
        )
    tier_name = policy_tier if name == policy_backend else None
    return name, spec, spec.tier(tier_name)
