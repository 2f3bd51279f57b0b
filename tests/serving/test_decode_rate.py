"""The pool's flat decode-rate function gives ReplicaPhysics.decode_rate_tok_s bit for bit, with and
without speculative decoding."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from speedtrap.config import BACKEND_PRESETS, HARDWARE_PRESETS, LLM_PRESETS
from speedtrap.config.backend import SpeculativeDecoding
from speedtrap.config.parallel import Parallelism
from speedtrap.models.typed_core import core_module
from speedtrap.serving.decode_rate import pool_decode_rate, pool_prefill_s
from speedtrap.serving.replica import ReplicaPhysics
from speedtrap.serving.speed import FixedRate


def _layouts(chips: int) -> dict[str, Parallelism]:
    """Tensor parallel; attention data parallel; expert parallel with and without overlapped all-to-alls
    (FP8 dispatch) — every term of the roofline's step that a decode step can have."""
    if chips == 1:
        return {"tp": Parallelism()}
    return {
        "tp": Parallelism(),
        "dp8": Parallelism(attention_data_parallel=8),
        "dp8-ep": Parallelism(attention_data_parallel=8, expert_parallel=chips),
        "ep-overlap": Parallelism(expert_parallel=chips, overlap_communication=True, dispatch_bytes=1.0),
    }


DRAFTERS = {
    "plain": None,
    "draft-3": SpeculativeDecoding(draft_tokens=3, acceptance_rate=0.65, draft_cost=0.05),
    "draft-7": SpeculativeDecoding(draft_tokens=7, acceptance_rate=0.83, draft_cost=0.13),
}
"""No drafting, and drafters whose verify steps and draft costs differ (the flat function has a branch
for each)."""


def _physics() -> dict[str, ReplicaPhysics]:
    """Every backend preset, and every catalogued model on every catalogued chip that computes in its
    number formats (dense, routed experts, MLA, sliding-window attention, SRAM pipelines), on 1, 8 and
    144 chips (beyond every scale-up domain) in each layout of :func:`_layouts`, plain and drafting
    (:data:`DRAFTERS`)."""
    out = {f"preset {name}": ReplicaPhysics.from_backend(spec) for name, spec in BACKEND_PRESETS.items()}
    for hardware, llm, chips in itertools.product(HARDWARE_PRESETS, LLM_PRESETS, (1, 8, 144)):
        for layout_name, layout in _layouts(chips).items():
            for drafter_name, drafter in DRAFTERS.items():
                try:
                    out[f"{llm} on {chips} {hardware} {layout_name} {drafter_name}"] = (
                        ReplicaPhysics.from_parts(
                            HARDWARE_PRESETS[hardware],
                            LLM_PRESETS[llm],
                            chips,
                            ttft_overhead_s=0.1,
                            decode_speedup=1.7,
                            parallel=layout,
                            speculative=drafter,
                        )
                    )
                except KeyError:  # the chip lacks one of the model's number formats
                    continue
    return out


PHYSICS = _physics()
NAMES = sorted(PHYSICS)


def test_the_catalogue_is_covered() -> None:
    """Every chip and every model appear (a catalogue entry the physics cannot build is a failure)."""
    for hardware in HARDWARE_PRESETS:
        assert any(f" {hardware} " in name for name in NAMES), hardware
    for llm in LLM_PRESETS:
        assert any(name.startswith(f"{llm} on ") for name in NAMES), llm
    assert any(PHYSICS[name].steps.overlap > 0 for name in NAMES)
    assert any(PHYSICS[name].steps.exchange_s_per_token > 0 for name in NAMES)
    assert any(PHYSICS[name].steps.window_layers > 0 for name in NAMES)
    assert any(PHYSICS[name].draft_tokens == 0 for name in NAMES)
    assert {PHYSICS[name].draft_tokens for name in NAMES} >= {3, 7}
    assert any(p.draft_tokens for name, p in PHYSICS.items() if name.startswith("preset ")), (
        "no backend preset drafts: the presets' own branch is not covered"
    )


def test_on_a_grid_of_loads() -> None:
    """All physics at batches 0..4096 and contexts 0..2e6 tokens, edges included."""
    rng = np.random.default_rng(27)
    batches = [0, 1, 2, 3, 7, 64, 255, 4096, *rng.integers(1, 4096, 6).tolist()]
    contexts = [0.0, 1.0, 127.5, 4096.0, 1e5, 2e6, *rng.uniform(0.0, 2e6, 6).tolist()]
    for name in NAMES:
        physics = PHYSICS[name]
        flat = pool_decode_rate(physics)
        assert flat is not physics.decode_rate_tok_s
        for batch, context in itertools.product(batches, contexts):
            got, want = flat(batch, context), physics.decode_rate_tok_s(batch, context)
            assert got.hex() == want.hex(), (name, batch, context)


