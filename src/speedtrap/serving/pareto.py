"""The throughput-per-chip versus tokens/s-per-user Pareto curve, traced by sweeping the batch.

Each point is a steady load of ``B`` streams (:func:`steady_load`): every request brings ``isl``
uncached prompt tokens on top of ``cached_tokens`` already in the prompt cache and decodes ``osl``
output tokens. On a replica that prefills its own prompts the decode steps also carry the other
requests' prompts, ``(B − 1)·isl/osl`` tokens per emitted token on average, in chunks of the layout's
``prefill_chunk_tokens`` (or whole prompts): while one chunk per step is enough, that share of the
steps carries a chunk and the rest none, and the mean step is the mean over both kinds
(:func:`_mean_step_s`; a step's cost is concave in its tokens, so one step carrying the mean share
would overstate it); with a separate prefill pool (disaggregation) the decode steps carry none.

**Time to first token** = the scheduling time of the request (``ttft_overhead_s``) + on a replica
that is decoding other streams, the rest of the step in flight when it arrives (half a step on
average, ``(B − 1)/B`` of the time) + its wait for the prefill server + its own prefill: on the
replica, one step of the other ``B − 1`` streams per prefill chunk plus the prompt's compute; on a
prefill pool, the prompt on one instance plus moving its KV cache. The wait is an M/D/1 queue:
prompts arrive at the request rate λ and occupy the prefill server (the replica's compute, or one of
the pool's instances) for their prefill compute ``S``, so the mean wait is ``ρ·S / (2(1 − ρ))`` with
``ρ = λ·S`` per server, times ``(B − 1)/B`` (only the other streams' prompts can be ahead). λ itself
follows from the closed loop of B streams, ``λ·(TTFT + (osl − 1)·inter-token time) = B``, solved by
bisection. Streams beyond the KV-memory cap wait for admission (Little's law adds their wait to time
to first token). The wait for the prefill server is 0 for the arrivals that find it idle, so the
median time to first token (what many benchmarks print) is shorter than the mean under load
(:func:`median_wait_s`).

Throughput counts output tokens, over the replica's chips and the prefill pool's counted chips.
Without ``isl``/``osl`` the steps are decode-only at the given context (what the frontier showed
before prompts shared the step) and TTFT is a prompt of the whole context, without queueing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pandas as pd

from speedtrap.serving.economics import cost_usd_per_mtok
from speedtrap.serving.replica import ReplicaPhysics
from speedtrap.serving.roofline import step_parts, step_s

__all__ = [
    "PARETO_COLUMNS",
    "UNCAPPED_SEARCH_BATCH",
    "SteadyLoad",
    "default_batches",
    "load_at_interactivity",
    "load_at_throughput",
    "median_wait_s",
    "pareto_frontier",
    "steady_load",
]

PARETO_COLUMNS = [
    "batch",
    "tok_s_per_user",
    "tok_s_per_replica",
    "tok_s_per_chip",
    "step_s",
    "bound",
    "ttft_s",
    "ttft_median_s",
    "cost_usd_per_mtok",
]
"""Columns of :func:`pareto_frontier`: batch (streams), per-stream and replica/chip output tok/s,
inter-token step seconds, what bounds the step (``memory``, ``compute`` or ``latency``), time to
first token (s; with queueing for the prefill under load, without network time), its median (s; what
benchmarks that print the median compare with) and the chip cost of a million output tokens (USD; NaN
without a chip price)."""

_BISECTIONS = 60


@dataclass(frozen=True, slots=True)
class SteadyLoad:
    """One operating point of a replica: seconds per step, TTFT, output tok/s per user and chip."""

    step_s: float
    ttft_s: float
    tok_s_per_user: float
    tok_s_per_chip: float
    queue_s: float = 0.0
    """Of ``ttft_s``: the wait for the prefill server and for admission, s."""
    decoding: float = 0.0
    """Streams decoding at once (the batch, or the KV-memory cap when the batch exceeds it)."""
    ttft_median_s: float = math.nan
    """Median time to first token, s (``ttft_s`` is the mean): the same terms with the median of the
    wait for the prefill server (module docstring); NaN where not computed."""


def _mean_step_s(
    physics: ReplicaPhysics,
    running: float,
    context: float,
    prefill_per_step: float,
    isl: float,
    prompt: float,
) -> float:
    """Mean seconds of a decode step that carries, on average, ``prefill_per_step`` prompt tokens of
    the other streams (module docstring). Prompts come in chunks of ``prefill_chunk_tokens`` (or whole,
    ``isl``): while one chunk per step is enough, a share ``q = prefill_per_step / chunk`` of the steps
    carries a chunk and the rest carry none, and the mean step is the mean over the two kinds — not one
    step carrying the mean, since a step's cost is concave in its tokens (a mixture-of-experts step
    reads each expert its tokens route to once: 1 − (1 − k/E)^T of them)."""
    if prefill_per_step <= 0.0:
        return physics.decode_step_s(running, context)
    chunk = min(float(physics.prefill_chunk_tokens or isl), isl)
    if chunk <= prefill_per_step:
        return physics.decode_step_s(running, context, prefill_per_step, prompt)
    share = prefill_per_step / chunk
    return (1.0 - share) * physics.decode_step_s(running, context) + share * physics.decode_step_s(
        running, context, chunk, prompt
    )


def _own_prefill_s(
    physics: ReplicaPhysics, others: float, context: float, isl: float, prompt: float
) -> float:
    """Seconds of a request's own prefill once its turn comes (module docstring)."""
    if physics.prefill_pool is not None:
        pool = physics.prefill_pool
        n = 1 if pool.chunk_tokens is None else max(1, math.ceil(isl / pool.chunk_tokens))
        return n * step_s(pool.steps, 0, 0.0, isl / n, prompt) + isl * pool.transfer_s_per_token
    chunk = physics.prefill_chunk_tokens
    n = 1 if chunk is None else max(1, math.ceil(isl / chunk))
    return n * step_s(physics.steps, others, context, isl / n, prompt)


