"""Inference physics and the serving pool. Knows nothing of developers; never imports Mesa.

The pool's modules may be compiled (mypyc); :mod:`speedtrap.build` says which build runs, and
makes the imports below take the Python sources where the pure build is asked for.
"""

from speedtrap.build import use_sources_where_needed

use_sources_where_needed()  # before the pool's modules are imported

from speedtrap.serving.economics import (
    ProviderEconomics,
    cost_usd_per_mtok,
    provider_economics,
    revenue_usd_per_chip_hour,
)
from speedtrap.serving.pareto import SteadyLoad, pareto_frontier, steady_load
from speedtrap.serving.pool import ServingPool
from speedtrap.serving.pricing import request_cost_usd
from speedtrap.serving.replica import ReplicaPhysics
from speedtrap.serving.request import REQUEST_COLUMNS, Request
from speedtrap.serving.speed import FixedRate, SharedRate, SpeedModel

__all__ = [
    "REQUEST_COLUMNS",
    "FixedRate",
    "ProviderEconomics",
    "ReplicaPhysics",
    "Request",
    "ServingPool",
    "SharedRate",
    "SpeedModel",
    "SteadyLoad",
    "cost_usd_per_mtok",
    "pareto_frontier",
    "provider_economics",
    "request_cost_usd",
    "revenue_usd_per_chip_hour",
    "steady_load",
]
