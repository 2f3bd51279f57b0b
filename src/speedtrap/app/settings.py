"""What the app's controls mean: from the values on the page to validated scenarios, one per arm.

Pure (no Solara, no Mesa): :func:`build_arms` turns :class:`Settings` into the scenarios to run side
by side with one seed, or into messages keyed by the control that caused them, so that the page
can show each next to its field. Every change goes through the specs' validation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from speedtrap.config.presets import BACKEND_PRESETS
from speedtrap.config.scenario import NO_AI, Scenario
from speedtrap.config.toml_file import TomlFileError, parse_toml
from speedtrap.config.value import LOADED_USD_PER_DEV_HOUR, Value

__all__ = [
    "BACKEND_CHOICES",
    "NO_BACKEND",
    "POLICY_CHOICES",
    "SCENARIO_DIR",
    "UPLOADED",
    "Arms",
    "Settings",
    "arm_overrides",
    "backend_choices",
    "build_arms",
    "bundled_scenarios",
    "common_overrides",
    "dev_hour_value",
    "load_base",
    "settings_for",
    "slider_overrides",
]

SCENARIO_DIR = Path(__file__).resolve().parents[3] / "experiments" / "scenarios"
"""The bundled scenario files of a source checkout (``experiments/scenarios``)."""

UPLOADED = "uploaded file"
"""The scenario choice that stands for the file the user dropped on the page."""

DEFAULT = "built-in defaults"
"""The scenario choice of the specs' documented defaults (no file)."""

NO_BACKEND = "none"
"""Backend B's choice for a single run."""

BACKEND_CHOICES: tuple[str, ...] = (*BACKEND_PRESETS, NO_AI)
"""What an arm can be served by in any scenario: a backend preset, or ``manual`` (no AI)."""


def backend_choices(scenario: Scenario) -> list[str]:
    """What an arm of ``scenario`` can be served by: its own backends (with the file's overrides),
    the other presets, and ``manual`` (no AI)."""
    return [*scenario.backends, *(name for name in BACKEND_CHOICES if name not in scenario.backends)]


POLICY_CHOICES: tuple[str, ...] = ("always", "interactive_fast", "fast_share")
"""Routing of each arm's turns on its backend: all on its default tier (``always``), on its fast tier
while the developer is attending and its standard tier while away (``interactive_fast``), or a
share of the developers on the fast tier (``fast_share``)."""

APP_MAX_DEVELOPERS = 4
"""The app starts with at most this many developers (a scenario file's population may be larger:
move the slider), so that a first run takes seconds."""

APP_HORIZON_H = 8.0
"""The app starts with one 8-hour developer-day per developer (type a longer horizon if wanted)."""


def bundled_scenarios() -> dict[str, Path | None]:
    """Scenario choices: the built-in defaults and every bundled file, by file stem."""
    files = sorted(SCENARIO_DIR.glob("*.toml")) if SCENARIO_DIR.is_dir() else []
    return {DEFAULT: None, **{path.stem: path for path in files}}


@dataclass(frozen=True)
class Settings:
    """The values of the page's controls. Text fields stay text until :func:`build_arms` reads them.

    ``decode_speedup`` and ``failure_multiplier`` are what-ifs on the *compared* backend (B, or A
    when B is ``none``): multipliers on its own decode rate and failure multiplier. The other
    sliders apply to every arm: ``developers``, ``review_detection`` (probability that review
    catches a wrong result), ``patience_s`` (median wait a developer sits through,
    ``developer.attention.patience_s.median``), ``parallel_sessions`` (agent sessions a developer
    keeps open) and ``fast_share`` (share of developers on the fast tier, policy ``fast_share``).

    ``usd_per_dev_hour`` (text, US$ per developer-hour, ``value.usd_per_dev_hour``) prices the
    runs' outputs without changing them; ``replications`` is the number of runs per arm the economics
    are replicated over on demand, under the stored calibrated ensemble when ``ensemble`` (K members
    × r seeds, as ``speedtrap compare``) or over seeds of the scenario's own parameter set.
    """

    scenario: str = "headline"
    uploaded_toml: str | None = None
    backend_a: str = "gpu-batched"
    backend_b: str = "wafer-distilled"
    policy: str = "always"
    developers: int = 4
    horizon_h: str = "8"
    seed: str = "0"
    decode_speedup: float = 1.0
    failure_multiplier: float = 1.0
    review_detection: float = 0.6
    patience_s: float = 60.0
    parallel_sessions: int = 1
    fast_share: float = 0.0
    usd_per_dev_hour: str = f"{LOADED_USD_PER_DEV_HOUR:g}"
    replications: int = 10
    ensemble: bool = True


