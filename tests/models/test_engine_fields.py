"""The typed core's explicit field list (speedtrap.models.core_fields): every field of the scenario's
spec tree is classified exactly once, so a field added to the spec without a classification fails
here; a field only the Mesa model reads, set off the value the core runs, sends the run to the Mesa
model with that field named."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from speedtrap.config import Scenario
from speedtrap.config.policy import PolicySpec, policy_spec_class
from speedtrap.models.core_fields import CORE_READS, MESA_ONLY, NEITHER, field_values
from speedtrap.models.typed_core import not_covered

ROOT = Path(__file__).resolve().parents[2]
HEADLINE = Scenario.from_toml(ROOT / "experiments" / "scenarios" / "headline.toml")


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models(arg)]


def _container(annotation: Any) -> str:
    """``"[*]"`` when ``annotation`` holds its models in a dict or a list (possibly optional)."""
    origins = {typing.get_origin(a) for a in (annotation, *typing.get_args(annotation))}
    return "[*]" if origins & {dict, list} else ""


CORE_POLICIES = tuple(k for k in MESA_ONLY["policy.kind"] if k != "manual")
"""The policy kinds the core routes (``manual`` has no fields); other kinds run on the Mesa model by
their kind."""


def spec_leaves(model: type[BaseModel], prefix: str = "") -> set[str]:
    """Every leaf field path under ``model`` (``[*]`` for a dict's values or a list's items); the
    policy as each spec of :data:`CORE_POLICIES`, their fields together."""
    leaves: set[str] = set()
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        annotation = field.annotation
        models = _models(annotation)
        if models and models[0] is PolicySpec:
            models = [policy_spec_class(kind) for kind in CORE_POLICIES]
        if not models:
            leaves.add(path)
        for sub in models:
            leaves |= spec_leaves(sub, f"{path}{_container(annotation)}.")
    return leaves


def test_every_field_of_the_spec_is_classified_exactly_once() -> None:
    leaves = spec_leaves(Scenario)
    assert len(leaves) > 150  # the walk reaches the whole tree (backends, tiers, difficulties, policy)
    lists = {"CORE_READS": CORE_READS, "MESA_ONLY": set(MESA_ONLY), "NEITHER": NEITHER}
    unclassified = leaves - set().union(*lists.values())
    assert not unclassified, f"classify in speedtrap.models.core_fields: {sorted(unclassified)}"
    for name, paths in lists.items():
        assert not paths - leaves, f"{name} names fields the spec does not have: {sorted(paths - leaves)}"
    names = list(lists)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert not lists[a] & lists[b], f"{a} and {b} both list {sorted(lists[a] & lists[b])}"


def test_a_new_field_fails_the_walk() -> None:
    """The walk sees a field added to a spec (here a subclass of the developer spec with one more)."""
    from speedtrap.config.developer import Developer

    class Wider(Developer):
        novel_knob: float = 1.0

    class WiderScenario(Scenario):
        developer: Wider = Wider()

    assert "developer.novel_knob" in spec_leaves(WiderScenario) - spec_leaves(Scenario)


def test_each_mesa_only_field_lists_the_specs_default_first() -> None:
    default = Scenario()
    for path, runs in MESA_ONLY.items():
        assert list(field_values(default, path)) == [runs[0]], path


@pytest.mark.parametrize(
    ("path", "value"),
    [("developer.attention.rule", "threshold"), ("task_mix.cache_per_tier", False)],
)
def test_a_mesa_only_field_off_its_value_names_itself(path: str, value: Any) -> None:
    assert not_covered(HEADLINE) is None
    reason = not_covered(HEADLINE.with_overrides({path: value}))
    assert reason is not None and reason.startswith(f"{path} = {value!r}")


def test_a_policy_kind_the_core_does_not_run_names_itself() -> None:
    fleet = Scenario.from_toml(ROOT / "experiments" / "scenarios" / "shared_fleet.toml")
    routes = {"first": {"backend": "fleet"}, "then": {"backend": "fleet", "tier": "fast"}}
    escalate = fleet.with_overrides({"policy": {"kind": "escalate", **routes}})
    assert (not_covered(escalate) or "").startswith("policy.kind = 'escalate' (the typed core runs only")


def test_the_tier_policies_are_the_cores() -> None:
    """fast_share, interactive_fast and background_slow route one backend's tiers: the core's."""
    fleet = Scenario.from_toml(ROOT / "experiments" / "scenarios" / "shared_fleet.toml")
    assert fleet.policy.kind == "fast_share" and not_covered(fleet) is None
    slow = HEADLINE.with_backend("gpu-slow")
    for kind in ("background_slow", "interactive_fast"):
        assert not_covered(slow.with_overrides({"policy": {"kind": kind}})) is None


def test_hand_work_and_the_manual_policy_are_the_cores() -> None:
    """Hybrid hand work (delegated_fraction < 1) and the manual policy are read by the core."""
    assert not_covered(HEADLINE.with_overrides({"developer.delegated_fraction": 0.4})) is None
    assert not_covered(HEADLINE.with_backend("manual")) is None
    manual = HEADLINE.with_backend("manual").with_overrides({"developer.manual.escape_prob": 0.3})
    assert not_covered(manual) is None
    assert not_covered(Scenario.from_toml(ROOT / "experiments" / "scenarios" / "metr.toml")) is None


def test_a_field_no_engine_reads_keeps_the_core() -> None:
    changed = HEADLINE.with_overrides({"name": "renamed", "value.usd_per_dev_hour": 120.0})
    assert not_covered(changed) is None


def test_field_values_runs_over_backends_and_tiers_and_skips_absent_sub_specs() -> None:
    replicas = list(field_values(HEADLINE, "backends[*].replicas"))
    assert replicas == [b.replicas for b in HEADLINE.backends.values()]
    assert len(list(field_values(HEADLINE, "backends[*].tiers[*].batch_cap"))) >= 1
    no_spec = HEADLINE.with_overrides({"backends.gpu-batched.speculative": None})
    assert list(field_values(no_spec, "backends[*].speculative.draft_tokens")) == []