def _prefill_server(physics: ReplicaPhysics, isl: float, prompt: float) -> tuple[float, int]:
    """(seconds a prompt occupies its prefill server, servers): the prompt's compute on the replica,
    or one instance's prefill on a separate pool."""
    pool = physics.prefill_pool
    if pool is not None:
        return step_s(pool.steps, 0, 0.0, isl, prompt), pool.instances
    return step_parts(physics.steps, 0, 0.0, isl, prompt).prefill_s, 1


def steady_load(
    physics: ReplicaPhysics,
    batch: float,
    *,
    context_tokens: float,
    isl: float | None = None,
    osl: float | None = None,
    cached_tokens: float = 0.0,
) -> SteadyLoad:
    """The steady load of ``batch`` streams (module docstring). With ``isl`` and ``osl`` the mean
    context is ``cached_tokens + isl + osl/2`` and prompts share the steps (unless a prefill pool takes
    them); without, steps are decode-only at ``context_tokens``. ``batch`` may be fractional (a point
    between two batches of the frontier)."""
    b = max(float(batch), 1.0)
    tps = physics.decode_speedup * physics.tokens_per_step
    if isl is None or osl is None:
        step = physics.decode_step_s(b, context_tokens)
        ttft = physics.ttft_overhead_s + step_s(physics.steps, b - 1, context_tokens, context_tokens)
        per_user = tps / step
        return SteadyLoad(step, ttft, per_user, b * per_user / physics.counted_chips, 0.0, b, ttft)
    context = cached_tokens + isl + osl / 2.0
    prompt = 2.0 * cached_tokens + isl  # twice the mean attended span of a prompt token
    cap = physics.max_batch(context)
    running = min(b, float(cap)) if cap >= 1 else b
    aggregated = physics.prefill_pool is None
    prefill_per_step = (running - 1.0) * isl * physics.tokens_per_step / osl if aggregated else 0.0
    step = _mean_step_s(physics, running, context, prefill_per_step, isl, prompt)
    per_user = tps / step
    decode_s = max(osl - 1.0, 0.0) / per_user
    in_flight = 0.5 * step * (running - 1.0) / running if aggregated else 0.0
    own = physics.ttft_overhead_s + in_flight + _own_prefill_s(physics, running - 1.0, context, isl, prompt)
    service, servers = _prefill_server(physics, isl, prompt)

    others = (running - 1.0) / running  # a stream's own prompts never queue behind each other

    def wait(rate: float) -> float:
        rho = rate * service / servers
        return others * rho * service / (2.0 * servers * (1.0 - rho)) if rho < 1.0 else math.inf

    # λ·(own + wait(λ) + decode) = running, increasing in λ: bisect between 0 and its two bounds
    high = running / (own + decode_s)
    if service > 0:
        high = min(high, servers / service)
    low = 0.0
    for _ in range(_BISECTIONS):
        mid = 0.5 * (low + high)
        if mid * (own + wait(mid) + decode_s) > running:
            high = mid
        else:
            low = mid
    rate = low
    queue = wait(rate) if rate > 0 else 0.0
    busy = min(others * rate * service / servers, 1.0) if rate > 0 else 0.0
    ttft = own + queue
    median = own + median_wait_s(queue, busy)
    if b > running and rate > 0:  # streams beyond the KV-memory cap wait for admission
        admitted_wait = max(b / rate - (ttft + decode_s), 0.0)
        queue += admitted_wait
        ttft += admitted_wait
        median += admitted_wait
    return SteadyLoad(step, ttft, per_user, rate * osl / physics.counted_chips, queue, running, median)


