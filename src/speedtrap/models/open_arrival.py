"""Open arrivals: Poisson request streams per tier feeding one serving pool (a Mesa model).

Used for the fast-mode externality experiments (how fast-tier adoption slows a shared fleet),
for the pool's queueing validation and for its benchmark.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal, Self

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from speedtrap.config.base import Spec
from speedtrap.config.tier import Price, Tier
from speedtrap.models.base import EventModel
from speedtrap.serving.pool import ServingPool
from speedtrap.serving.request import decode_rate_tok_s
from speedtrap.serving.speed import SpeedModel

OutputSampler = Callable[[np.random.Generator, int], Sequence[int] | np.ndarray]
"""Draws ``n`` output-token counts (integers >= 1) from the given generator."""


class ArrivalStream(Spec):
    """A Poisson stream of requests of one tier.

    Defaults describe an agent turn (SemiAnalysis agent traces, DESIGN.md §5): input ≈96k tokens,
    mostly cached, output ≈213 tokens. 213 is the reported *median*; it is used as the mean here
    (assumption: no mean is published). The cached share, 90%, is an assumption ("mostly cached").
    ``output_distribution="exponential"`` draws the geometric distribution on {1, 2, ...} with
    mean ``mean_output_tokens``: the memoryless distribution on whole tokens, so that with a
    fixed decode rate service times are exponential up to one token (squared CV 1 − 1/mean).
    """

    tier: str = Field(default="standard", min_length=1)
    rate_per_s: float = Field(gt=0, allow_inf_nan=False, description="Poisson arrival rate (requests/s).")
    mean_output_tokens: float = Field(default=213.0, ge=1, allow_inf_nan=False)
    output_distribution: Literal["exponential", "fixed"] = "exponential"
    input_tokens: int = Field(default=96_000, ge=0)
    cached_tokens: int = Field(default=86_400, ge=0)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.cached_tokens > self.input_tokens:
            raise ValueError(
                f"cached_tokens ({self.cached_tokens}) exceeds input_tokens ({self.input_tokens})"
            )
        if self.output_distribution == "fixed" and self.mean_output_tokens != int(self.mean_output_tokens):
            raise ValueError(f"a fixed output size must be a whole number, got {self.mean_output_tokens}")
        return self


class _ArrivalProcess:
    """One stream's arrivals: pre-drawn blocks of gaps and sizes, one recurring Mesa event."""

    __slots__ = (
        "__weakref__",
        "end_s",
        "gaps",
        "i",
        "model",
        "outputs",
        "rng_gaps",
        "rng_sizes",
        "sampler",
        "stream",
    )

    def __init__(
        self,
        model: OpenArrivalModel,
        stream: ArrivalStream,
        rng_gaps: np.random.Generator,
        rng_sizes: np.random.Generator,
        sampler: OutputSampler | None,
    ) -> None:
        self.model = model
        self.stream = stream
        self.rng_gaps = rng_gaps
        self.rng_sizes = rng_sizes
        self.sampler = sampler
        self.gaps: list[float] = []
        self.outputs: list[int] = []
        self.i = 0

    def _refill(self) -> None:
        n = self.model.block_size
        s = self.stream
        self.gaps = self.rng_gaps.exponential(1.0 / s.rate_per_s, size=n).tolist()
        if self.sampler is not None:
            out = np.asarray(self.sampler(self.rng_sizes, n))
            if out.shape != (n,) or not np.issubdtype(out.dtype, np.integer) or out.min() < 1:
                raise ValueError(f"output sampler for tier {s.tier!r} must return {n} integers >= 1")
            self.outputs = out.tolist()
        elif s.output_distribution == "exponential":
            self.outputs = self.rng_sizes.geometric(1.0 / s.mean_output_tokens, size=n).tolist()
        else:
            self.outputs = [int(s.mean_output_tokens)] * n
        self.i = 0

    def next_gap_s(self, model: OpenArrivalModel) -> float:
        """Seconds to the next arrival (the recurring schedule's interval)."""
        if self.i == len(self.gaps):
            self._refill()
        return self.gaps[self.i]

    def start(self, end_s: float) -> None:
        """Schedule the first arrival, one gap after now; none at or after ``end_s`` is scheduled
        beyond it (the same times as a Mesa recurring schedule with ``end=end_s``)."""
        self.end_s = end_s
        self._schedule(self.model.time + self.next_gap_s(self.model))

    def _schedule(self, at: float) -> None:
        if at <= self.end_s:
            self.model.schedule_event(self._fire, at=at)

    def _fire(self) -> None:
        self.arrive()
        self._schedule(self.model.time + self.next_gap_s(self.model))

    def arrive(self) -> None:
        s = self.stream
        self.model.pool.submit(
            tier=s.tier,
            input_tokens=s.input_tokens,
            cached_tokens=s.cached_tokens,
            output_tokens=self.outputs[self.i],
        )
        self.i += 1


