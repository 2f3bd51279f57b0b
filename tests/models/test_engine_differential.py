"""The randomised differential test of the two engines (issue 41): seeded random scenarios over every
field the typed core reads (speedtrap.models.core_fields.CORE_READS) give the same tables and
summaries on the typed core as on the Mesa model, bit for bit; and scenarios aimed at the rules the
core mirrors (repairs running out, redo, escapes and rework, rejected check-ins, fixed stretches,
compaction, parallel sessions, queueing) reach them and agree.

Each random scenario starts from the headline on a random backend preset with 1-6 developers for
0.1-0.75 developer-day, then changes fields of CORE_READS in a seeded round robin (each field drawn
at least once in the normal run, many times in the slow one) with a value the spec accepts: a
float scaled by a log-normal factor or drawn in [0, 1) for a probability, an integer moved, a flag
flipped, a choice drawn among its values, an optional part switched on or off. A quarter of them
then route by tier instead (``fast_share`` with a random share, ``background_slow`` or
``interactive_fast`` over random tiers of the backend, a tier the policy needs added with a random
priority, cap and price; half of them crowded onto one replica with small caps, so that priority
levels queue and reserve replicas). 100 scenarios run in the normal suite, 600 more under
``make test-slow``. ``scripts/mutants.py`` checks that Mesa-only rule
changes fail this module (docs/performance.md, "Mutation check").
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal
from pydantic import ValidationError

import speedtrap.models.workflow as workflow
from speedtrap.config import Scenario
from speedtrap.config.presets import BACKEND_PRESETS, backend_preset
from speedtrap.models import simulate, simulate_summary
from speedtrap.models.core_fields import CORE_READS, MESA_ONLY
from speedtrap.models.results import RunResult
from speedtrap.models.typed_core import TYPED_CORE, core_module, not_covered

ROOT = Path(__file__).resolve().parents[2]
HEADLINE = ROOT / "experiments" / "scenarios" / "headline.toml"
DAY_S = 28800.0
TABLES = ("ledger", "tasks", "requests", "backend_stats", "stretches")
SEED = 41
NORMAL = 100
SLOW = 600

CORE = core_module()
needs_core = pytest.mark.skipif(CORE is None, reason="the typed core is not built or not in use here")

TIER_POLICY_FIELDS = frozenset(
    f"policy.{name}"
    for name in ("share", "fast_tier", "standard_tier", "interactive_tier", "background_tier")
)
"""Fields of the policies that route by tier (``fast_share``, ``interactive_fast``, ``background_slow``),
drawn with the policy (:func:`with_tier_policy`)."""

SET_APART = frozenset(
    {"developers", "horizon_s", "workday_s", "backends[*].tiers[*].name", *TIER_POLICY_FIELDS}
)
"""Fields of CORE_READS the round robin leaves alone: the team and horizon are drawn small for every
scenario (the run's size), a day's length only rescales the summary, a tier's name is a reference
(the policy's tier draws the route), and the tier policies' fields are drawn with their policy."""

TIER_POLICIES = ("fast_share", "background_slow", "interactive_fast")
"""The policies that route a backend's tiers, drawn for a share of the random scenarios."""

ROUND_ROBIN = sorted(CORE_READS - SET_APART)
PER_SCENARIO = 8


def _dirichlet(rng: np.random.Generator, n: int) -> list[float]:
    weights = rng.gamma(1.0, size=n)
    return [float(w) for w in weights / weights.sum()]


def _lognormal(rng: np.random.Generator, median: float, sigma: float) -> dict[str, float]:
    return {"median": float(median * math.exp(rng.normal(0.0, 0.3))), "sigma": sigma}


_SKIP = object()

OPTIONAL_PARTS: dict[str, Callable[[np.random.Generator], dict[str, Any]]] = {
    "developer.attention.away_s": lambda rng: {
        "median": float(rng.uniform(30.0, 300.0)),
        "sigma": float(rng.uniform(0.0, 1.5)),
    },
    "backends[*].speculative": lambda rng: {},
    "backends[*].disaggregation": lambda rng: {},
}
"""Optional parts of the spec (``None`` switches them off) and a draw of one when switched on."""


ZEROABLE = frozenset(
    {"stretch_sigma", "resumption_max_s", "resumption_short_s", "other_work_resumption_max_s", "sigma"}
)
"""Fields whose zero is a rule of its own (geometric stretches, no resumption cost, a fixed draw):
drawn as 0 now and then."""

NONE_DRAWS: dict[str, Callable[[np.random.Generator], Any]] = {
    "prefill_chunk_tokens": lambda rng: int(rng.choice([2048, 8192])),
    "dispatch_bytes": lambda rng: float(rng.uniform(0.5, 2.0)),
    "expert_parallel": lambda rng: int(rng.choice([1, 2, 4, 8])),
    "sliding_window_tokens": lambda rng: int(rng.choice([1024, 4096])),
    "hidden_size": lambda rng: int(rng.choice([4096, 8192])),
    "expert_bytes_per_param": lambda rng: float(rng.uniform(0.5, 2.0)),
}
"""A value for an optional field left unset (``None``), by its name."""


def _special(path: str, rng: np.random.Generator, current: Any, data: dict[str, Any]) -> Any:
    """A new value for the fields a generic change cannot draw (optional values, choices, fields that
    need another beside them), or ``NotImplemented``."""
    leaf = path.rsplit(".", 1)[-1]
    backend = next(iter(data["backends"].values()))
    if path == "developer.attention.parallel_sessions_probs":
        return (
            None if current is not None and rng.random() < 0.3 else _dirichlet(rng, int(rng.integers(1, 4)))
        )
    if path == "developer.attention.max_parallel_sessions":  # applies without a mix of sessions
        data["developer"]["attention"]["parallel_sessions_probs"] = None
        return int(rng.integers(1, 4))
    llm = backend["llm"]
    if path == "backends[*].llm.sliding_window_layers":  # needs a window
        llm["sliding_window_tokens"] = llm["sliding_window_tokens"] or int(rng.choice([1024, 4096]))
        return int(rng.integers(0, llm["layers"] + 1))
    if path == "backends[*].llm.kv_lora_rank":  # latent attention caches one latent
        llm["kv_heads"] = 1
        return None if current is not None else int(rng.choice([256, 512]))
    if leaf == "chips_per_replica":  # a replica must hold the model: whole nodes
        return int(rng.choice(sorted({8, 16, 32} - {current})))
    if current is None and leaf in NONE_DRAWS:
        return NONE_DRAWS[leaf](rng)
    if leaf in ("attention_data_parallel", "expert_parallel"):
        return int(rng.choice([1, 2, 4, 8]))
    if path == "developer.stretches_per_transcript":  # 1: every stretch a fresh transcript
        if current is not None and rng.random() < 0.4:
            return None
        return 1.0 if rng.random() < 0.2 else float(rng.uniform(1.0, 6.0))
    if leaf in ZEROABLE and current and rng.random() < 0.3:
        return 0.0
    if path in ("policy.tier", "backends[*].default_tier"):  # another of the backend's tiers
        others = sorted({t["name"] for t in backend["tiers"]} - {current})
        return str(rng.choice(others)) if others else _SKIP
    if path == "policy.backend":
        return None if current is not None else next(iter(data["backends"]))
    if path == "task_mix.sizing":
        return "difficulty" if current == "effort" else "effort"
    if path == "backends[*].hardware.memory_kind":
        return "sram" if current == "hbm" else "hbm"
    if path.endswith("compute_dtype"):
        others = sorted(set(backend["hardware"]["peak_tflop_s"]) - {current})
        return str(rng.choice(others)) if others else _SKIP
    return NotImplemented


def _changed(path: str, rng: np.random.Generator, current: Any) -> Any:
    """A generic new value of the same kind as ``current`` (``_SKIP`` where there is none)."""
    leaf = path.rsplit(".", 1)[-1]
    if isinstance(current, bool):
        return not current
    if isinstance(current, int):
        if current > 8:
            return max(1, round(current * math.exp(rng.normal(0.0, 0.3))))
        return max(0, current + int(rng.choice([-2, -1, 1, 2])))
    if isinstance(current, float):
        if "prob" in leaf or leaf in ("share", "acceptance_rate", "turn_memory", "compact_at_fraction"):
            return float(rng.uniform(0.0, 1.0))
        if leaf == "delegated_fraction":  # hand work beside the agent: in (0, 1], whole tasks now and then
            return 1.0 if current < 1.0 and rng.random() < 0.3 else float(rng.uniform(0.05, 1.0))
        if current == 0.0:
            small = path.startswith("backends") and leaf.endswith("_s")
            return float(rng.uniform(0.0, 2e-3 if small else (60.0 if leaf.endswith("_s") else 1.0)))
        return float(current * math.exp(rng.normal(0.0, 0.4)))
    if isinstance(current, dict) and all(isinstance(v, float) for v in current.values()):
        return {k: float(v * math.exp(rng.normal(0.0, 0.3))) for k, v in current.items()}
    return _SKIP


def _container(node: Any, segment: str, rng: np.random.Generator) -> Any:
    if not segment.endswith("[*]"):
        return node.get(segment) if isinstance(node, dict) else None
    items = node.get(segment[:-3])
    if isinstance(items, dict) and items:
        return items[sorted(items)[int(rng.integers(len(items)))]]
    if isinstance(items, list) and items:
        return items[int(rng.integers(len(items)))]
    return None


def _walk(data: dict[str, Any], segments: list[str], rng: np.random.Generator) -> Any:
    node: Any = data
    for segment in segments:
        node = _container(node, segment, rng)
        if node is None:
            return None
    return node


def _change(data: dict[str, Any], path: str, rng: np.random.Generator) -> bool:
    """Change ``path`` in the dumped scenario ``data`` in place (switching an optional part on or
    off now and then); False where it cannot be changed."""
    for part, draw in OPTIONAL_PARTS.items():
        if path.startswith(part + "."):
            *parents, name = part.split(".")
            owner = _walk(data, parents, rng)
            if owner is None:
                return False
            if owner.get(name) is None:
                owner[name] = draw(rng)
                return True
            if rng.random() < 0.2:
                owner[name] = None
                return True
    *parents, leaf = path.split(".")
    node = _walk(data, parents, rng)
    if node is None:
        return False
    current = node.get(leaf)
    value = _special(path, rng, current, data)
    if value is NotImplemented:
        value = _changed(path, rng, current)
    if value is _SKIP:
        return False
    node[leaf] = value
    return True


def random_scenario(index: int, seed: int = SEED) -> tuple[Scenario, list[str]]:
    """The ``index``-th random scenario of the round robin and the fields it changed."""
    rng = np.random.default_rng([seed, index])
    preset = sorted(BACKEND_PRESETS)[int(rng.integers(len(BACKEND_PRESETS)))]
    base = Scenario.from_toml(HEADLINE).with_backend(preset)
    base = base.with_overrides(
        {"developers": int(rng.integers(1, 7)), "horizon_s": float(rng.uniform(0.1, 0.75)) * DAY_S}
    )
    start = (index * PER_SCENARIO) % len(ROUND_ROBIN)
    paths = [ROUND_ROBIN[(start + k) % len(ROUND_ROBIN)] for k in range(PER_SCENARIO)]
    changed: list[str] = []
    scenario = base
    for path in paths:
        for _ in range(6):  # a value the spec accepts: draw again where it refuses one
            data = scenario.model_dump(mode="python")
            if not _change(data, path, rng):
                break
            try:
                candidate = Scenario.model_validate(data)
            except (ValidationError, ValueError):
                continue
            if candidate != scenario:
                scenario = candidate
                changed.append(path)
            break
    if "developer.delegated_fraction" in CORE_READS and rng.random() < 0.2:  # hand work, more often
        scenario = scenario.with_overrides({"developer.delegated_fraction": float(rng.uniform(0.1, 0.95))})
    if "manual" in MESA_ONLY["policy.kind"] and rng.random() < 0.1:  # a policy the core runs, drawn too
        with contextlib.suppress(ValidationError, ValueError):  # the manual policy needs effort sizing
            scenario = scenario.with_backend("manual")
    if rng.random() < 0.25:  # routed by tier: several tiers of the backend in use at once
        scenario, drawn = with_tier_policy(scenario, rng)
        changed.extend(drawn)
    if rng.random() < 0.25:  # backends no session is routed to, idle beside the routed one
        scenario = with_idle_backends(scenario, rng)
    return scenario, changed


def _tier(name: str, rng: np.random.Generator, crowded: bool) -> dict[str, Any]:
    return {
        "name": name,
        "priority": int(rng.integers(-2, 3)),
        "batch_cap": int(rng.integers(1, 5)) if crowded else int(rng.choice([2, 3, 8, 64, 128])),
        "price_multiplier": float(rng.choice([0.5, 1.0, 2.0, 6.0])),
    }


def with_tier_policy(scenario: Scenario, rng: np.random.Generator) -> tuple[Scenario, list[str]]:
    """``scenario`` under a policy of :data:`TIER_POLICIES` and the policy fields drawn: the tiers it
    names drawn among the backend's, a tier it needs by default added (random priority, cap, price);
    half the time crowded (one replica, no background traffic, every tier capped at 1-4 streams)."""
    if scenario.policy.kind == "manual":
        return scenario, []
    data = scenario.model_dump(mode="python")
    name, backend = next(iter(data["backends"].items()))
    kind = TIER_POLICIES[int(rng.integers(len(TIER_POLICIES)))]
    crowded = bool(rng.random() < 0.5)
    needed = {"fast_share": ("fast",), "background_slow": ("standard", "slow"), "interactive_fast": ("fast",)}
    names = [t["name"] for t in backend["tiers"]]
    backend["tiers"] += [_tier(n, rng, crowded) for n in needed[kind] if n not in names]
    if crowded:
        backend["replicas"] = 1
        backend["background_streams_per_replica"] = 0
        for tier in backend["tiers"]:
            tier["batch_cap"] = int(rng.integers(1, 5))
        backend["typical_batch"] = 1  # the serving command's load (no engine reads it), within the caps
    names = [t["name"] for t in backend["tiers"]]
    policy: dict[str, Any] = {"kind": kind, "backend": name if rng.random() < 0.5 else None}
    if kind == "background_slow":
        policy["interactive_tier"] = str(rng.choice(names)) if rng.random() < 0.5 else "standard"
        policy["background_tier"] = str(rng.choice(names)) if rng.random() < 0.5 else "slow"
    else:
        policy["fast_tier"] = str(rng.choice(names)) if rng.random() < 0.3 else "fast"
        policy["standard_tier"] = str(rng.choice(names)) if rng.random() < 0.5 else None
        if kind == "fast_share":
            policy["share"] = float(rng.choice([0.0, 1.0])) if rng.random() < 0.2 else float(rng.uniform())
    data["policy"] = policy
    try:
        tiered = Scenario.model_validate(data)
    except (ValidationError, ValueError):
        return scenario, []
    drawn = [f"policy.{k}" for k, v in policy.items() if k != "kind" and v is not None]
    return tiered, ["policy.kind", *drawn]


def with_idle_backends(scenario: Scenario, rng: np.random.Generator) -> Scenario:
    """``scenario`` with one to three preset backends added after its own (the policy's route kept):
    the core runs the routed one and reports the others idle, as the Mesa model's idle pools are."""
    data = scenario.model_dump(mode="python")
    others = [p for p in sorted(BACKEND_PRESETS) if p not in data["backends"]]
    for name in rng.choice(others, size=int(rng.integers(1, 4)), replace=False):
        data["backends"][str(name)] = backend_preset(str(name)).model_dump(mode="python")
    try:
        return Scenario.model_validate(data)
    except (ValidationError, ValueError):  # e.g. a policy naming no backend: several need a name
        return scenario


def _mesa_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workflow, "core_module", lambda: None)


def _outcome(run: Callable[[], Any]) -> tuple[Any, str | None]:
    try:
        return run(), None
    except (ValueError, RuntimeError) as exc:  # a scenario neither engine can run says so alike
        return None, f"{type(exc).__name__}: {exc}"


def assert_same_results(core: RunResult, mesa: RunResult) -> None:
    for table in TABLES:
        assert_frame_equal(getattr(core, table), getattr(mesa, table), check_exact=True, obj=table)
    assert core.horizon_s == mesa.horizon_s


def _hex(summary: dict[str, float]) -> dict[str, str]:
    return {k: float(v).hex() for k, v in summary.items()}


def compare_engines(scenario: Scenario, seed: int, monkeypatch: pytest.MonkeyPatch) -> RunResult | None:
    """Run ``scenario`` on both engines (tables and summary-only) and assert they agree bit for bit;
    the Mesa model's result (``None`` where neither could run it)."""
    assert not_covered(scenario) is None, not_covered(scenario)
    with monkeypatch.context() as patch:
        core_result, core_error = _outcome(lambda: simulate(scenario, seed))
        core_summary, _ = _outcome(lambda: simulate_summary(scenario, seed))
        _mesa_only(patch)
        mesa_result, mesa_error = _outcome(lambda: simulate(scenario, seed))
        mesa_summary, _ = _outcome(lambda: simulate_summary(scenario, seed))
    assert core_error == mesa_error
    if mesa_result is None:
        return None
    assert core_result.engine == TYPED_CORE and mesa_result.engine != TYPED_CORE
    assert_same_results(core_result, mesa_result)
    expected = _hex(mesa_summary)
    assert _hex(core_summary) == expected
    assert _hex(core_result.summary()) == expected == _hex(mesa_result.summary())
    return mesa_result


def test_the_round_robin_draws_every_field_the_core_reads() -> None:
    """Over the normal run's scenarios every field of CORE_READS (but those set apart) is changed at
    least once: a field added to CORE_READS is drawn without touching this test."""
    changed: set[str] = set()
    for index in range(NORMAL):
        scenario, paths = random_scenario(index)
        assert not_covered(scenario) is None
        changed.update(paths)
    assert set(ROUND_ROBIN) - changed == set()


def test_the_tier_policies_are_drawn_with_their_fields() -> None:
    """Over the normal run's scenarios each tier policy is drawn, crowded and not, with every one of its
    fields, and the policy fields of CORE_READS are all drawn by them."""
    kinds: dict[str, int] = {}
    fields: set[str] = set()
    crowded = 0
    for index in range(NORMAL):
        scenario, paths = random_scenario(index)
        assert not_covered(scenario) is None
        if scenario.policy.kind in TIER_POLICIES:
            kinds[scenario.policy.kind] = kinds.get(scenario.policy.kind, 0) + 1
            fields.update(paths)
            backend = scenario.backends[next(iter(scenario.backends))]
            crowded += backend.replicas == 1 and max(t.batch_cap for t in backend.tiers) <= 4
    assert set(kinds) == set(TIER_POLICIES) and min(kinds.values()) >= 3, kinds
    assert crowded >= 3
    assert fields >= TIER_POLICY_FIELDS
    assert {p for p in CORE_READS if p.startswith("policy.")} <= fields | set(ROUND_ROBIN)


@needs_core
@pytest.mark.parametrize("index", range(NORMAL))
def test_random_scenarios_agree_bit_for_bit(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario, _ = random_scenario(index)
    compare_engines(scenario, index, monkeypatch)


@needs_core
@pytest.mark.slow
@pytest.mark.parametrize("index", range(NORMAL, NORMAL + SLOW))
def test_many_more_random_scenarios_agree_bit_for_bit(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario, _ = random_scenario(index)
    compare_engines(scenario, index, monkeypatch)


@functools.cache
def _branch_base() -> Scenario:
    return Scenario.from_toml(HEADLINE).with_overrides({"developers": 4, "horizon_s": 1.0 * DAY_S})


def branch_scenario(overrides: dict[str, Any]) -> Scenario:
    """The rule scenario of ``overrides`` (``"manual": True``: under the manual policy)."""
    changes = dict(overrides)
    base = _branch_base().with_backend("manual") if changes.pop("manual", False) else _branch_base()
    return base.with_overrides(changes)


def _repairs_ran_out(limit: int) -> Callable[[RunResult], bool]:
    def reached(result: RunResult) -> bool:
        tasks = result.tasks
        out = tasks[(tasks["attempts"] == limit + 1) & (tasks["fixed_by"] == "hand")]
        return len(out) > 0

    return reached


def _stretches(result: RunResult) -> pd.DataFrame:
    assert result.stretches is not None
    return result.stretches


def _has(column: str, value: Any) -> Callable[[RunResult], bool]:
    return lambda result: bool((result.tasks[column] == value).any())


CAUGHT_AND_REPAIRED = {
    "developer.review.detect_prob": 1.0,
    "developer.fixing.hand_fix_prob": 0.0,
    "backends.gpu-batched.quality.failure_multiplier": 3.0,
}

BRANCHES: dict[str, tuple[dict[str, Any], Callable[[RunResult], bool]]] = {
    # max_repair_sessions reached: the last caught mistake is fixed by hand
    "repairs-exhausted-at-0": (
        {**CAUGHT_AND_REPAIRED, "developer.fixing.max_repair_sessions": 0},
        _repairs_ran_out(0),
    ),
    "repairs-exhausted-at-1": (
        {**CAUGHT_AND_REPAIRED, "developer.fixing.max_repair_sessions": 1},
        _repairs_ran_out(1),
    ),
    "repairs-exhausted-at-2": (
        {**CAUGHT_AND_REPAIRED, "developer.fixing.max_repair_sessions": 2},
        _repairs_ran_out(2),
    ),
    "repairs-exhausted-at-3": (
        {**CAUGHT_AND_REPAIRED, "developer.fixing.max_repair_sessions": 3},
        _repairs_ran_out(3),
    ),
    "fixed-by-repair": (CAUGHT_AND_REPAIRED, _has("fixed_by", "repair")),
    "redo-by-hand": (
        {**CAUGHT_AND_REPAIRED, "developer.fixing.max_repair_sessions": 0, "developer.fixing.redo_prob": 1.0},
        _has("fixed_by", "hand"),
    ),
    "escaped-and-reworked": (
        {
            "developer.review.detect_prob": 0.0,
            "developer.fixing.escape_delay_s": 600.0,
            "backends.gpu-batched.quality.failure_multiplier": 2.0,
        },
        _has("outcome", "reworked"),
    ),
    "rejected-check-ins": (
        {"developer.reject_prob": 0.5},
        lambda r: bool((r.tasks["outputs_rejected"] > r.tasks["wrong_attempts"]).any()),
    ),
    "fixed-stretches": (
        {"developer.checkin_random": False, "developer.checkin_every_turns": 3},
        lambda r: len(_stretches(r)) > 0,
    ),
    "fixed-stretches-every-turn": (
        {"developer.checkin_random": False, "developer.checkin_every_turns": 1},
        lambda r: len(_stretches(r)) > 0,
    ),
    "compaction": (
        {"task_mix.compact_at_fraction": 0.05, "task_mix.compact_to_tokens": 2000},
        lambda r: bool((r.requests["input_tokens"].diff() < 0).any()),
    ),
    "three-sessions": (
        {"developer.attention.parallel_sessions_probs": [0.0, 0.0, 1.0]},
        lambda r: int(_stretches(r).groupby("developer")["task"].nunique().max()) >= 3,
    ),
    "queueing": (
        {
            "developers": 20,
            "horizon_s": 0.2 * DAY_S,
            "backends.gpu-batched.replicas": 1,
            "policy.tier": "fast",
        },
        lambda r: float(r.requests["queue_wait_s"].max()) > 0.0,
    ),
    "cache-expiry": (
        {"task_mix.cache_ttl_s": 5.0},
        lambda r: bool((r.requests["cached_tokens"] < r.requests["input_tokens"]).any()),
    ),
    "a-transcript-per-stretch": (
        {"developer.stretches_per_transcript": 1.0},
        lambda r: int(_stretches(r)["transcript"].max()) >= 2,
    ),
    "geometric-stretches": (
        {"developer.stretch_sigma": 0.0, "developer.checkin_random": True},
        lambda r: len(_stretches(r)) > 0,
    ),
    "no-resumption-cost": (
        {
            "developer.attention.resumption_max_s": 0.0,
            "developer.attention.resumption_short_s": 0.0,
            "developer.attention.other_work_resumption_max_s": 0.0,
        },
        lambda r: (
            len(_stretches(r)) > 0
            and float(r.ledger.query("category == 'switching'")["seconds"].sum()) == 0.0
        ),
    ),
    "hybrid-hand-work": (
        {"developer.delegated_fraction": 0.5},
        lambda r: bool((r.tasks["manual_s"] > 0.0).any()) and len(_stretches(r)) > 0,
    ),
    "hybrid-interrupted-by-sessions": (  # check-ins and reviews of other sessions pause the hand work
        {
            "developer.delegated_fraction": 0.3,
            "developer.attention.parallel_sessions_probs": [0.0, 0.5, 0.5],
            "developer.fixing.escape_delay_s": 600.0,
            "developer.review.detect_prob": 0.2,
        },
        lambda r: bool((r.tasks["manual_s"] > 0.0).any() and (r.tasks["outcome"] == "reworked").any()),
    ),
    "hybrid-hand-part-after-acceptance": (  # the kept part finished by hand once the agent's is accepted
        {"developer.delegated_fraction": 0.9, "developer.checkin_every_turns": 1},
        lambda r: bool((r.tasks["manual_s"] > 0.0).any()),
    ),
    "manual-policy": (
        {"manual": True},
        lambda r: len(r.requests) == 0 and bool((r.tasks["manual_s"] > 0.0).any()),
    ),
    "manual-escapes-reworked": (
        {"manual": True, "developer.manual.escape_prob": 0.6, "developer.fixing.escape_delay_s": 600.0},
        _has("outcome", "reworked"),
    ),
    "away-episode-ended-by-a-notice": (  # a session's need ends some away episodes (AttentionRule.notices)
        {
            "developer.attention.notice_prob": 0.5,
            "developer.attention.away_s": {"median": 600.0, "sigma": 0.5},
            "developer.attention.patience_s": {"median": 5.0, "sigma": 0.5},
            "developer.attention.other_work_prob": 0.0,  # breaks: leaving needs no round trip to pay
        },
        # without notices half the responses take over 10 min (0.50 at seed 7), with them 0.18
        lambda r: bool(((_stretches(r)["back_s"] - _stretches(r)["need_s"]) < 600.0).mean() > 0.7),
    ),
    "noticed-return-pays-the-short-lag": (  # Attention.cued_resumption: other work, so time away counts
        {
            "developer.attention.notice_prob": 0.5,
            "developer.attention.cued_resumption": True,
            "developer.attention.away_s": {"median": 600.0, "sigma": 0.5},
            "developer.attention.patience_s": {"median": 5.0, "sigma": 0.5},
            "developer.attention.other_work_prob": 1.0,
            "developer.attention.resumption_tau_s": 600.0,
        },
        lambda r: r.summary()["share_switching"] > 0.0 and r.summary()["share_other_work"] > 0.0,
    ),
    "no-away-episodes": (  # away until something needs them (AttentionRule.away_episode_s: inf)
        {"developer.attention.away_s": None},
        lambda r: len(_stretches(r)) > 0,
    ),
    "fast-share-both-tiers-queue": (  # priority levels, the fast tier's cap and its reserved replica
        {
            "developers": 24,
            "horizon_s": 0.2 * DAY_S,
            "backends.gpu-batched.replicas": 1,
            "backends.gpu-batched.background_streams_per_replica": 0,
            "policy": {"kind": "fast_share", "share": 0.5},
        },
        lambda r: (
            bool((r.requests.groupby("tier")["queue_wait_s"].max() > 0.0).all())
            and set(r.requests["tier"]) == {"fast", "standard"}
        ),
    ),
    "background-slow-switches-tiers": (  # a turn's tier follows the developer's attention
        {
            "backends.gpu-batched.tiers": [
                {"name": "standard", "priority": 0, "batch_cap": 64},
                {"name": "slow", "priority": -1, "batch_cap": 128, "price_multiplier": 0.5},
            ],
            "developer.attention.parallel_sessions_probs": [0.0, 0.5, 0.5],
            "policy": {"kind": "background_slow"},
        },
        lambda r: bool(r.tasks["tier"].isin(["standard+slow", "slow+standard"]).any()),
    ),
    "interactive-fast-switches-tiers": (
        {
            "developer.attention.parallel_sessions_probs": [0.0, 0.5, 0.5],
            "policy": {"kind": "interactive_fast"},
        },
        lambda r: bool(r.tasks["tier"].isin(["standard+fast", "fast+standard"]).any()),
    ),
    "no-breaks-fixed-resumption": (
        {"developer.attention.other_work_prob": 0.0, "developer.attention.resumption_random": False},
        lambda r: float(r.ledger.query("category == 'switching'")["seconds"].sum()) > 0.0,
    ),
}


@needs_core
@pytest.mark.parametrize("name", sorted(BRANCHES))
def test_each_mirrored_rule_is_reached_and_agrees(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    overrides, reached = BRANCHES[name]
    mesa = compare_engines(branch_scenario(overrides), 7, monkeypatch)
    assert mesa is not None and reached(mesa), f"{name}: the run never reaches the rule it is for"


def test_the_branch_scenarios_are_covered_by_the_core() -> None:
    for overrides, _ in BRANCHES.values():
        assert not_covered(branch_scenario(overrides)) is None


def test_round_robin_scenarios_are_valid_and_small() -> None:
    for index in range(5):
        scenario, paths = random_scenario(index)
        assert 1 <= scenario.developers <= 6 and scenario.horizon_s <= 0.75 * DAY_S
        assert len(paths) <= PER_SCENARIO


@needs_core
def test_a_request_no_replica_can_hold_is_refused_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """Session._start_turn's refusal (a request larger than a replica's KV room): the same error, word
    for word, on both engines."""
    scenario = _branch_base().with_overrides(
        {"developers": 1, "horizon_s": 3600.0, "task_mix.output_tokens": {"median": 5e7, "sigma": 0.0}}
    )
    with monkeypatch.context() as patch:
        _, core_error = _outcome(lambda: simulate(scenario, 1))
        _mesa_only(patch)
        _, mesa_error = _outcome(lambda: simulate(scenario, 1))
    assert core_error is not None and "could never be admitted" in core_error
    assert core_error == mesa_error
