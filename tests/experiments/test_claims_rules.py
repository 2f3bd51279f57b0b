"""The claims study's rules, each on a case whose answer is known: one verdict vocabulary and its
combination, the tie rule, the stability filter in a verdict, "not identified", the quick marking and
its separate files, claim 1 at exactly its stated point, claim 5's per-hop cost sampled, and every
claim on the headline scenario or saying why not."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from speedtrap.analysis.claim_verdicts import (
    ARM,
    DISTANCE,
    NOT_IDENTIFIED,
    SAMPLE,
    VERDICTS,
    combine,
    distance_from_stated,
    in_region,
    judge_claim,
)
from speedtrap.cli import app
from speedtrap.config.claim import ClaimSpec
from speedtrap.experiments.claim_point import decode_rate_tok_s, scenario_difference
from speedtrap.experiments.claim_report import QUICK_MARK, format_result
from speedtrap.experiments.claims import claim_experiment, claim_names, load_claim

RANGES = {"developer.review.detect_prob": (0.0, 1.0), "developer.attention.patience_s.median": (10.0, 100.0)}


def claim(holds: str = "below", *, identified: bool = True, resolution: float = 0.0) -> ClaimSpec:
    return ClaimSpec.model_validate(
        {
            "name": "synthetic",
            "statement": "the arm completes fewer tasks",
            "scenario": {},
            "compare": {
                "path": "backend",
                "values": ["gpu-batched", "wafer-distilled"],
                "labels": ["b", "w"],
            },
            "tests": [
                {
                    "outcome": "tasks_per_dev_day",
                    "statistic": "difference",
                    "holds": holds,
                    "bounds": [0.0],
                    "resolution": resolution,
                }
            ],
            "uncertainties": [
                {
                    "path": "developer.review.detect_prob",
                    "range": [0.0, 1.0],
                    "label": "review catches",
                    "identified": identified,
                    "identify": "a study of review",
                },
                {"path": "developer.attention.patience_s.median", "range": [10.0, 100.0]},
            ],
        }
    )


def runs(gap: np.ndarray | float, samples: int = 120, seeds: int = 4, noise: float = 0.0) -> pd.DataFrame:
    """Runs whose arm − baseline gap at sample s is ``gap[s]`` (s = 0: the defaults) plus seed noise."""
    rng = np.random.default_rng(3)
    x = {p: np.concatenate([[np.mean(r)], rng.uniform(*r, samples)]) for p, r in RANGES.items()}
    gaps = np.broadcast_to(np.asarray(gap, dtype=float), (samples + 1,))
    rows = []
    for s in range(samples + 1):
        for seed in range(seeds):
            base = 10.0 + rng.normal(0, 0.1)
            for arm, value in ((0, base), (1, base + gaps[s] + rng.normal(0, noise))):
                rows.append(
                    {
                        SAMPLE: s,
                        ARM: arm,
                        "seed": seed,
                        **{p: v[s] for p, v in x.items()},
                        "tasks_per_dev_day": value,
                    }
                )
    return pd.DataFrame(rows)


def test_one_vocabulary_and_one_combination_rule() -> None:
    assert VERDICTS == ("true", "false", "depends", "not identified")
    assert combine(["true", "true"]) == "true"
    assert combine(["true", "depends", NOT_IDENTIFIED]) == NOT_IDENTIFIED
    assert combine(["depends", NOT_IDENTIFIED, "false"]) == "false"
    with pytest.raises(ValueError, match="not a verdict"):
        combine(["true for low batch only"])


def test_a_tie_at_zero_is_no_effect_not_fewer() -> None:
    assert not in_region(0.0, (-math.inf, 0.0)) and in_region(-1e-9, (-math.inf, 0.0))
    exact = judge_claim(claim("below"), runs(0.0))  # every seed's gap is exactly 0
    assert exact.verdict == "false" and exact.parts[0].at_defaults == "fails"
    # within the stated resolution of the bound: no effect either
    small = judge_claim(claim("below", resolution=0.005), runs(-0.003))
    assert small.verdict == "false"
    assert judge_claim(claim("below", resolution=0.005), runs(-0.5)).verdict == "true"


def flip_gaps(samples: int = 120) -> np.ndarray:
    """Gap −1 at the defaults and wherever detect_prob < 0.6; +1 above (the same draws as runs())."""
    rng = np.random.default_rng(3)
    detect = np.concatenate([[0.5], rng.uniform(0.0, 1.0, samples)])
    return np.where(detect < 0.6, -1.0, 1.0)


def test_a_stable_flip_box_makes_it_depend_and_an_unidentified_input_not_identified() -> None:
    (part,) = judge_claim(claim("below"), runs(flip_gaps())).parts
    assert part.verdict == "depends" and part.stable
    assert part.flip is not None
    assert {b["path"] for b in part.flip["bounds"]} == {"developer.review.detect_prob"}
    assert part.decision is not None and part.decision["measure_first"][0] == "review catches"
    (part,) = judge_claim(claim("below", identified=False), runs(flip_gaps())).parts
    assert part.verdict == NOT_IDENTIFIED and part.identify == ["review catches: a study of review"]


def test_flips_at_random_depend_with_no_stable_box() -> None:
    gaps = np.where(np.random.default_rng(5).uniform(size=121) < 0.3, 1.0, -1.0)
    gaps[0] = -1.0
    (part,) = judge_claim(claim("below", identified=False), runs(gaps)).parts
    assert part.verdict == "depends" and not part.stable  # no stable box: nothing identifies a decider
    assert part.flip_words is not None and "no stable box" in part.flip_words
    assert any("no stable box" in d for d in part.depends_on)


def test_quick_marks_every_line_and_never_writes_where_the_full_study_does() -> None:
    result = judge_claim(claim("below"), runs(-1.0, samples=3))
    from dataclasses import replace

    lines = format_result(replace(result, quick=True), wall_s=1.0)
    assert lines and all(line.startswith(QUICK_MARK) for line in lines)
    assert not any(line.startswith(QUICK_MARK) for line in format_result(result))
    c5 = load_claim("c5_chaining_chips")
    full, _ = claim_experiment(c5)
    quick, _ = claim_experiment(c5, quick=True)
    assert quick.name == f"{full.name}-quick" != full.name


def test_the_quick_figure_says_quick_in_its_title() -> None:
    from dataclasses import replace

    from speedtrap.plots.claims import QUICK_TITLE, claim_figure

    spec = claim("below")
    table = runs(-1.0, samples=5)
    fig = claim_figure(replace(judge_claim(spec, table), quick=True), table[table[SAMPLE] > 0], spec)
    assert fig.get_suptitle().startswith(QUICK_TITLE)
    top = fig.axes[0]
    assert top.get_xlabel().startswith("tasks per developer-day, arm − baseline (tasks/dev-day)")


def test_claim_1_is_tested_at_exactly_6x_the_speed_and_1_2x_the_mistakes() -> None:
    c1 = load_claim("c1_bad_bargain")
    scenario = c1.scenario
    ratio = decode_rate_tok_s(scenario, "wafer-distilled") / decode_rate_tok_s(scenario, "gpu-batched")
    assert ratio == pytest.approx(6.0, rel=1e-9)
    assert scenario.backends["wafer-distilled"].quality.failure_multiplier == 1.2
    # the neighbourhood holds the point, and the distance from it is an input: 0 there, 1 at its edge
    factors = {f.path: f for f in c1.sampled}
    speed = factors["backends.wafer-distilled.decode_speedup"]
    mistakes = factors["backends.wafer-distilled.quality.failure_multiplier"]
    at = scenario.backends["wafer-distilled"].decode_speedup
    assert speed.range is not None and mistakes.range is not None
    assert speed.range[0] < at < speed.range[1] and mistakes.range[0] < 1.2 < mistakes.range[1]
    points = pd.DataFrame(
        {speed.path: [at, speed.range[1], at], mistakes.path: [1.2, 1.2, mistakes.range[0]]}
    )
    assert distance_from_stated(c1, points) == pytest.approx([0.0, 1.0, 1.0])
    assert DISTANCE not in {f.path for f in c1.sampled}


def test_claim_5_samples_the_per_hop_cost_from_its_fitted_bound() -> None:
    c5 = load_claim("c5_chaining_chips")
    (hop,) = [f for f in c5.sampled if f.path.endswith("wafer_hop_s")]
    assert hop.also == ["backends.wafer-chained.hardware.wafer_hop_s"]  # the same wafer in both arms
    assert hop.range is not None and hop.range[0] == 0.0 < hop.range[1]  # the fit's bound is inside
    assert not hop.identified and hop.identify and "serving_validation.md" in (hop.source or "")
    spec, _ = claim_experiment(c5)
    assert {"backends.wafer.hardware.wafer_hop_s", *hop.also} <= set(spec.factor_paths)


def test_every_claim_runs_the_headline_scenario_or_says_why_and_what_differs() -> None:
    for name in claim_names():
        spec = load_claim(name)
        difference = scenario_difference(spec.scenario)
        assert not difference or spec.scenario_why, name
    c1 = load_claim("c1_bad_bargain")
    assert scenario_difference(c1.scenario) == [
        "backends.wafer-distilled: added (not in the headline scenario)",
        "developer.attention.parallel_sessions_probs: [0.951, 0.048, 0.001] → None",
    ]


@pytest.mark.slow
def test_the_quick_command_marks_every_printed_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["claims", "--quick", "--only", "c5_chaining_chips", "--results-dir", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.strip() and "%|" not in line]
    assert lines and all(line.startswith(QUICK_MARK) for line in lines), lines
    assert (tmp_path / "c5_chaining_chips-quick" / "claim.json").is_file()
    assert not (tmp_path / "c5_chaining_chips").exists()


def test_a_fit_at_its_bound_that_every_sample_moves_off_is_not_identified() -> None:
    # detect_prob is 0.6 in the scenario, the lower end of its range: every sample moves off it, and
    # every sample flips (as claim 5's wafer hop, fitted at 0, does)
    spec = claim("below", identified=False)
    factors = [
        f.model_copy(update={"range": (0.6, 1.0)}) if "detect" in f.path else f for f in spec.uncertainties
    ]
    spec = spec.model_copy(update={"uncertainties": factors})
    gaps = np.full(31, 1.0)
    gaps[0] = -1.0
    (part,) = judge_claim(spec, runs(gaps, samples=30)).parts
    assert part.verdict == NOT_IDENTIFIED and part.identify == ["review catches: a study of review"]
    # the same with the input identified: it depends on the samples
    identified = [f.model_copy(update={"identified": True}) for f in spec.uncertainties]
    (part,) = judge_claim(spec.model_copy(update={"uncertainties": identified}), runs(gaps, samples=30)).parts
    assert part.verdict == "depends"


def three_arms(expected: dict[str, str] | None) -> ClaimSpec:
    data = claim().model_dump(mode="python")
    data["compare"] = {
        "path": "backend",
        "values": ["gpu-batched", "wafer-distilled", "gpu-fast"],
        "labels": ["b", "w", "f"],
    }
    data.update(combine="each", expected=expected)
    return ClaimSpec.model_validate(data)


def test_a_claim_that_states_a_verdict_per_arm_holds_when_each_arm_has_it() -> None:
    """Claim 2's form, "fast mode is X, not Y": arm w holds (−1 task everywhere), arm f does not (+1):
    stated as w true and f false the claim is true, stated the other way false, unstated depends."""
    base = runs(-1.0, samples=30)
    other = base[base[ARM] == 1].assign(**{ARM: 2})
    other["tasks_per_dev_day"] = base[base[ARM] == 0]["tasks_per_dev_day"].to_numpy() + 1.0
    table = pd.concat([base, other], ignore_index=True)
    stated = judge_claim(three_arms({"w": "true", "f": "false"}), table)
    assert stated.arm_verdicts == {"w": "true", "f": "false"} and stated.verdict == "true"
    assert judge_claim(three_arms({"w": "false", "f": "false"}), table).verdict == "false"
    assert judge_claim(three_arms(None), table).verdict == "depends"
    with pytest.raises(ValueError, match="one stated verdict per judged arm"):
        three_arms({"w": "true"})
    with pytest.raises(ValueError, match="combine = 'each'"):
        ClaimSpec.model_validate({**claim().model_dump(mode="python"), "expected": {"w": "true"}})
