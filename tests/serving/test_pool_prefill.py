"""Prefill in the serving pool: simultaneous prompts share a replica's compute, and the first token
comes with the prefill (an N-token response takes N − 1 decode steps after it)."""

from __future__ import annotations

import pytest

from speedtrap.config import Price, Tier
from speedtrap.config.catalog import hardware_preset, llm_preset
from speedtrap.models.base import EventModel
from speedtrap.serving.pool import ServingPool
from speedtrap.serving.replica import ReplicaPhysics
from speedtrap.serving.speed import FixedRate


def _pool(speed: object) -> tuple[EventModel, ServingPool]:
    model = EventModel(rng=0)
    pool = ServingPool(model, speed, replicas=1, tiers=[Tier(batch_cap=64)], price=Price())  # type: ignore[arg-type]
    return model, pool


@pytest.mark.parametrize("overhead_s", [0.0, 0.5])
def test_n_prefills_together_take_about_n_times_one(overhead_s: float) -> None:
    # Issue 9's example: twenty 4,000-token prompts on one TP4 H200 replica of a 32B dense model.
    physics = ReplicaPhysics.from_parts(
        hardware_preset("h200"), llm_preset("qwen3-32b"), 4, ttft_overhead_s=overhead_s
    )
    one = physics.prefill_compute_s(4_000)
    # the part that does not occupy the replica: the given overhead plus the hardware's request scheduling
    overhead_s = physics.ttft_overhead_s
    model, pool = _pool(physics)
    reqs = [
        pool.submit(tier="standard", input_tokens=4_000, cached_tokens=0, output_tokens=2) for _ in range(20)
    ]
    model.run_until(100.0)
    first_tokens = sorted(r.first_token_s for r in reqs)
    assert first_tokens[0] == pytest.approx(overhead_s + one)
    assert first_tokens[-1] == pytest.approx(overhead_s + 20 * one)
    assert first_tokens == pytest.approx([overhead_s + k * one for k in range(1, 21)])
    assert 20 * one > 1.0  # the last of twenty waits over a second, as the issue works out


def test_prompts_arriving_later_wait_only_for_the_compute_still_ahead() -> None:
    hardware = hardware_preset("h200").with_overrides({"request_overhead_s": 0.0})
    physics = ReplicaPhysics.from_parts(hardware, llm_preset("qwen3-32b"), 4)
    one = physics.prefill_compute_s(4_000)
    model, pool = _pool(physics)
    a = pool.submit(tier="standard", input_tokens=4_000, cached_tokens=0, output_tokens=2)
    model.run_until(0.5 * one)
    b = pool.submit(tier="standard", input_tokens=4_000, cached_tokens=0, output_tokens=2)
    model.run_until(10 * one)
    c = pool.submit(tier="standard", input_tokens=4_000, cached_tokens=0, output_tokens=2)
    model.run_until(100.0)
    assert a.first_token_s == pytest.approx(one)
    assert b.first_token_s == pytest.approx(2 * one)  # waits for the rest of a's prompt
    assert c.first_token_s == pytest.approx(11 * one)  # the replica's compute was free again


@pytest.mark.parametrize("tokens", [1, 2, 11, 200])
def test_an_n_token_response_takes_n_minus_one_decode_steps(tokens: int) -> None:
    model, pool = _pool(FixedRate(10.0))
    req = pool.submit(tier="standard", input_tokens=100, cached_tokens=100, output_tokens=tokens)
    model.run_until(1_000.0)
    assert req.first_token_s == 0.0
    assert req.done_s == pytest.approx((tokens - 1) / 10.0)  # one step of 0.1 s per token after the first


def test_a_one_token_response_ends_with_its_prefill() -> None:
    physics = ReplicaPhysics.from_parts(hardware_preset("h100-sxm"), llm_preset("llama-3.1-8b"), 1)
    model, pool = _pool(physics)
    req = pool.submit(tier="standard", input_tokens=2_000, cached_tokens=0, output_tokens=1)
    model.run_until(100.0)
    assert req.done_s == pytest.approx(req.first_token_s) == pytest.approx(physics.prefill_s(2_000))