@settings(max_examples=1500, deadline=None)
@given(
    name=st.sampled_from(NAMES),
    batch=st.integers(0, 4096),
    context=st.one_of(st.floats(0.0, 2e6, allow_nan=False), st.integers(0, 2_000_000).map(float)),
)
def test_the_flat_function_is_the_physics_bit_for_bit(name: str, batch: int, context: float) -> None:
    physics = PHYSICS[name]
    assert pool_decode_rate(physics)(batch, context).hex() == physics.decode_rate_tok_s(batch, context).hex()


def test_at_typical_loads_of_the_presets() -> None:
    for name, spec in BACKEND_PRESETS.items():
        physics = ReplicaPhysics.from_backend(spec)
        flat = pool_decode_rate(physics)
        for batch in range(1, 2 * spec.typical_batch + 2):
            context = float(spec.typical_context_tokens) + batch * 0.37
            assert flat(batch, context) == physics.decode_rate_tok_s(batch, context), (name, batch)


def _prefill_physics() -> dict[str, ReplicaPhysics]:
    """:data:`PHYSICS` (prompts prefilling in one step on the replica), with chunked prefill, and on a
    separate prefill pool (the GPU presets' layout) with and without chunks."""
    out = dict(PHYSICS)
    pooled = ReplicaPhysics.from_backend(BACKEND_PRESETS["gpu-batched"])
    assert pooled.prefill_pool is not None, "the gpu-batched preset prefills on a pool of its own"
    pool = pooled.prefill_pool
    for name in (
        "preset gpu-batched",
        "llama-3.1-70b on 8 h100-sxm tp plain",
        "deepseek-r1 on 8 b200 dp8-ep plain",
        "gpt-oss-120b on 144 h200 ep-overlap draft-3",
    ):
        physics = PHYSICS[name]
        out[f"{name} chunked 2048"] = replace(physics, prefill_chunk_tokens=2048)
        out[f"{name} chunked 300"] = replace(physics, prefill_chunk_tokens=300)
    out["gpu-batched pool chunked 4096"] = replace(pooled, prefill_pool=replace(pool, chunk_tokens=4096))
    return out


PREFILL_PHYSICS = _prefill_physics()


@settings(max_examples=1500, deadline=None)
@given(
    name=st.sampled_from(sorted(PREFILL_PHYSICS)),
    uncached=st.one_of(st.integers(-3, 300_000), st.sampled_from([0, 1, 299, 300, 301, 2048, 2049, 4096])),
)
def test_the_flat_prefill_is_the_physics_bit_for_bit(name: str, uncached: int) -> None:
    physics = PREFILL_PHYSICS[name]
    flat = pool_prefill_s(physics)
    assert flat is not physics.prefill_s
    assert flat(uncached).hex() == physics.prefill_s(uncached).hex()


CORE = core_module()


@pytest.mark.skipif(CORE is None, reason="the typed core is not built or not in use here")
@settings(max_examples=1500, deadline=None)
@given(
    name=st.sampled_from(sorted(PREFILL_PHYSICS)),
    batch=st.integers(0, 4096),
    context=st.one_of(st.floats(0.0, 2e6, allow_nan=False), st.integers(0, 2_000_000).map(float)),
    uncached=st.one_of(st.integers(-3, 300_000), st.sampled_from([0, 1, 299, 300, 301, 2048, 2049, 4096])),
)
def test_the_typed_cores_physics_is_the_flat_functions_bit_for_bit(
    name: str, batch: int, context: float, uncached: int
) -> None:
    """The typed core's copy of the two flat functions (speedtrap.models._typed_core.StepPhysics), on
    every layout above: a change to the physics made in one and not the other fails here."""
    assert CORE is not None
    physics = PREFILL_PHYSICS[name]
    core = CORE.StepPhysics(physics)
    assert core.decode_rate_tok_s(batch, context).hex() == pool_decode_rate(physics)(batch, context).hex()
    assert core.prefill_s(uncached).hex() == pool_prefill_s(physics)(uncached).hex()


def test_other_speed_models_keep_their_own_method() -> None:
    fixed = FixedRate(50.0)
    assert pool_decode_rate(fixed) == fixed.decode_rate_tok_s
    assert pool_prefill_s(fixed) == fixed.prefill_s
