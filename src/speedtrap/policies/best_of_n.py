"""``best_of_n``: N parallel agent trajectories per session, then a distill step and a refine step
(parallel-distill-refine, PDR).

**What runs.** Every session the policy routes runs as ``trajectories`` (N) agent trajectories in
lock-step: each agent turn sends N requests of the turn's size to the fleet at once (N× the tokens,
N× the price, N streams of fleet load) and the turn ends when the slowest of them, then the turn's
tool call, is done (the trajectories run their tools in parallel sandboxes). After the planned turns
(a session's own length, repairs and malformed tool calls included) one **distill** request reads the
N trajectories' results — ``distill_tokens_per_trajectory`` tokens each (assumption: a diff and a
test log, about 2 000 tokens) on top of the context — and then ``refine_turns`` ordinary
single-trajectory turns refine the chosen result before the developer reviews it. With N = 1 none of
this happens: the policy is ``always`` on the same route, bit for bit.

**Quality.** The session's result is wrong with the backend's failure probability times
``N^(−selection_exponent)`` (times ``refine_failure_multiplier`` for N ≥ 2), drawn with the task's own
uniform so that a task that succeeds with one trajectory succeeds with N (common random numbers).
The power law fits published best-of-N results of coding agents on SWE-bench Verified
(docs/claims.md, "Best-of-N"): OpenHands with a trained critic, Claude 3.7 Sonnet, 60.6% resolved
with one trajectory and 66.4% with five ("log-linear"): failures × 0.853 = 5^−0.099; SWE-Lego's
verifier at 16 trajectories, 42.2% → 49.6% and 52.6% → 58.8%: failures × 0.872 and × 0.869 ≈ 16^−0.05.
The default exponent is OpenHands' 0.099 (a frontier model); 0.05 is the low end of the range.
Parallel-distill-refine (Madaan et al. 2025) reports its gains on maths (AIME), not on coding: its
refine step adds nothing to the selection curve by default (``refine_failure_multiplier = 1``, an
assumption to vary).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from speedtrap.config.policy import PolicySpec, RouteSpec
from speedtrap.policies.always import AlwaysPolicy
from speedtrap.policies.base import FanOut, Route, RoutingPolicy, only_backend, resolve

if TYPE_CHECKING:
    from speedtrap.config.backend import Backend

DEFAULT_SELECTION_EXPONENT = 0.099
"""β of the failure multiplier N^(−β): OpenHands' critic on SWE-bench Verified, 60.6% → 66.4% resolved
from 1 to 5 trajectories (failures × 0.853 = 5^−0.099)."""
SELECTION_EXPONENT_RANGE = (0.05, 0.10)
"""Published range of β: SWE-Lego's verifier at 16 trajectories (≈0.05) to OpenHands' critic (≈0.10)."""
DEFAULT_DISTILL_TOKENS = 2_000
"""Assumption: what the distill step reads of each trajectory (its diff and test log)."""


class BestOfNSpec(PolicySpec):
    """``trajectories`` parallel trajectories per session on ``backend`` (default: the scenario's only
    backend) and ``tier`` (default: its default tier), then distill and refine (module docstring)."""

    kind: Literal["best_of_n"] = "best_of_n"
    backend: str | None = None
    tier: str | None = None
    trajectories: int = Field(default=1, ge=1, le=64, description="Parallel trajectories per session (N).")
    selection_exponent: float = Field(
        default=DEFAULT_SELECTION_EXPONENT, ge=0, le=2, description="β: failures × N^(−β)."
    )
    distill_tokens_per_trajectory: int = Field(default=DEFAULT_DISTILL_TOKENS, ge=0, le=1_000_000)
    refine_turns: int = Field(
        default=1, ge=0, le=100, description="Single-trajectory turns after distilling."
    )
    refine_failure_multiplier: float = Field(
        default=1.0, ge=0, le=1, description="Failures × this after the refine step (N ≥ 2; assumption: 1)."
    )

    def references(self, backends: Mapping[str, Backend]) -> dict[str, tuple[str, str | None]]:
        backend = self.backend if self.backend is not None else only_backend(backends, "backend")
        return {"backend": (backend, self.tier)}

    def fan_out(self) -> FanOut | None:
        """What each session runs, or ``None`` for one trajectory (the plain session)."""
        n = self.trajectories
        if n == 1:
            return None
        return FanOut(
            trajectories=n,
            failure_multiplier=failure_multiplier(n, self.selection_exponent, self.refine_failure_multiplier),
            distill_tokens=n * self.distill_tokens_per_trajectory,
            refine_turns=self.refine_turns,
        )

    def build(self, backends: Mapping[str, Backend]) -> RoutingPolicy:
        backend, tier = self.references(backends)["backend"]
        route = resolve(backends, RouteSpec(backend=backend, tier=tier))
        fan_out = self.fan_out()
        return AlwaysPolicy(route) if fan_out is None else BestOfNPolicy(route, fan_out)


def failure_multiplier(trajectories: int, exponent: float, refine: float = 1.0) -> float:
    """The factor on a session's failure probability with ``trajectories`` (N) parallel trajectories:
    ``N^(−exponent)``, times ``refine`` when N ≥ 2 (module docstring)."""
    if trajectories < 1:
        raise ValueError(f"trajectories must be at least 1, got {trajectories}")
    if trajectories == 1:
        return 1.0
    return float(trajectories ** (-exponent)) * refine


class BestOfNPolicy(RoutingPolicy):
    """One route for every session, each run as :attr:`fan_out` says."""

    def __init__(self, route: Route, fan_out: FanOut) -> None:
        self.route = route
        self.fan_out = fan_out

    def for_session(self, difficulty: str, attempt: int) -> Route:
        return self.route