def median_wait_s(mean_wait_s: float, busy: float) -> float:
    """Median of a queue's waiting time whose mean is ``mean_wait_s`` and which an arrival finds busy
    with probability ``busy``: the wait is 0 with probability ``1 − busy`` and otherwise about
    exponential with mean ``mean_wait_s / busy`` (the exponential tail of the M/G/1 waiting time,
    Kingman's heavy-traffic approximation: Kleinrock, *Queueing Systems* vol. 2, §2.2), so the median
    is 0 while at most half the arrivals wait and ``mean_wait_s / busy · ln(2·busy)`` beyond.
    ``busy`` is the single-server probability ρ (for a pool of several servers it overstates the
    chance of waiting, so the median is an upper estimate there)."""
    if busy <= 0.5 or mean_wait_s <= 0.0:
        return 0.0
    return mean_wait_s / busy * math.log(2.0 * busy)


def default_batches(max_batch: int) -> list[int]:
    """Powers of two up to ``max_batch``, plus ``max_batch`` itself."""
    batches = [1 << i for i in range(max(max_batch, 1).bit_length()) if 1 << i <= max_batch]
    if max_batch >= 1 and batches[-1] != max_batch:
        batches.append(max_batch)
    return batches


def pareto_frontier(
    physics: ReplicaPhysics,
    context_tokens: float,
    batches: Iterable[int] | None = None,
    *,
    isl: float | None = None,
    osl: float | None = None,
    usd_per_chip_hour: float | None = None,
    cached_tokens: float = 0.0,
) -> pd.DataFrame:
    """One row per batch size (default: powers of two up to the KV-memory cap, plus the cap).

    With ``isl`` and ``osl`` the KV cap and the steps use the mean context ``isl + osl/2`` (and
    ``context_tokens`` is ignored). Raises ``ValueError`` when not even one stream fits beside the
    weights, or when a requested batch exceeds the KV-memory cap.
    """
    context = context_tokens if isl is None or osl is None else cached_tokens + isl + osl / 2.0
    cap = physics.max_batch(context)
    if cap < 1:
        raise ValueError(f"no stream of {context:g} context tokens fits beside the weights")
    chosen = default_batches(cap) if batches is None else sorted(set(batches))
    too_big = [b for b in chosen if b > cap or b < 1]
    if too_big:
        raise ValueError(f"batches {too_big} outside 1..{cap} (the KV-memory cap at {context:g} tokens)")
    rows = []
    for batch in chosen:
        load = steady_load(
            physics, batch, context_tokens=context, isl=isl, osl=osl, cached_tokens=cached_tokens
        )
        aggregated = physics.prefill_pool is None and isl is not None and osl is not None
        prefill = (batch - 1) * isl / osl if aggregated and isl is not None and osl is not None else 0.0
        cost = math.nan
        if usd_per_chip_hour is not None and load.tok_s_per_chip > 0:
            cost = cost_usd_per_mtok(usd_per_chip_hour, load.tok_s_per_chip)
        rows.append(
            {
                "batch": batch,
                "tok_s_per_user": load.tok_s_per_user,
                "tok_s_per_replica": load.tok_s_per_chip * physics.counted_chips,
                "tok_s_per_chip": load.tok_s_per_chip,
                "step_s": load.step_s,
                "bound": physics.bound(batch, context, prefill),
                "ttft_s": load.ttft_s,
                "ttft_median_s": load.ttft_median_s,
                "cost_usd_per_mtok": cost,
            }
        )
    return pd.DataFrame(rows, columns=PARETO_COLUMNS)