class OpenArrivalModel(EventModel):
    """A serving pool fed by independent Poisson streams (one or more per tier).

    Each stream draws from two generators spawned from the model's ``rng`` (gaps, sizes), so a
    change to one stream's size distribution leaves every arrival time unchanged. Random numbers
    are drawn in vectorised blocks of ``block_size`` (exact distributions, nothing clipped).
    Statistics: :meth:`requests_frame` keeps requests arriving at or after ``warmup_s``; the
    pool's time averages restart at ``warmup_s``. No arrivals are generated after
    ``arrivals_end_s`` (run on to drain the system).
    """

    def __init__(
        self,
        *,
        speed: SpeedModel,
        replicas: int,
        tiers: Sequence[Tier],
        arrivals: Sequence[ArrivalStream],
        price: Price | None = None,
        background_streams_per_replica: int = 0,
        cache_writes: bool = True,
        record: bool = True,
        warmup_s: float = 0.0,
        arrivals_end_s: float = math.inf,
        output_samplers: Sequence[OutputSampler | None] | None = None,
        block_size: int = 4096,
        rng: int | np.random.Generator | None = None,
    ) -> None:
        super().__init__(rng=rng)
        if not arrivals:
            raise ValueError("arrivals must list at least one stream")
        if not warmup_s >= 0:
            raise ValueError(f"warmup_s must be >= 0, got {warmup_s}")
        if block_size < 1:
            raise ValueError(f"block_size must be at least 1, got {block_size}")
        samplers = list(output_samplers) if output_samplers is not None else [None] * len(arrivals)
        if len(samplers) != len(arrivals):
            raise ValueError(f"{len(samplers)} output samplers for {len(arrivals)} arrival streams")
        known = {t.name for t in tiers}
        for k, s in enumerate(arrivals):
            if s.tier not in known:
                names = ", ".join(sorted(known))
                raise ValueError(f"arrivals[{k}].tier: unknown tier {s.tier!r} (known: {names})")
        self.warmup_s = float(warmup_s)
        self.arrivals_end_s = float(arrivals_end_s)
        self.block_size = block_size
        self.arrivals = tuple(arrivals)
        self.pool = ServingPool(
            self,
            speed,
            replicas=replicas,
            tiers=tiers,
            price=price if price is not None else Price(),
            background_streams_per_replica=background_streams_per_replica,
            cache_writes=cache_writes,
            record=record,
        )
        streams = self.rng.spawn(2 * len(arrivals))
        self._processes = [
            _ArrivalProcess(self, s, streams[2 * k], streams[2 * k + 1], samplers[k])
            for k, s in enumerate(arrivals)
        ]
        for process in self._processes:  # self-rescheduling bound methods: the lean event path
            process.start(self.arrivals_end_s)
        if self.warmup_s > 0:
            self.schedule_event(self._end_warmup, at=self.warmup_s)

    def _end_warmup(self) -> None:
        self.pool.reset_stats()

    def requests_frame(self, *, include_warmup: bool = False) -> pd.DataFrame:
        """Finished requests (pool schema), by default only those arriving at or after ``warmup_s``."""
        frame = self.pool.requests_frame()
        if include_warmup or self.warmup_s == 0:
            return frame
        return frame[frame["arrival_s"] >= self.warmup_s].reset_index(drop=True)

    def tier_summary(self) -> pd.DataFrame:
        """Per tier, over requests arriving after the warm-up: count, mean and p95 queue wait (s),
        mean time to first token (s), mean sojourn (s), mean per-stream decode speed (tok/s) and
        mean cost (USD)."""
        frame = self.requests_frame()
        speed = decode_rate_tok_s(frame["output_tokens"], frame["decode_s"])
        grouped = frame.assign(decode_tok_s=speed).groupby("tier")
        return pd.DataFrame(
            {
                "requests": grouped.size(),
                "mean_queue_wait_s": grouped["queue_wait_s"].mean(),
                "p95_queue_wait_s": grouped["queue_wait_s"].quantile(0.95),
                "mean_ttft_s": grouped["ttft_s"].mean(),
                "mean_sojourn_s": grouped["sojourn_s"].mean(),
                "mean_decode_tok_s": grouped["decode_tok_s"].mean(),
                "mean_cost_usd": grouped["cost_usd"].mean(),
            }
        )
