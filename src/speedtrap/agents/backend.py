"""The Backend agent: one named backend of the scenario, owning its serving pool."""

from __future__ import annotations

from collections.abc import Callable

import mesa

from speedtrap.config.backend import Backend as BackendSpec
from speedtrap.serving.pool import ServingPool
from speedtrap.serving.replica import ReplicaPhysics
from speedtrap.serving.request import Request, RequestTally
from speedtrap.serving.speed import SpeedModel


class Backend(mesa.Agent):
    """A backend fleet shared by every developer of the model.

    ``speed`` defaults to the roofline physics of ``spec`` (``ReplicaPhysics.from_backend``); pass a
    :class:`~speedtrap.serving.speed.SpeedModel` such as ``FixedRate`` to pin speeds in tests and
    what-if studies. ``record`` keeps every finished request (the run's request table); without
    it the pool only tallies the numbers the summary needs (``tally``). ``cache_ttl_s``, the prompt
    cache's lifetime (``TaskMix.cache_ttl_s``), sets the rate of cache writes (``Price.for_cache_ttl``).
    """

    def __init__(
        self,
        model: mesa.Model,
        name: str,
        spec: BackendSpec,
        *,
        cache_ttl_s: float,
        speed: SpeedModel | None = None,
        record: bool = True,
    ) -> None:
        super().__init__(model)
        self.name = name
        self.spec = spec
        self.context_window_tokens = spec.llm.context_window_tokens
        self.tally: RequestTally | None = None if record else RequestTally()
        self.pool = ServingPool(
            model,
            speed if speed is not None else ReplicaPhysics.from_backend(spec),
            replicas=spec.replicas,
            tiers=spec.tiers,
            price=spec.price.for_cache_ttl(cache_ttl_s),  # the write rate of the cache's lifetime
            background_streams_per_replica=spec.background_streams_per_replica,
            cache_writes=spec.cache_writes,
            record=record,
            tally=self.tally,
        )

    def submit(
        self,
        *,
        tier: str,
        input_tokens: int,
        cached_tokens: int,
        output_tokens: int,
        on_done: Callable[[Request], None],
        tag: object,
    ) -> Request:
        """Send one request to the pool now; ``on_done(request)`` fires at its last token."""
        return self.pool.submit(
            tier=tier,
            input_tokens=input_tokens,
            cached_tokens=cached_tokens,
            output_tokens=output_tokens,
            on_done=on_done,
            tag=tag,
        )
