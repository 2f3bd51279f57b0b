"""A scenario: who works, on what, for how long, served by which backends under which policy.

A run is one scenario × one seed. The clock counts working time only: a **developer-day** is
``workday_s`` seconds of horizon (default 8 h = 28 800 s), so the default horizon of five
developer-days is 144 000 s of continuous simulated work per developer.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from pydantic import Field, SerializeAsAny, field_validator, model_validator

from speedtrap.config.backend import Backend
from speedtrap.config.base import Spec
from speedtrap.config.developer import Developer
from speedtrap.config.policy import PolicySpec, policy_spec_class
from speedtrap.config.presets import BACKEND_PRESETS, backend_preset
from speedtrap.config.toml_file import read_toml
from speedtrap.config.value import Value
from speedtrap.config.work import TaskMix

WORKDAY_S = 8 * 3600.0
"""Seconds in a developer-day: an 8-hour working day (the unit of the per-day summaries)."""

DEFAULT_BACKEND = "gpu-batched"
"""The backend a scenario uses when it names none: the full frontier model at large batch."""

MAX_DEVELOPERS = 10_000
MAX_HORIZON_S = 3.2e7
MAX_DEVELOPER_SECONDS = 1e9
MAX_REPLICAS = 10_000
"""Size bounds of one run, so that no scenario file can make a run hang or exhaust memory: at most
10 000 developers, a horizon of at most 3.2e7 s (about a year of seconds), at most 1e9
developer-seconds in all (≈35 000 developer-days of 8 h; the headline scenario has 200) and at most
10 000 replicas per backend. A run at the bounds takes minutes to hours, not forever."""

MIN_AWAY_S = 1e-3
"""Smallest median of ``developer.attention.away_s`` (seconds). A developer away from running agents
looks at them again after each away episode; a median of 0 made them look again at the same instant
for ever, and one of 1e-6 s ran for minutes per simulated developer-hour (1e-5 s: 27 s of CPU for two
developer-hours, against 0.35 s at the default 120 s). One millisecond, far below a person's reaction
time, costs 0.8 s there, and still lets a file say "no away episodes to speak of"."""

NO_AI = "manual"
"""The name :meth:`Scenario.with_backend` and experiments' ``backend`` factor give to working
without AI (policy ``manual``)."""


def _default_backends() -> dict[str, Backend]:
    return {DEFAULT_BACKEND: backend_preset(DEFAULT_BACKEND)}


def _default_policy() -> PolicySpec:
    return policy_spec_class("always").model_validate({"kind": "always"})


def resolve_backend_ref(name: str, ref: Any) -> Any:
    """Turn one entry of ``Scenario.backends`` into data pydantic can validate as a :class:`Backend`.

    * ``"gpu-fast"`` — a preset by name;
    * ``{preset = "wafer-distilled", replicas = 2, quality = {failure_multiplier = 1.5}}`` — a
      preset with fields deep-merged over it (quality overrides live here);
    * any other table or a ``Backend`` — a full backend spec, validated as is.
    """
    if isinstance(ref, str):
        return _preset(name, ref)
    if isinstance(ref, dict) and "preset" in ref:
        changes = dict(ref)
        base = _preset(name, changes.pop("preset")).model_dump(mode="python")
        return deep_merge(base, changes)
    return ref


def _preset(name: str, preset: Any) -> Backend:
    if not isinstance(preset, str):
        raise ValueError(f"backends.{name}.preset must be a preset name, got {preset!r}")
    try:
        return backend_preset(preset)
    except KeyError as exc:
        raise ValueError(f"backends.{name}: {exc.args[0]}") from None


def deep_merge(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``changes`` merged in: nested tables merge key by key, other values replace."""
    merged = copy.deepcopy(base)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


