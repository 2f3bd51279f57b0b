"""The pool's flat decode-rate function gives ReplicaPhysics.decode_rate_tok_s bit for bit."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from speedtrap.config import BACKEND_PRESETS, HARDWARE_PRESETS, LLM_PRESETS
from speedtrap.config.backend import SpeculativeDecoding
from speedtrap.serving.decode_rate import pool_decode_rate
from speedtrap.serving.replica import ReplicaPhysics
from speedtrap.serving.speed import FixedRate


def _physics() -> dict[str, ReplicaPhysics]:
    """Every backend preset, and every catalogued model on every catalogued chip that computes in its
    number format (dense and routed experts, sliding-window attention, wafers, collectives), on one
    and on eight chips."""
    out = {f"preset {name}": ReplicaPhysics.from_backend(spec) for name, spec in BACKEND_PRESETS.items()}
    for hardware, llm, chips in itertools.product(HARDWARE_PRESETS, LLM_PRESETS, (1, 8)):
        try:
            out[f"{llm} on {chips} {hardware}"] = ReplicaPhysics.from_parts(
                HARDWARE_PRESETS[hardware], LLM_PRESETS[llm], chips, ttft_overhead_s=0.1, decode_speedup=1.7
            )
        except KeyError:  # the chip lacks the model's number format
            continue
    return out


PHYSICS = _physics()


@pytest.mark.parametrize("name", sorted(PHYSICS))
@settings(max_examples=25, deadline=None)
@given(
    batch=st.integers(1, 4096),
    context=st.one_of(st.floats(0.0, 2e6, allow_nan=False), st.integers(0, 2_000_000).map(float)),
)
def test_the_flat_function_is_the_physics_bit_for_bit(name: str, batch: int, context: float) -> None:
    physics = PHYSICS[name]
    flat = pool_decode_rate(physics)
    assert flat is not physics.decode_rate_tok_s
    assert flat(batch, context).hex() == physics.decode_rate_tok_s(batch, context).hex()


def test_at_typical_loads_of_the_presets() -> None:
    for name, spec in BACKEND_PRESETS.items():
        physics = ReplicaPhysics.from_backend(spec)
        flat = pool_decode_rate(physics)
        for batch in range(1, 2 * spec.typical_batch + 2):
            context = float(spec.typical_context_tokens) + batch * 0.37
            assert flat(batch, context) == physics.decode_rate_tok_s(batch, context), (name, batch)


def test_other_speed_models_keep_their_own_method() -> None:
    speculative = ReplicaPhysics.from_parts(
        HARDWARE_PRESETS["h100-sxm"],
        LLM_PRESETS["llama-3.1-70b"],
        8,
        speculative=SpeculativeDecoding(draft_tokens=4, acceptance_rate=0.7, draft_cost=0.1),
    )
    assert pool_decode_rate(speculative) == speculative.decode_rate_tok_s
    fixed = FixedRate(50.0)
    assert pool_decode_rate(fixed) == fixed.decode_rate_tok_s
