"""The claims study's machinery: `speedtrap claims --quick` runs every claim at small size under
members of the stored calibrated ensemble, and its verdicts are recomputed here from the stored runs
(none is typed in); the verdict rule on synthetic runs with a known flip region and with members that
disagree; the pairing of samples with members; the scenario's own set with --single."""

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
from speedtrap.cli.claims import QUICK_MEMBERS
from speedtrap.config.claim import ClaimSpec
from speedtrap.experiments.claims import (
    claim_names,
    load_claim,
    read_ensemble,
    run_claim,
    select_members,
    stored_runs,
)
from speedtrap.experiments.ensemble import default_ensemble_path

runner = CliRunner()


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    results = tmp_path_factory.mktemp("claims")
    args = [
        "claims",
        "--quick",
        "--json",
        "--results-dir",
        str(results),
        "--figures",
        str(results / "figures"),
    ]
    result = runner.invoke(app, args)
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
        assert (results / f"{claim['name']}-quick-ensemble").is_dir()
        assert (results / "figures" / f"{claim['name']}-quick.png").stat().st_size > 10_000
        assert claim["command"] == f"speedtrap claims --quick --only {claim['name']}"
        for part in claim["parts"]:
            assert part["verdict"] in VERDICTS
            # the defaults are members of the stored calibrated ensemble, not the file's own set
            assert part["behavioural"]["available"] and part["behavioural"]["members"] == QUICK_MEMBERS
            assert part["scenario_file"] is None
            assert 1 <= part["defaults"]["n"] <= 2 * QUICK_MEMBERS  # members × 2 quick seeds, NaNs left out


def seed_interval(values: np.ndarray, members: np.ndarray) -> tuple[float, float, float]:
    """The ensemble's mean (of the members' means) and its seed-noise 95% interval, computed directly:
    μ ± t(N − K)·√(MSW·Σ(1/n_k)/K²) with MSW the pooled variance within members."""
    keep = ~np.isnan(values)
    x, m = values[keep], members[keep]
    groups = [x[m == k] for k in np.unique(m)]
    k, n = len(groups), x.size
    mean = float(np.mean([g.mean() for g in groups]))
    if n - k < 1:
        # one value per member (the others NaN): no within-member variance and no seed interval; the
        # stated rule (claim_verdicts.at_defaults) then judges where the mean lies
        return mean, mean, mean
    msw = sum(((g - g.mean()) ** 2).sum() for g in groups) / (n - k)
    half = stats.t.ppf(0.975, n - k) * math.sqrt(msw * sum(1 / g.size for g in groups) / k**2)
    return mean, mean - half, mean + half


def paired_values(
    runs: pd.DataFrame, outcome: str, statistic: str, arm: int
) -> tuple[np.ndarray, np.ndarray]:
    """The statistic per member and seed at the defaults, computed directly from the stored runs, and
    each value's member."""
    at = runs.set_index([ARM, SAMPLE, "seed"])[outcome]
    mine = at.loc[arm]
    members = mine.index.get_level_values(SAMPLE).to_numpy()
    if statistic == "level":
        return mine.to_numpy(dtype=float), members
    base = at.loc[0].loc[mine.index]
    values = mine - base if statistic == "difference" else mine / base
    return values.to_numpy(dtype=float), members


def status(low: float, high: float, region: tuple[float, float]) -> str:
    """Where an interval lies against the open region (the tie rule: a bound itself is outside)."""
    if region[0] < low and high < region[1]:
        return "holds"
    if high <= region[0] or low >= region[1]:
        return "fails"
    return "unresolved"


def test_the_quick_verdicts_are_recomputed_from_the_stored_runs(quick_run: tuple[dict, Path]) -> None:
    payload, results = quick_run
    members = select_members(read_ensemble(default_ensemble_path()), QUICK_MEMBERS)
    for printed in payload["claims"]:
        claim = load_claim(printed["name"])
        runs, defaults = stored_runs(claim, quick=True, results_dir=results, ensemble=members)  # nothing runs
        assert defaults is not None and sorted(defaults[SAMPLE].unique()) == list(range(QUICK_MEMBERS))
        assert 0 not in set(runs[SAMPLE])  # under an ensemble the samples start at 1
        again = judge_claim(claim, runs, defaults)
        assert again.verdict == printed["verdict"]
        assert again.arm_verdicts == printed["arm_verdicts"]
        assert [p.verdict for p in again.parts] == [p["verdict"] for p in printed["parts"]]
        # the defaults' status, from the raw runs by a second, direct computation
        tests = {t.label: t for t in claim.tests}
        for part in printed["parts"]:
            test = tests[part["test"]]
            arm = claim.compare.labels.index(part["arm"])
            values, member = paired_values(defaults, test.outcome, test.statistic, arm)
            if np.isnan(values).all():
                continue
            mean, low, high = seed_interval(values, member)
            assert part["defaults"]["mean"] == pytest.approx(mean, rel=1e-9, abs=1e-12)
            assert part["at_defaults"] == status(low, high, test.region())
            b = part["behavioural"]
            assert part["across_members"] == status(b["low"], b["high"], test.region())
            if part["verdict"] == "true":
                assert part["at_defaults"] == part["across_members"] == "holds" and not part["depends_on"]
            elif part["verdict"] == "false":
                assert part["at_defaults"] == part["across_members"] == "fails" and not part["depends_on"]
            else:
                assert part["depends_on"]