@dataclass(frozen=True)
class Arms:
    """Validated scenarios by arm name (backend names, in the order A, B) and the seed, or the
    messages (by control: scenario, horizon_h, seed, backend_b, policy, fast_share, sliders,
    usd_per_dev_hour) that stop a run."""

    scenarios: dict[str, Scenario] = field(default_factory=dict)
    seed: int | None = None
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors and bool(self.scenarios)

    @property
    def target(self) -> str | None:
        """The arm the what-if sliders act on: B when compared, else A."""
        names = list(self.scenarios)
        return names[-1] if names else None


def load_base(settings: Settings) -> Scenario:
    """The scenario the controls start from (a bundled file, the defaults or the uploaded TOML).
    Raises ``ValueError`` with a one-line reason."""
    if settings.scenario == UPLOADED:
        if not settings.uploaded_toml:
            raise ValueError("drop a scenario file (.toml) first")
        try:
            return Scenario.model_validate(parse_toml(settings.uploaded_toml, source="the uploaded file"))
        except TomlFileError as exc:
            raise ValueError(str(exc)) from None
        except ValidationError as exc:
            raise ValueError(one_line(exc)) from None
    choices = bundled_scenarios()
    if settings.scenario not in choices:
        raise ValueError(f"unknown scenario {settings.scenario!r} (known: {', '.join(choices)})")
    path = choices[settings.scenario]
    return Scenario(name="default") if path is None else Scenario.from_toml(path)


def settings_for(scenario: Scenario, current: Settings) -> Settings:
    """``current`` with the controls moved to ``scenario``'s own values, as when a scenario is
    chosen: its first backend as A (its second as B, else B kept if it is a preset), its policy,
    developers (capped at :data:`APP_MAX_DEVELOPERS`), a horizon of one developer-day at most and
    its review, patience, parallel-session and fast-share values, and its value of developer time."""
    dev = scenario.developer
    names = list(scenario.backends)
    backend_a = names[0]
    if len(names) > 1:
        backend_b = names[1]
    elif current.backend_b not in (backend_a, NO_BACKEND) and current.backend_b in BACKEND_CHOICES:
        backend_b = current.backend_b
    else:
        backend_b = NO_BACKEND
    fast_share = float(getattr(scenario.policy, "share", current.fast_share))
    return Settings(
        **{
            **current.__dict__,
            "backend_a": backend_a,
            "backend_b": backend_b,
            "policy": scenario.policy.kind if scenario.policy.kind in POLICY_CHOICES else "always",
            "developers": min(scenario.developers, APP_MAX_DEVELOPERS),
            "horizon_h": f"{min(scenario.horizon_s / 3600, APP_HORIZON_H):g}",
            "review_detection": dev.review.detect_prob,
            "patience_s": dev.attention.patience_s.median,
            "parallel_sessions": dev.attention.max_parallel_sessions,
            "fast_share": fast_share,
            "usd_per_dev_hour": f"{scenario.value.usd_per_dev_hour:g}",
        }
    )


