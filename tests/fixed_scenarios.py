"""Deterministic little scenarios for the agent tests (every duration fixed, one backend)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from speedtrap.config import Scenario
from speedtrap.models import RunResult, WorkflowModel


@dataclass(frozen=True)
class FixedTurn:
    """A SpeedModel double: constant decode rate and constant prefill (time to first token)."""

    rate_tok_s: float
    ttft_s: float
    kv_capacity_tokens: float = math.inf

    def decode_rate_tok_s(self, batch: int, context_tokens: float) -> float:
        return self.rate_tok_s

    def prefill_s(self, uncached_tokens: int) -> float:
        return self.ttft_s


NEVER_WRONG = {"horizon_min": 1e15, "horizon_slope": 10.0, "acceptance_scale": 1.0}
"""A success curve that never fails a task of human length: a horizon of 1e15 min at slope 10 puts a
10-minute task ≈44 doublings below it, where the failure probability is exp(−440) ≈ 1e-191 and
rounds to 0 in float (the curve itself is never clipped)."""
ALWAYS_WRONG_HORIZON_MIN = 1e-12
"""With :data:`NEVER_WRONG`'s slope, a horizon that every task is ≈43 doublings above: the success
probability is ≈1e-187 and the failure probability rounds to 1 in float."""


TURN = FixedTurn(rate_tok_s=50.0, ttft_s=1.0)
"""1 s to the first token, then the other 100 of 101 output tokens in 2 s; with 5 s of tool a turn is 8 s."""


def tiny(overrides: dict[str, Any] | None = None, *, backend: str = "gpu-fast") -> Scenario:
    """One developer, one difficulty, two turns per session, prompt 60 s, review 30 s."""
    fixed = {"sigma": 0.0}
    data = {
        "developers": 1,
        "horizon_s": 250.0,
        "task_mix": {
            "sizing": "difficulty",
            "difficulties": {"easy": {"share": 1.0, "turns_mean": 2.0, "human_length_s": 600.0}},
            "turns_log_sd": 0.0,
            "initial_context_tokens": {"median": 1000.0, **fixed},
            "output_tokens": {"median": 101.0, **fixed},  # the first comes with the prefill
            "tool_result_tokens": {"median": 10.0, **fixed},
            "tool_s": {"median": 5.0, **fixed},
            "shared_prefix_tokens": 0,  # every new conversation cold (tests of the shared head set it)
        },
        "developer": {
            "prompt_s": {"median": 60.0, **fixed},
            "checkin_every_turns": 100,
            "checkin_random": False,
            "checkin_s": {"median": 20.0, **fixed},
            "attention": {
                "rule": "threshold",
                "flow_threshold_s": 1e9,
                "other_work_prob": 1.0,
                "resumption_random": False,
                "resumption_max_s": 100.0,
                "resumption_tau_s": 10.0,
            },
            "review": {"base_s": 30.0, "s_per_kilotoken": 0.0, "sigma": 0.0, "detect_prob": 1.0},
            "fixing": {
                "hand_fix_prob": 1.0,
                "hand_fix_s": {"median": 100.0, **fixed},
                "diagnose_s": {"median": 40.0, **fixed},
                "max_repair_sessions": 1,
                "rework_multiplier": 3.0,
            },
        },
        "backends": {
            "b": {
                "preset": backend,
                "default_tier": "standard",
                "typical_batch": 8,
                "background_streams_per_replica": 0,
                "quality": {**NEVER_WRONG, "tool_error_prob": 0.0},
            }
        },
        "policy": {"kind": "always"},
    }
    return Scenario.model_validate(data).with_overrides(overrides or {})


def run(scenario: Scenario, seed: int = 1, speed: FixedTurn = TURN) -> RunResult:
    """Run to the horizon with every backend at ``speed``, tracing the ledger."""
    model = WorkflowModel(scenario, rng=seed, speeds=dict.fromkeys(scenario.backends, speed), trace=True)
    model.run_until(scenario.horizon_s)
    return model.result()


def seconds(result: RunResult, category: str, developer: int = 0) -> float:
    """Seconds developer ``developer`` spent in ``category``."""
    ledger = result.ledger
    row = ledger[(ledger["developer"] == developer) & (ledger["category"] == category)]
    return float(row["seconds"].iloc[0])


def bare_task(index: int = 0, *, seed_entropy: int = 42, base_turns: int = 2) -> Any:
    """A task with fixed, trivial pre-drawn fields (the per-turn and per-stretch draws come from its
    keyed streams): for tests of those draws."""
    from speedtrap.agents import Task

    return Task(
        developer=0,
        index=index,
        difficulty="easy",
        base_turns=base_turns,
        initial_context_tokens=1000,
        prompt_s=1.0,
        u_fail=[0.5],
        u_detect=[0.5],
        u_hand=[0.5],
        review_factor=[1.0],
        diagnose_s=[1.0],
        hand_fix_s=1.0,
        rework_s=1.0,
        escape_delay_s=1.0,
        seed_entropy=seed_entropy,
        seed_key=(0, index),
    )