UNCAPPED_SEARCH_BATCH = 1 << 20
"""Largest batch :func:`load_at_interactivity` and :func:`load_at_throughput` search when not even one
stream fits the replica's KV memory: :func:`steady_load` then runs any batch uncapped, so the frontier
they interpolate is that uncapped one, the same the load at a stated concurrency is computed on
(2^20 streams: far beyond any measured concurrency). Before, the search stopped at batch 1 there."""


def _search_cap(physics: ReplicaPhysics, context_tokens: float) -> float:
    """Upper end of a frontier search: the KV-memory cap, or :data:`UNCAPPED_SEARCH_BATCH` where it
    holds no stream (:func:`steady_load` ignores a cap below 1)."""
    cap = physics.max_batch(context_tokens)
    return float(cap) if cap >= 1 else float(UNCAPPED_SEARCH_BATCH)


def _bisect_batch(check: Callable[[float], bool], cap: float) -> float:
    """Largest batch in [1, cap] (log-bisection) for which ``check(batch)`` holds (it holds below a
    crossing and fails above it); 1 if it fails at 1, ``cap`` if it holds there."""
    low, high = 0.0, math.log(max(cap, 1.0))
    if not check(1.0):
        return 1.0
    if check(math.exp(high)):
        return math.exp(high)
    for _ in range(_BISECTIONS):
        mid = 0.5 * (low + high)
        if check(math.exp(mid)):
            low = mid
        else:
            high = mid
    return math.exp(low)


def load_at_interactivity(
    physics: ReplicaPhysics, tok_s_per_user: float, *, isl: float, osl: float, cached_tokens: float = 0.0
) -> tuple[SteadyLoad, float]:
    """The steady load whose per-user speed is ``tok_s_per_user`` (interpolating the frontier between
    batches), and its batch; clamped to batch 1 or the KV-memory cap when the frontier does not reach
    it (the load's own per-user speed then differs from the target)."""
    cap = _search_cap(physics, cached_tokens + isl + osl / 2.0)

    def faster(b: float) -> bool:
        load = steady_load(physics, b, context_tokens=0.0, isl=isl, osl=osl, cached_tokens=cached_tokens)
        return load.tok_s_per_user >= tok_s_per_user

    batch = _bisect_batch(faster, cap)
    return steady_load(
        physics, batch, context_tokens=0.0, isl=isl, osl=osl, cached_tokens=cached_tokens
    ), batch


def load_at_throughput(
    physics: ReplicaPhysics, tok_s_per_chip: float, *, isl: float, osl: float, cached_tokens: float = 0.0
) -> tuple[SteadyLoad, float]:
    """The steady load whose output tok/s per chip is ``tok_s_per_chip`` (interpolating the frontier),
    and its batch; clamped to batch 1 or the KV-memory cap when the frontier does not reach it."""
    cap = _search_cap(physics, cached_tokens + isl + osl / 2.0)

    def slower(b: float) -> bool:
        load = steady_load(physics, b, context_tokens=0.0, isl=isl, osl=osl, cached_tokens=cached_tokens)
        return load.tok_s_per_chip <= tok_s_per_chip

    batch = _bisect_batch(slower, cap)
    return steady_load(
        physics, batch, context_tokens=0.0, isl=isl, osl=osl, cached_tokens=cached_tokens
    ), batch
