"""Routing policies: which backend and tier serve each session and turn.

One file per policy; each declares a :class:`~speedtrap.config.policy.PolicySpec` subclass whose
``kind`` registers it, so adding a policy is adding a file (and importing it here).
"""

from speedtrap.config.policy import PolicySpec, RouteSpec, known_policy_kinds, policy_spec_class
from speedtrap.policies.always import AlwaysPolicy, AlwaysSpec
from speedtrap.policies.background_slow import BackgroundSlowPolicy, BackgroundSlowSpec
from speedtrap.policies.base import BuildsPolicy, FanOut, Route, RoutingPolicy, build_policy
from speedtrap.policies.best_of_n import BestOfNPolicy, BestOfNSpec
from speedtrap.policies.by_difficulty import ByDifficultyPolicy, ByDifficultySpec
from speedtrap.policies.escalate import EscalatePolicy, EscalateSpec
from speedtrap.policies.fast_share import FastShareSpec
from speedtrap.policies.interactive_fast import InteractiveFastPolicy, InteractiveFastSpec
from speedtrap.policies.manual import ManualPolicy, ManualSpec

__all__ = [
    "AlwaysPolicy",
    "AlwaysSpec",
    "BackgroundSlowPolicy",
    "BackgroundSlowSpec",
    "BestOfNPolicy",
    "BestOfNSpec",
    "BuildsPolicy",
    "ByDifficultyPolicy",
    "ByDifficultySpec",
    "EscalatePolicy",
    "EscalateSpec",
    "FanOut",
    "FastShareSpec",
    "InteractiveFastPolicy",
    "InteractiveFastSpec",
    "ManualPolicy",
    "ManualSpec",
    "PolicySpec",
    "Route",
    "RouteSpec",
    "RoutingPolicy",
    "build_policy",
    "known_policy_kinds",
    "policy_spec_class",
]