def test_a_rerun_resumes_from_the_store(quick_run: tuple[dict, Path]) -> None:
    _, results = quick_run
    claim = load_claim("c7_fast_primitive")
    before = sorted(str(p) for p in results.glob("c7_fast_primitive-quick*/**/*.parquet"))
    members = select_members(read_ensemble(default_ensemble_path()), QUICK_MEMBERS)
    rerun = run_claim(claim, quick=True, results_dir=results, ensemble=members)
    after = sorted(str(p) for p in results.glob("c7_fast_primitive-quick*/**/*.parquet"))
    assert len(before) >= 2
    assert before == after  # no new part file: every run came from the store
    printed = json.loads((results / "c7_fast_primitive-quick" / "claim.json").read_text())
    assert rerun.result.verdict == printed["verdict"]
    # the wall time of every invocation adds up: the first run's is kept when the rerun judges again
    first = next(c for c in quick_run[0]["claims"] if c["name"] == "c7_fast_primitive")
    assert printed["wall_s"] == pytest.approx(rerun.wall_s)
    assert printed["wall_s_total"] == pytest.approx(first["wall_s"] + rerun.wall_s, rel=1e-9)


def test_an_ensemble_file_gives_the_defaults_and_the_samples_are_paired_with_its_members(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ensemble.csv"
    metr_only = "backends.sonnet-2025.quality.horizon_min"
    hand_fix = "developer.fixing.hand_fix_prob"  # not sampled by claim 7: each sample takes its member's
    pd.DataFrame(
        {
            "member": [0, 1],
            hand_fix: [0.2, 0.4],
            "developer.review.detect_prob": [0.5, 0.7],
            metr_only: [50.0, 70.0],
        }
    ).to_csv(path, index=False)
    claim = load_claim("c7_fast_primitive")
    assert hand_fix not in {f.path for f in claim.sampled}
    done = run_claim(claim, quick=True, results_dir=tmp_path / "results", ensemble=read_ensemble(path))
    for part in done.result.parts:  # two members: too few for a behavioural interval, and said so
        assert not part.behavioural["available"] and part.behavioural["members"] == 2
        assert "too few members (2)" in part.behavioural["note"]
    assert any(metr_only in note and "metr scenarios only" in note for note in done.result.notes)
    by_sample = done.runs.drop_duplicates("sample").set_index("sample")[hand_fix]
    assert list(by_sample.index) == list(range(1, len(by_sample) + 1))
    assert [by_sample[s] for s in by_sample.index] == [[0.2, 0.4][(s - 1) % 2] for s in by_sample.index]
    # read as every command reads an ensemble: a path outside the parameters table is refused
    pd.DataFrame({"member": [0], "not.a.field": [1.0]}).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match="not a parameter of the ranges table"):
        read_ensemble(tmp_path / "bad.csv")


