"""The claims study's machinery: `speedtrap claims --quick` runs every claim at small size, and its
verdicts are recomputed here from the stored runs (none is typed in); the verdict rule on synthetic
runs with a known flip region; the behavioural-uncertainty hook with a small ensemble."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from speedtrap.analysis.claim_verdicts import ARM, NO_ENSEMBLE, SAMPLE, VERDICTS, judge_claim
from speedtrap.cli import app
from speedtrap.config.claim import ClaimSpec
from speedtrap.experiments.claims import (
    claim_names,
    load_claim,
    read_ensemble,
    run_claim,
    select_members,
    stored_runs,
)

runner = CliRunner()


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    results = tmp_path_factory.mktemp("claims")
    result = runner.invoke(app, ["claims", "--quick", "--json", "--results-dir", str(results)])
    assert result.exit_code == 0, result.output
    return json.loads(result.output), results


def test_every_claim_runs_quick_and_gets_a_verdict(quick_run: tuple[dict, Path]) -> None:
    payload, results = quick_run
    names = [c["name"] for c in payload["claims"]]
    assert names == claim_names() and len(names) == 7
    assert payload["quick"] is True and payload["wall_s"] > 0
    for claim in payload["claims"]:
        assert claim["verdict"] in VERDICTS
        assert (results / f"{claim['name']}-quick" / "claim.json").is_file()
        assert claim["command"] == f"speedtrap claims --quick --only {claim['name']}"
        for part in claim["parts"]:
            assert part["verdict"] in VERDICTS
            assert part["behavioural"] == {"available": False, "note": NO_ENSEMBLE}
            assert part["defaults"]["n"] >= 1


def paired_values(runs: pd.DataFrame, outcome: str, statistic: str, arm: int) -> np.ndarray:
    """The statistic per seed at the defaults, computed directly from the stored runs."""
    at = runs[runs[SAMPLE] == 0].set_index([ARM, "seed"])[outcome]
    mine = at.loc[arm]
    if statistic == "level":
        return mine.to_numpy(dtype=float)
    base = at.loc[0].loc[mine.index]
    return (
        (mine - base).to_numpy(dtype=float)
        if statistic == "difference"
        else (mine / base).to_numpy(dtype=float)
    )


def status(values: np.ndarray, region: tuple[float, float]) -> str:
    x = values[~np.isnan(values)]
    if x.size == 0:
        return "unresolved"
    if x.size == 1:
        low = high = float(x[0])
    else:
        half = stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size)
        low, high = x.mean() - half, x.mean() + half
    if region[0] <= low and high <= region[1]:
        return "holds"
    if high < region[0] or low > region[1]:
        return "fails"
    return "unresolved"


def test_the_quick_verdicts_are_recomputed_from_the_stored_runs(quick_run: tuple[dict, Path]) -> None:
    payload, results = quick_run
    for printed in payload["claims"]:
        claim = load_claim(printed["name"])
        runs = stored_runs(claim, quick=True, results_dir=results)  # nothing runs: all stored
        again = judge_claim(claim, runs)
        assert again.verdict == printed["verdict"]
        assert again.arm_verdicts == printed["arm_verdicts"]
        assert [p.verdict for p in again.parts] == [p["verdict"] for p in printed["parts"]]
        # the defaults' status, from the raw runs by a second, direct computation
        tests = {t.label: t for t in claim.tests}
        for part in printed["parts"]:
            test = tests[part["test"]]
            arm = claim.compare.labels.index(part["arm"])
            values = paired_values(runs, test.outcome, test.statistic, arm)
            assert part["at_defaults"] == status(values, test.region())
            if not np.isnan(values).all():
                assert part["defaults"]["mean"] == pytest.approx(np.nanmean(values), rel=1e-9, abs=1e-12)
            if part["verdict"] == "true":
                assert part["at_defaults"] == "holds"
            elif part["verdict"] == "false":
                assert part["at_defaults"] == "fails"


def test_a_rerun_resumes_from_the_store(quick_run: tuple[dict, Path]) -> None:
    _, results = quick_run
    claim = load_claim("c7_fast_primitive")
    before = sorted(p.name for p in (results / "c7_fast_primitive-quick").rglob("*.parquet"))
    rerun = run_claim(claim, quick=True, results_dir=results)
    after = sorted(p.name for p in (results / "c7_fast_primitive-quick").rglob("*.parquet"))
    assert before == after  # no new part file: every run came from the store
    printed = json.loads((results / "c7_fast_primitive-quick" / "claim.json").read_text())
    assert rerun.result.verdict == printed["verdict"]


def test_the_behavioural_interval_comes_from_an_ensemble(tmp_path: Path) -> None:
    path = tmp_path / "ensemble.csv"
    metr_only = "backends.sonnet-2025.quality.horizon_min"
    pd.DataFrame(
        {"member": [0, 1], "developer.review.detect_prob": [0.5, 0.7], metr_only: [50.0, 70.0]}
    ).to_csv(path, index=False)
    claim = load_claim("c7_fast_primitive")
    done = run_claim(claim, quick=True, results_dir=tmp_path / "results", ensemble=read_ensemble(path))
    for part in done.result.parts:
        assert part.behavioural["available"] and part.behavioural["members"] == 2
        assert part.behavioural["low"] <= part.behavioural["high"]
    assert any(metr_only in note and "metr scenarios only" in note for note in done.result.notes)
    # read as every command reads an ensemble: a path outside the parameters table is refused
    pd.DataFrame({"member": [0], "not.a.field": [1.0]}).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match="not a parameter of the ranges table"):
        read_ensemble(tmp_path / "bad.csv")


def test_members_are_chosen_as_compare_chooses_them(tmp_path: Path) -> None:
    path = tmp_path / "ensemble.csv"
    detect = [0.46, 0.49, 0.52, 0.55, 0.58, 0.61, 0.64]
    pd.DataFrame({"member": range(7), "developer.review.detect_prob": detect}).to_csv(path, index=False)
    ensemble = read_ensemble(path)
    assert select_members(ensemble, None) is ensemble
    three = select_members(ensemble, 3)
    # evenly spaced through the file (first, middle, last), renumbered 0, 1, 2
    assert three["developer.review.detect_prob"].tolist() == [0.46, 0.55, 0.64]
    assert three["member"].tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="--members 8: the ensemble has 7 members"):
        select_members(ensemble, 8)
    result = runner.invoke(app, ["claims", "--quick", "--members", "3"])
    assert result.exit_code == 2 and "--members needs --ensemble" in result.output


# --- the verdict rule on synthetic runs -----------------------------------------------------------


def synthetic_claim(holds: str) -> ClaimSpec:
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
                {"outcome": "tasks_per_dev_day", "statistic": "difference", "holds": holds, "bounds": [0.0]}
            ],
            "uncertainties": [
                {"path": "developer.review.detect_prob", "range": [0.0, 1.0], "label": "review catches"},
                {"path": "developer.attention.patience_s.median", "range": [10.0, 100.0]},
            ],
        }
    )


def synthetic_runs(flip_above: float | None, samples: int = 200, seeds: int = 5) -> pd.DataFrame:
    """Gap −1 per seed (± noise) at the defaults and wherever detect_prob ≤ flip_above; +1 above it."""
    rng = np.random.default_rng(1)
    detect = np.concatenate([[0.6], rng.uniform(0, 1, samples)])
    patience = np.concatenate([[60.0], rng.uniform(10, 100, samples)])
    rows = []
    for s in range(samples + 1):
        gap = 1.0 if flip_above is not None and s > 0 and detect[s] > flip_above else -1.0
        for seed in range(seeds):
            base = 10.0 + rng.normal(0, 0.1)
            for arm, value in ((0, base), (1, base + gap + rng.normal(0, 0.1))):
                rows.append(
                    {
                        SAMPLE: s,
                        ARM: arm,
                        "seed": seed,
                        "developer.review.detect_prob": detect[s],
                        "developer.attention.patience_s.median": patience[s],
                        "tasks_per_dev_day": value,
                    }
                )
    return pd.DataFrame(rows)


def test_a_claim_that_holds_everywhere_is_true_and_one_that_fails_is_false() -> None:
    runs = synthetic_runs(None)
    assert judge_claim(synthetic_claim("below"), runs).verdict == "true"
    assert judge_claim(synthetic_claim("above"), runs).verdict == "false"


def test_a_flip_region_makes_it_depend_and_prim_finds_it() -> None:
    result = judge_claim(synthetic_claim("below"), synthetic_runs(0.7))
    assert result.verdict == "depends"
    (part,) = result.parts
    assert part.at_defaults == "holds" and part.flip_what == "fails"
    bounds = {b["path"]: b for b in part.flip["bounds"]}
    assert set(bounds) == {"developer.review.detect_prob"}
    assert bounds["developer.review.detect_prob"]["low"] == pytest.approx(0.7, abs=0.05)
    assert part.flip_words.startswith("fails when review catches ≥ 0.")
    assert part.agreement is not None and part.agreement >= 0.8
    assert part.holds_share == pytest.approx(0.7, abs=0.1)


def test_a_small_flip_region_does_not_count() -> None:
    # flips only above 0.99: about 2 of 200 samples, under the coverage/density/size rule's reach
    result = judge_claim(synthetic_claim("below"), synthetic_runs(0.995))
    assert result.verdict == "true"


def test_bad_input_is_one_line() -> None:
    result = runner.invoke(app, ["claims", "--quick", "--executor", "nowhere"])
    assert result.exit_code == 2 and "unknown executor 'nowhere'" in result.output
    result = runner.invoke(app, ["claims", "--quick", "--only", "c9_nothing"])
    assert result.exit_code == 2 and "unknown claim 'c9_nothing'" in result.output
