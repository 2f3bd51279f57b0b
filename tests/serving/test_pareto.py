import pytest

from speedtrap.config import backend_preset
from speedtrap.config.catalog import hardware_preset, llm_preset
from speedtrap.config.parallel import Parallelism
from speedtrap.serving.pareto import PARETO_COLUMNS, default_batches, pareto_frontier, steady_load
from speedtrap.serving.replica import ReplicaPhysics


def test_default_batches_are_powers_of_two_plus_the_cap() -> None:
    assert default_batches(1) == [1]
    assert default_batches(8) == [1, 2, 4, 8]
    assert default_batches(44) == [1, 2, 4, 8, 16, 32, 44]


def test_frontier_trades_speed_per_user_for_throughput_per_chip() -> None:
    physics = ReplicaPhysics.from_backend(backend_preset("gpu-batched"))
    frame = pareto_frontier(physics, 96_000)
    assert list(frame.columns) == PARETO_COLUMNS
    assert frame["batch"].iloc[-1] == physics.max_batch(96_000)
    assert frame["tok_s_per_user"].is_monotonic_decreasing
    assert frame["tok_s_per_chip"].is_monotonic_increasing
    for row in frame.itertuples():
        assert row.tok_s_per_user == pytest.approx(physics.decode_rate_tok_s(row.batch, 96_000))
        assert row.tok_s_per_replica == pytest.approx(row.batch * row.tok_s_per_user)
        assert row.tok_s_per_chip == pytest.approx(row.tok_s_per_replica / physics.counted_chips)
        assert row.step_s == pytest.approx(physics.decode_step_s(row.batch, 96_000))
    # small batches are latency-bound, large ones read KV cache: the mechanism of fast mode
    assert frame["bound"].iloc[0] == "latency"
    assert frame["bound"].iloc[-1] == "memory"


def test_explicit_batches_and_limits() -> None:
    physics = ReplicaPhysics.from_backend(backend_preset("gpu-batched"))
    assert pareto_frontier(physics, 96_000, batches=[8, 1, 8])["batch"].tolist() == [1, 8]
    cap = physics.max_batch(96_000)
    with pytest.raises(ValueError, match=rf"batches \[{cap + 1}\] outside 1..{cap}"):
        pareto_frontier(physics, 96_000, batches=[1, cap + 1])
    with pytest.raises(ValueError, match="no stream of 1e\\+08 context tokens fits"):
        pareto_frontier(physics, 1e8)


def test_the_median_first_token_skips_the_wait_that_most_arrivals_never_see() -> None:
    import math

    from speedtrap.serving.pareto import median_wait_s, steady_load

    # at most half the arrivals wait: the median wait is 0; beyond, it grows and stays below the mean
    assert median_wait_s(1.0, 0.5) == 0.0
    assert median_wait_s(1.0, 0.8) == pytest.approx(math.log(1.6) / 0.8)
    assert 0.0 < median_wait_s(1.0, 0.8) < 1.0
    assert median_wait_s(0.0, 0.9) == 0.0
    physics = ReplicaPhysics.from_backend(backend_preset("gpu-batched"))
    alone = steady_load(physics, 1, context_tokens=0.0, isl=8_000, osl=500)
    assert alone.ttft_median_s == alone.ttft_s  # nothing to wait for
    loads = [steady_load(physics, b, context_tokens=0.0, isl=8_000, osl=500) for b in (4, 16, 32)]
    assert all(load.ttft_median_s <= load.ttft_s for load in loads)
    assert any(load.ttft_median_s < load.ttft_s for load in loads)
    frontier = pareto_frontier(physics, 0.0, [1, 16], isl=8_000, osl=500)
    assert (frontier["ttft_median_s"] <= frontier["ttft_s"]).all()


