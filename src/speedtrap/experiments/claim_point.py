"""A claim's stated point and its scenario against the headline one.

* :func:`resolve_stated`: a claim that states a point (``[stated]``, e.g. "6× the speed at 1.2× the
  mistakes") is tested there first — the point's values become the defaults — and then over the
  neighbourhood around it (:meth:`speedtrap.config.claim.ClaimSpec.with_neighbourhood`). A value
  stated as a speed ratio (``over = "<backend>"``) is converted here to the backend's
  ``decode_speedup``: ratio × the ``over`` backend's per-stream decode rate ÷ this backend's rate at
  ``decode_speedup`` 1, both at their typical batch and context
  (:meth:`speedtrap.serving.replica.ReplicaPhysics.decode_rate_tok_s`, the serving physics every run
  uses).
* :func:`scenario_difference`: the claims run on the headline scenario
  (``experiments/scenarios/headline.toml``) unless their file says why not (``scenario_why``); the
  difference is listed path by path, so the output shows what changed.
"""

from __future__ import annotations

from typing import Any

from speedtrap.config.claim import ClaimSpec
from speedtrap.config.scenario import Scenario
from speedtrap.experiments.files import experiments_dir

HEADLINE = "scenarios/headline.toml"
"""The headline scenario, under the experiments directory."""
MAX_DIFFERENCES = 12
"""Differences listed before the rest are counted (a new backend counts once)."""
_IGNORED = {"name"}


def decode_rate_tok_s(scenario: Scenario, backend: str, *, speedup: float | None = None) -> float:
    """A backend's per-stream decode rate (tok/s) at its typical batch and context; ``speedup``
    replaces its ``decode_speedup``."""
    from speedtrap.serving.replica import ReplicaPhysics

    spec = scenario.backends[backend]
    if speedup is not None:
        spec = spec.model_copy(update={"decode_speedup": speedup})
    physics = ReplicaPhysics.from_backend(spec)
    return float(physics.decode_rate_tok_s(spec.typical_batch, spec.typical_context_tokens))


def _backend_of(path: str) -> str:
    parts = path.split(".")
    if len(parts) != 3 or parts[0] != "backends" or parts[2] != "decode_speedup":
        raise ValueError(f"stated {path}: a speed ratio (over = ...) needs backends.<name>.decode_speedup")
    return parts[1]


def stated_scenario_values(claim: ClaimSpec) -> dict[str, float]:
    """Path → the scenario value at the claim's stated point (module docstring)."""
    if claim.stated is None:
        return {}
    out = {}
    for v in claim.stated.values:
        if v.over is None:
            out[v.path] = v.value
            continue
        backend = _backend_of(v.path)
        for name in (backend, v.over):
            if name not in claim.scenario.backends:
                raise ValueError(f"stated {v.path}: the scenario has no backend {name!r}")
        over = decode_rate_tok_s(claim.scenario, v.over)
        own = decode_rate_tok_s(claim.scenario, backend, speedup=1.0)
        out[v.path] = v.value * over / own
    return out


def resolve_stated(claim: ClaimSpec) -> ClaimSpec:
    """The claim at its stated point with the neighbourhood sampled (unchanged without one)."""
    if claim.stated is None or all(v.scenario_value is not None for v in claim.stated.values):
        return claim
    return claim.with_neighbourhood(stated_scenario_values(claim))


def _flat(node: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            out.update(_flat(value, f"{prefix}{key}."))
        return out
    return {prefix[:-1]: node}


def headline_scenario() -> Scenario:
    """The headline scenario file."""
    return Scenario.from_toml(experiments_dir() / HEADLINE)


def scenario_difference(scenario: Scenario, headline: Scenario | None = None) -> list[str]:
    """How ``scenario`` differs from the headline one, path by path ("path: headline → claim"; a
    backend the headline lacks as one line), at most :data:`MAX_DIFFERENCES` lines and a count."""
    base = (headline or headline_scenario()).model_dump(mode="json")
    mine = scenario.model_dump(mode="json")
    lines = []
    for name in sorted(set(mine.get("backends", {})) - set(base.get("backends", {}))):
        lines.append(f"backends.{name}: added (not in the headline scenario)")
    for name in sorted(set(base.get("backends", {})) - set(mine.get("backends", {}))):
        lines.append(f"backends.{name}: removed")
    shared = set(mine.get("backends", {})) & set(base.get("backends", {}))
    whole = {"backends"}
    if (base.get("policy") or {}).get("kind") != (mine.get("policy") or {}).get("kind"):
        whole.add("policy")  # another kind of policy: one line, not its fields
        lines.append(
            f"policy: {_short(_set_fields(base.get('policy')))} → {_short(_set_fields(mine.get('policy')))}"
        )
    flat_base = _flat({k: v for k, v in base.items() if k not in whole})
    flat_mine = _flat({k: v for k, v in mine.items() if k not in whole})
    for name in sorted(shared):
        flat_base |= _flat(base["backends"][name], f"backends.{name}.")
        flat_mine |= _flat(mine["backends"][name], f"backends.{name}.")
    for path in sorted(set(flat_base) | set(flat_mine)):
        if path in _IGNORED:
            continue
        a, b = flat_base.get(path, "(none)"), flat_mine.get(path, "(none)")
        if a != b:
            lines.append(f"{path}: {_short(a)} → {_short(b)}")
    if len(lines) > MAX_DIFFERENCES:
        lines = [*lines[:MAX_DIFFERENCES], f"… and {len(lines) - MAX_DIFFERENCES} more"]
    return lines


def _set_fields(policy: Any) -> Any:
    return {k: v for k, v in policy.items() if v is not None} if isinstance(policy, dict) else policy


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, float) else f"{value:.6g}"
    return text if len(text) <= 80 else text[:77] + "..."


__all__ = [
    "HEADLINE",
    "MAX_DIFFERENCES",
    "decode_rate_tok_s",
    "headline_scenario",
    "resolve_stated",
    "scenario_difference",
    "stated_scenario_values",
]