class Scenario(Spec):
    """Everything one simulation run needs besides its seed.

    ``backends`` maps the names that the policy uses to backends; each entry is a preset name, a
    preset with overrides (``{preset = ..., field = value, quality = {...}}``) or a full backend
    spec, and is stored resolved, so ``with_overrides({"backends.gpu.quality.failure_multiplier":
    1.5})`` reaches any field. ``policy`` is a table with a ``kind`` (see :mod:`speedtrap.policies`).
    """

    name: str = Field(default="scenario", min_length=1)
    developers: int = Field(
        default=20, ge=1, le=MAX_DEVELOPERS, description="Developers sharing the backends."
    )
    horizon_s: float = Field(
        default=5 * WORKDAY_S,
        gt=0,
        le=MAX_HORIZON_S,
        description="Simulated working seconds (default: five developer-days).",
    )
    workday_s: float = Field(default=WORKDAY_S, gt=0, le=86_400, description="Seconds in one developer-day.")
    developer: Developer = Field(default_factory=Developer)
    task_mix: TaskMix = Field(default_factory=TaskMix)
    backends: dict[str, Backend] = Field(default_factory=_default_backends, min_length=1)
    policy: SerializeAsAny[PolicySpec] = Field(default_factory=_default_policy)
    value: Value = Field(
        default_factory=Value,
        description="Prices of the outputs (developer time, tasks); does not enter the simulation.",
    )

    @field_validator("backends", mode="before")
    @classmethod
    def _resolve_backends(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {name: resolve_backend_ref(name, ref) for name, ref in value.items()}

    @field_validator("policy", mode="before")
    @classmethod
    def _policy_by_kind(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = {"kind": value}
        if isinstance(value, dict):
            kind = value.get("kind")
            if not isinstance(kind, str):
                raise ValueError("policy.kind is required (a policy name such as 'always')")
            try:
                spec_class = policy_spec_class(kind)
            except KeyError as exc:
                raise ValueError(f"policy.kind: {exc.args[0]}") from None
            return spec_class.model_validate(value)
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        away = self.developer.attention.away_s
        if away is not None and away.median < MIN_AWAY_S:
            raise ValueError(
                f"developer.attention.away_s.median: must be at least {MIN_AWAY_S:g} s (the developer looks "
                f"at their agents again after each away episode; a shorter one repeats without end), "
                f"got {away.median!r} s"
            )
        if self.developers * self.horizon_s > MAX_DEVELOPER_SECONDS:
            raise ValueError(
                f"developers × horizon_s = {self.developers * self.horizon_s:.3g} developer-seconds; a run "
                f"holds at most {MAX_DEVELOPER_SECONDS:.0e} (≈35 000 developer-days of 8 h)"
            )
        for name, backend in self.backends.items():
            if backend.replicas > MAX_REPLICAS:
                raise ValueError(
                    f"backends.{name}.replicas: at most {MAX_REPLICAS} replicas per backend, "
                    f"got {backend.replicas}"
                )
        difficulties = self.task_mix.difficulty_names
        self.policy.check(self.backends, difficulties)
        if self.policy.kind == NO_AI and self.task_mix.sizing != "effort":
            raise ValueError(
                "policy.kind: 'manual' needs tasks with a human-effort size (task_mix.sizing = 'effort')"
            )
        for name, backend in self.backends.items():
            window = backend.llm.context_window_tokens
            if self.task_mix.compact_to_tokens >= self.task_mix.compact_at_fraction * window:
                raise ValueError(
                    f"task_mix.compact_to_tokens ({self.task_mix.compact_to_tokens}) must be below "
                    f"compact_at_fraction × the context window of backends.{name} ({window} tokens)"
                )
        return self

    @property
    def developer_days(self) -> float:
        """Developer-days simulated: developers × horizon_s / workday_s."""
        return self.developers * self.horizon_s / self.workday_s

    def with_backend(self, name: str) -> Scenario:
        """This scenario served by the one backend ``name`` under policy ``always``.

        ``name`` is one of this scenario's backends (kept with its overrides) or a preset name;
        ``"manual"`` keeps the backends and works without AI (policy ``manual``). Other fields are
        unchanged, so the same seed meets the same task stream.
        """
        if name == NO_AI:
            data = self.model_dump(mode="python")
            data["policy"] = {"kind": NO_AI}
            return type(self).model_validate(data)
        if name in self.backends:
            backend: Any = self.backends[name]
        else:
            if name not in BACKEND_PRESETS:
                raise ValueError(
                    f"backend {name!r} is neither a backend of this scenario ({', '.join(self.backends)}) "
                    f"nor a preset ({', '.join(BACKEND_PRESETS)})"
                )
            backend = backend_preset(name)
        data = self.model_dump(mode="python")
        data["backends"] = {name: backend}
        data["policy"] = {"kind": "always", "backend": name}
        return type(self).model_validate(data)

    @classmethod
    def from_toml(cls, path: str | Path) -> Scenario:
        """Load and validate a scenario file (TOML); errors name the offending field."""
        return cls.model_validate(read_toml(path))

    def to_toml(self) -> str:
        """The fully resolved scenario as TOML text (loads back to an equal scenario)."""
        import tomli_w

        return tomli_w.dumps(self.model_dump(mode="json", exclude_none=True))
