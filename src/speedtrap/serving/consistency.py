"""The backend presets under the rule the serving fit uses: what their speeds would become.

The presets' speeds (``speedtrap backends``; docs/design.md §2) are decode-only steps at the typical
batch and context: no prompt shares the step. The serving physics is fitted and validated with the
steady-load rule of :func:`speedtrap.serving.pareto.steady_load`, in which every decode step also
carries its share of the other requests' prompts (``(B − 1)·uncached/output`` tokens) and time to first
token queues for the prefill. :func:`preset_under_steady_load` evaluates a preset both ways, with the
factors it carries (the fit it was calibrated with) and with the refitted factors of the hardware
catalogue; :func:`batch_for_speed` finds the load that would give a target speed under the rule.

Nothing here changes a preset: they move to the consistent rule together with the workflow model's
recalibration (their speeds set the workflow's golden results).
"""

from __future__ import annotations

from dataclasses import dataclass

from speedtrap.config.backend import Backend
from speedtrap.config.catalog import hardware_preset
from speedtrap.serving.pareto import steady_load
from speedtrap.serving.replica import ReplicaPhysics

__all__ = ["ConsistentSpeed", "batch_for_speed", "preset_under_steady_load", "with_catalogue_hardware"]


@dataclass(frozen=True, slots=True)
class ConsistentSpeed:
    """A backend's per-stream speed today (decode-only) and under the steady-load rule, tok/s."""

    name: str
    factors: str
    """``preset`` (the factors the preset carries) or ``refit`` (the hardware catalogue's)."""
    batch: int
    decode_only_tok_s: float
    steady_tok_s: float
    steady_ttft_s: float
    steady_tok_s_per_chip: float


def with_catalogue_hardware(backend: Backend) -> Backend:
    """``backend`` on the hardware catalogue's chip of the same name (the refitted factors)."""
    return backend.model_copy(update={"hardware": hardware_preset(backend.hardware.name)})


def _steady(backend: Backend, batch: int, uncached: float, output: float) -> tuple[float, float, float]:
    physics = ReplicaPhysics.from_backend(backend)
    cached = max(backend.typical_context_tokens - uncached - output / 2.0, 0.0)
    load = steady_load(physics, batch, context_tokens=0.0, isl=uncached, osl=output, cached_tokens=cached)
    return load.tok_s_per_user, load.ttft_s, load.tok_s_per_chip


def preset_under_steady_load(
    backend: Backend, *, uncached_tokens: float, output_tokens: float, refit: bool = False
) -> ConsistentSpeed:
    """``backend`` at its typical batch and context: decode-only (as the presets are derived today) and
    under the steady-load rule with requests of ``uncached_tokens`` new input tokens on top of a cached
    prefix (the rest of the typical context) and ``output_tokens`` output tokens. ``refit`` evaluates it
    on the hardware catalogue's chip (the refitted factors) instead of the factors it carries."""
    spec = with_catalogue_hardware(backend) if refit else backend
    physics = ReplicaPhysics.from_backend(spec)
    batch = backend.typical_batch
    per_user, ttft, per_chip = _steady(spec, batch, uncached_tokens, output_tokens)
    return ConsistentSpeed(
        name=backend.name,
        factors="refit" if refit else "preset",
        batch=batch,
        decode_only_tok_s=physics.decode_rate_tok_s(batch, backend.typical_context_tokens),
        steady_tok_s=per_user,
        steady_ttft_s=ttft,
        steady_tok_s_per_chip=per_chip,
    )


def batch_for_speed(
    backend: Backend,
    target_tok_s: float,
    *,
    uncached_tokens: float,
    output_tokens: float,
    refit: bool = False,
) -> int | None:
    """The largest batch per replica at which a stream of ``backend`` runs at ``target_tok_s`` or
    faster under the steady-load rule (``None`` when not even one stream does)."""
    spec = with_catalogue_hardware(backend) if refit else backend
    cap = ReplicaPhysics.from_backend(spec).max_batch(spec.typical_context_tokens)
    best = None
    for batch in range(1, max(cap, 1) + 1):
        if _steady(spec, batch, uncached_tokens, output_tokens)[0] >= target_tok_s:
            best = batch
        else:
            break
    return best
