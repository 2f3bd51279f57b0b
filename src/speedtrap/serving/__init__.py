"""Inference physics and the serving pool. Knows nothing of developers; never imports Mesa."""

from speedtrap.serving.pricing import request_cost_usd
from speedtrap.serving.speed import FixedRate, SharedRate, SpeedModel

__all__ = ["FixedRate", "SharedRate", "SpeedModel", "request_cost_usd"]