def test_single_runs_the_scenarios_own_set_with_no_behavioural_interval(tmp_path: Path) -> None:
    args = ["claims", "--quick", "--single", "--only", "c5_chaining_chips", "--json"]
    result = runner.invoke(app, [*args, "--results-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    (claim,) = json.loads(result.output)["claims"]
    for part in claim["parts"]:
        assert part["behavioural"] == {"available": False, "note": NO_ENSEMBLE}
        assert part["across_members"] is None
        assert part["scenario_file"] == part["defaults"]
    runs, defaults = stored_runs(load_claim("c5_chaining_chips"), quick=True, results_dir=tmp_path)
    assert defaults is None and 0 in set(runs[SAMPLE])
    result = runner.invoke(app, ["claims", "--quick", "--single", "--members", "3"])
    assert result.exit_code == 2 and "--single runs the scenario's own parameter set" in result.output


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


def synthetic_members(gaps: list[float], seeds: int = 5) -> pd.DataFrame:
    """The defaults' runs under members whose gap is ``gaps[k]`` (± small seed noise)."""
    rng = np.random.default_rng(2)
    rows = []
    for k, gap in enumerate(gaps):
        for seed in range(seeds):
            base = 10.0 + rng.normal(0, 0.1)
            rows += [
                {SAMPLE: k, ARM: 0, "seed": seed, "tasks_per_dev_day": base},
                {SAMPLE: k, ARM: 1, "seed": seed, "tasks_per_dev_day": base + gap + rng.normal(0, 0.05)},
            ]
    return pd.DataFrame(rows)


def test_members_that_disagree_make_it_depend_on_the_calibrated_behaviour() -> None:
    runs = synthetic_runs(None)
    agree = judge_claim(synthetic_claim("below"), runs, synthetic_members([-1.0, -1.1, -0.9, -1.05, -0.95]))
    assert agree.verdict == "true" and agree.parts[0].across_members == "holds"
    # the mean gap is below 0 by far more than the seeds' noise, but one member in five sees a gain
    mixed = synthetic_members([-1.0, -1.2, -0.8, -1.1, +0.6])
    (part,) = judge_claim(synthetic_claim("below"), runs, mixed).parts
    assert part.at_defaults == "holds" and part.across_members == "unresolved"
    assert part.verdict == "depends" and part.depends_on == [
        "the calibrated behaviour (the members disagree)"
    ]
    assert part.defaults.mean == pytest.approx(np.mean([-1.0, -1.2, -0.8, -1.1, 0.6]), abs=0.05)
    # members whose means agree exactly, seeds too noisy to settle the mean: it depends on seed noise
    # alone (the behavioural interval, the members' mean's own noise, lies below 0)
    noisy = pd.DataFrame(
        [
            {SAMPLE: k, ARM: arm, "seed": j, "tasks_per_dev_day": 10.0 + arm * (-0.1 + noise)}
            for k in range(5)
            for j, noise in enumerate([1.0, -1.0, 0.5, -0.5])
            for arm in (0, 1)
        ]
    )
    (part,) = judge_claim(synthetic_claim("below"), runs, noisy).parts
    assert (part.at_defaults, part.across_members) == ("unresolved", "holds")
    assert part.verdict == "depends" and part.depends_on[0] == "seed noise at the defaults"
    assert "the calibrated behaviour (the members disagree)" not in part.depends_on


def test_a_small_flip_region_does_not_count() -> None:
    # flips only above 0.99: about 2 of 200 samples, under the coverage/density/size rule's reach
    result = judge_claim(synthetic_claim("below"), synthetic_runs(0.995))
    assert result.verdict == "true"


def test_bad_input_is_one_line() -> None:
    result = runner.invoke(app, ["claims", "--quick", "--executor", "nowhere"])
    assert result.exit_code == 2 and "unknown executor 'nowhere'" in result.output
    result = runner.invoke(app, ["claims", "--quick", "--only", "c9_nothing"])
    assert result.exit_code == 2 and "unknown claim 'c9_nothing'" in result.output


def test_the_claim_figure_draws_every_part_and_every_sample_against_the_deciding_input() -> None:
    from matplotlib.collections import PathCollection

    from speedtrap.plots.claims import HOLDS_COLOUR, claim_figure

    claim = synthetic_claim("below")
    runs = synthetic_runs(0.7)
    result = judge_claim(claim, runs, synthetic_members([-1.0, -1.1, -0.9, -1.05, -0.95]))
    fig = claim_figure(result, runs[runs[SAMPLE] > 0], claim)
    top, bottom = fig.axes[:2]
    assert [t.get_text() for t in top.get_yticklabels()] == ["w"]
    # the seed interval (thick) and the behavioural interval (thin) of the one part, at its numbers
    (part,) = result.parts
    spans = sorted(tuple(line.get_xdata()) for line in top.get_lines() if len(line.get_xdata()) == 2)
    assert (part.defaults.ci_low, part.defaults.ci_high) in spans
    assert (part.behavioural["low"], part.behavioural["high"]) in spans
    # every sample, against PRIM's input, coloured by whether the test holds there
    (points,) = [c for c in bottom.collections if isinstance(c, PathCollection)]
    assert len(points.get_offsets()) == 200
    assert bottom.get_xlabel() == "review catches"
    colours = points.get_facecolors()
    holds = runs[(runs[SAMPLE] > 0)].drop_duplicates(SAMPLE)["developer.review.detect_prob"].to_numpy() <= 0.7
    import matplotlib.colors as mcolors

    green = np.array(mcolors.to_rgba(HOLDS_COLOUR))[:3]
    assert ((np.abs(colours[:, :3] - green).sum(axis=1) < 1e-6) == holds).mean() > 0.95