def test_frontier_searches_the_uncapped_loads_where_no_stream_fits_the_kv_memory() -> None:
    # DeepSeek-R1 in FP8 (671 GB) on 4 B200s (4 × 162 GB usable): no stream fits beside the weights, so
    # steady_load runs any batch uncapped; the searches at equal interactivity / throughput must
    # interpolate that same frontier, not stop at batch 1
    from speedtrap.config.catalog import hardware_preset, llm_preset
    from speedtrap.serving.pareto import load_at_interactivity, load_at_throughput, steady_load

    llm = llm_preset("deepseek-r1").with_overrides({"bytes_per_param": 1.0, "expert_bytes_per_param": 1.0})
    physics = ReplicaPhysics.from_parts(hardware_preset("b200"), llm, 4)
    assert physics.max_batch(7373 + 461) == 0
    at_32 = steady_load(physics, 32, context_tokens=0.0, isl=7373, osl=922)
    load, batch = load_at_interactivity(physics, at_32.tok_s_per_user, isl=7373, osl=922)
    assert batch == pytest.approx(32, rel=1e-3) and load.tok_s_per_chip == pytest.approx(at_32.tok_s_per_chip)
    load, batch = load_at_throughput(physics, at_32.tok_s_per_chip, isl=7373, osl=922)
    assert batch == pytest.approx(32, rel=1e-3) and load.tok_s_per_user == pytest.approx(at_32.tok_s_per_user)


def _steady_step_s(physics: ReplicaPhysics, batch: int, isl: float, osl: float) -> float:
    return steady_load(physics, batch, context_tokens=0.0, isl=isl, osl=osl).step_s


@pytest.mark.parametrize("chunk", [None, 2048])
def test_prompts_share_the_steps_in_whole_chunks(chunk: int | None) -> None:
    # 4 streams of 8k prompts and 1k outputs on DeepSeek-R1 (8 H200s, tensor parallel): the other 3
    # streams bring 3·8192/1024 = 24 prompt tokens per step on average, but in chunks of the budget (or
    # whole prompts): a share q = 24/chunk of the steps carries one chunk and the rest none
    physics = ReplicaPhysics.from_parts(
        hardware_preset("h200"),
        llm_preset("deepseek-r1"),
        8,
        parallel=Parallelism(prefill_chunk_tokens=chunk),
    )
    isl, osl, batch = 8192.0, 1024.0, 4
    context, prompt = isl + osl / 2.0, isl
    size = float(chunk or isl)
    share = (batch - 1) * isl / osl / size
    mixture = (1.0 - share) * physics.decode_step_s(batch, context) + share * physics.decode_step_s(
        batch, context, size, prompt
    )
    assert _steady_step_s(physics, batch, isl, osl) == pytest.approx(mixture, rel=1e-12)
    # the mean share in every step would read the experts 24 tokens route to in each (1 − (1 − 8/256)^28
    # of the 256 at 4 + 24 tokens, against 1 − (1 − 8/256)^4 in a decode-only step): slower
    spread = physics.decode_step_s(batch, context, share * size, prompt)
    assert spread > 1.2 * mixture


def test_prompts_in_chunks_cost_what_the_mean_share_costs_on_a_dense_model() -> None:
    # a dense model's step is linear in the prompt tokens it carries (memory and decode compute do not
    # change; the prefill adds its compute), so whole chunks and the mean share give the same mean step
    physics = ReplicaPhysics.from_parts(hardware_preset("h100-sxm"), llm_preset("llama-3.1-70b"), 8)
    isl, osl, batch = 1024.0, 1024.0, 16
    prompt = isl
    spread = physics.decode_step_s(batch, isl + osl / 2.0, (batch - 1) * isl / osl, prompt)
    assert _steady_step_s(physics, batch, isl, osl) == pytest.approx(spread, rel=1e-9)


def test_every_step_carries_prompts_when_one_chunk_per_step_is_not_enough() -> None:
    # 64 streams of 8k prompts and 1k outputs bring 504 prompt tokens per step, more than a 256-token
    # budget: every step carries the mean share
    physics = ReplicaPhysics.from_parts(
        hardware_preset("h200"), llm_preset("deepseek-r1"), 8, parallel=Parallelism(prefill_chunk_tokens=256)
    )
    isl, osl, batch = 8192.0, 1024.0, 64
    expected = physics.decode_step_s(batch, isl + osl / 2.0, (batch - 1) * isl / osl, isl)
    assert _steady_step_s(physics, batch, isl, osl) == pytest.approx(expected, rel=1e-12)