def one_line(exc: ValidationError) -> str:
    """A validation error as one line with the field paths."""
    parts = []
    for error in exc.errors():
        path = ".".join(str(p) for p in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        parts.append(f"{path}: {message}" if path else message)
    return "; ".join(parts)


def _number(text: str, *, integer: bool) -> float:
    try:
        value = int(text) if integer else float(text)
    except (TypeError, ValueError):
        kind = "a whole number" if integer else "a number"
        raise ValueError(f"{text!r} is not {kind}") from None
    return value


def dev_hour_value(settings: Settings, base: Value) -> Value:
    """``base`` (a scenario's value section) with the developer cost typed in ``settings``; raises
    ``ValueError`` with a one-line reason."""
    usd = _number(settings.usd_per_dev_hour.strip(), integer=False)
    if not (math.isfinite(usd) and usd > 0):
        raise ValueError("the developer cost must be more than $0 per hour")
    try:
        return Value.model_validate({**base.model_dump(), "usd_per_dev_hour": usd})
    except ValidationError as exc:
        raise ValueError(one_line(exc)) from None


def build_arms(settings: Settings) -> Arms:
    """The validated scenarios to run side by side with one seed (common random numbers), or the
    messages to show next to the controls that caused them."""
    errors: dict[str, str] = {}
    seed: int | None = None
    try:
        seed = int(_number(settings.seed.strip(), integer=True))
        if seed < 0:
            raise ValueError("the seed must be 0 or more")
    except ValueError as exc:
        errors["seed"] = str(exc)
    horizon_s = None
    try:
        horizon_s = _number(settings.horizon_h.strip(), integer=False) * 3600
    except ValueError as exc:
        errors["horizon_h"] = str(exc)
    try:
        base = load_base(settings)
    except ValueError as exc:
        return Arms(errors={**errors, "scenario": str(exc)})
    try:
        base = base.with_overrides(slider_overrides(settings, base))
    except ValidationError as exc:
        errors["sliders"] = one_line(exc)
    try:
        base = base.with_overrides(
            {"value.usd_per_dev_hour": dev_hour_value(settings, base.value).usd_per_dev_hour}
        )
    except ValueError as exc:
        errors["usd_per_dev_hour"] = str(exc)
    if horizon_s is not None and "horizon_h" not in errors:
        try:
            base = base.with_overrides({"horizon_s": horizon_s})
        except ValidationError:
            errors["horizon_h"] = "the horizon must be more than 0 hours"
    if settings.backend_b == settings.backend_a:
        errors["backend_b"] = "pick a different backend than A (or none)"
    if errors:
        return Arms(errors=errors)
    names = [settings.backend_a] + ([settings.backend_b] if settings.backend_b != NO_BACKEND else [])
    scenarios: dict[str, Scenario] = {}
    for i, name in enumerate(names):
        control = "backend_a" if i == 0 else "backend_b"
        try:
            scenario = _arm(base, name, settings, what_if=i == len(names) - 1)
        except ValidationError as exc:
            message = one_line(exc)
            key = "policy" if "policy" in message or "tier" in message else control
            errors[key] = f"{name}: {message}"
            continue
        except ValueError as exc:
            errors[control] = str(exc)
            continue
        scenarios[name] = scenario
    return Arms(errors=errors) if errors else Arms(scenarios=scenarios, seed=seed)


def slider_overrides(settings: Settings, base: Scenario | None = None) -> dict[str, Any]:
    """The overrides of the sliders every arm shares (field path → value). The parallel-sessions
    slider left at the scenario's own number keeps its mix of parallel sessions (the share of
    developers with 1, 2, 3 … sessions); moved, every developer keeps that many (a mix of one)."""
    out: dict[str, Any] = {
        "developers": settings.developers,
        "developer.review.detect_prob": settings.review_detection,
        "developer.attention.patience_s.median": settings.patience_s,
    }
    attention = base.developer.attention if base is not None else None
    if attention is None or settings.parallel_sessions != attention.max_parallel_sessions:
        n = settings.parallel_sessions
        out["developer.attention.max_parallel_sessions"] = n
        if attention is not None and attention.parallel_sessions_probs is not None:
            out["developer.attention.parallel_sessions_probs"] = None  # the cap, not the mix, decides
    return out


BEHAVIOUR_SLIDERS = {
    "review_detection": "developer.review.detect_prob",
    "patience_s": "developer.attention.patience_s.median",
}
"""The sliders that set a calibrated behavioural parameter (control → scenario path)."""


def user_set_paths(settings: Settings, base: Scenario) -> list[str]:
    """The calibrated behavioural parameters the sliders moved away from ``base``'s own values: an
    ensemble member's values replace every other one (:func:`speedtrap.app.economics.replicate`)."""
    from speedtrap.validation.parameters import scenario_value

    return [
        path
        for control, path in BEHAVIOUR_SLIDERS.items()
        if getattr(settings, control) != scenario_value(base, path)
    ]


def common_overrides(settings: Settings, base: Scenario) -> dict[str, Any]:
    """Every override :func:`build_arms` applies to ``base`` before serving it by an arm's backend,
    in order: the sliders, the developer cost and the horizon (for valid settings)."""
    usd = dev_hour_value(settings, base.value).usd_per_dev_hour
    hours = _number(settings.horizon_h.strip(), integer=False)
    return {**slider_overrides(settings, base), "value.usd_per_dev_hour": usd, "horizon_s": hours * 3600}


def arm_overrides(served: Scenario, name: str, settings: Settings, *, what_if: bool) -> dict[str, Any]:
    """The overrides that make ``served`` (a scenario served by ``name`` alone) the arm ``name``, in
    order: the what-if sliders if ``what_if``, then the chosen policy's table (path ``policy``)."""
    if name == NO_AI:
        return {}
    overrides: dict[str, Any] = {}
    if what_if:
        backend = served.backends[name]
        overrides[f"backends.{name}.decode_speedup"] = backend.decode_speedup * settings.decode_speedup
        overrides[f"backends.{name}.quality.failure_multiplier"] = (
            backend.quality.failure_multiplier * settings.failure_multiplier
        )
    if settings.policy != "always":
        policy: dict[str, Any] = {
            "kind": settings.policy,
            "backend": name,
            "fast_tier": "fast",
            "standard_tier": "standard",
        }
        if settings.policy == "fast_share":
            policy["share"] = settings.fast_share
        overrides["policy"] = policy
    return overrides


def _arm(base: Scenario, name: str, settings: Settings, *, what_if: bool) -> Scenario:
    """``base`` served by ``name`` under the chosen policy, with the what-if sliders if ``what_if``."""
    scenario = base.with_backend(name)
    overrides = arm_overrides(scenario, name, settings, what_if=what_if)
    what_ifs = {k: v for k, v in overrides.items() if k != "policy"}
    if what_ifs:
        scenario = scenario.with_overrides(what_ifs)
    if "policy" in overrides:
        scenario = scenario.with_overrides({"policy": overrides["policy"]})
    return scenario
