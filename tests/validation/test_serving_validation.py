"""The serving physics against the published measurements table: held out by configuration group and
compared at equal interactivity (the acceptance of the serving-physics rework)."""

import math

import numpy as np
import pytest

from speedtrap.config.catalog import hardware_preset, llm_preset
from speedtrap.config.hardware import FITTED_FIT_DATE, FITTED_ROWS
from speedtrap.validation import serving as serving_module
from speedtrap.validation.serving import (
    TARGET_MEDIAN_ABS_ERROR,
    TARGET_TTFT_MEDIAN_ABS_ERROR,
    TARGET_WORST_ABS_ERROR,
    leave_one_group_out,
    load_measurements,
    stored_fit_table,
    summarize,
    validate_serving,
)
from speedtrap.validation.serving_fit import (
    FACTOR_BOUNDS,
    STACK_FACTORS,
    STACK_SPEED_BOUNDS,
    Factors,
    factors_of_fit,
    fit_factors,
    log_errors,
    prepare_rows,
    profile_factor,
    stack_factors_of,
)
from speedtrap.validation.serving_intervals import stack_of, vendor_of
from speedtrap.validation.serving_table import group_of, row_spec


@pytest.fixture(scope="module")
def table():
    return load_measurements()


@pytest.fixture(scope="module")
def check(table):
    return validate_serving(table=table)


def test_table_covers_what_the_issue_asks(table) -> None:
    from speedtrap.validation.serving_intervals import stack_of

    assert len(table) >= 150
    assert table["id"].is_unique
    assert table["source_url"].str.startswith("https://").all()
    assert table["notes"].str.len().min() > 40  # every row says how its figures were derived
    assert table["source"].nunique() >= 8
    stacks = table.assign(stack=[stack_of(str(i)) for i in table["id"]]).groupby("stack")["group"].nunique()
    for stack in ("SGLang", "TensorRT-LLM", "vLLM", "ATOM"):  # a per-stack error rests on several groups
        assert stacks[stack] >= 3, stack
    assert stack_of("atom-dsr1-mi300x-fp8-1k1k-tp8-c128") == stack_of("ix-gptoss-mi355x-atom-1k1k") == "ATOM"
    hardware = set(table["hardware"])
    assert {"h100-sxm", "h200"} <= hardware
    assert hardware & {"b200", "gb200"} and hardware & {"mi300x", "mi325x", "mi355x"}
    kinds = table["hardware"].map(lambda name: hardware_preset(name).memory_kind)
    assert set(table.loc[kinds == "sram", "hardware"]) >= {"wse-3", "lpu"}  # two SRAM systems
    moe = table["model"].map(lambda name: llm_preset(name).is_moe)
    assert moe.any() and (~moe).any()
    assert table["model"].map(lambda name: llm_preset(name).is_mla).any()
    assert table["prefill_chips"].notna().any()  # prefill/decode disaggregation
    assert (table["expert_parallel"].fillna(0) >= 32).any()  # large expert parallelism
    assert table["group"].nunique() >= 20


def test_groups_are_model_hardware_and_serving_mode(table) -> None:
    for row in table.itertuples(index=False):
        mode = "disaggregated" if not math.isnan(row.prefill_chips) else "aggregated"
        assert row.group == group_of(row) == f"{row.model} | {row.hardware} | {mode}"


def test_stored_factors_are_the_fit_on_the_rows_they_were_fitted_to(table) -> None:
    # rows appended since the fit (the InferenceX API rows, ATOM's repository rows) leave the stored
    # factors, and so the backend presets, as they were; the fit's rows are the table's first FITTED_ROWS
    fitted = stored_fit_table(table)
    assert len(fitted) == FITTED_ROWS < len(table) and FITTED_FIT_DATE
    extractor = "scripts/serving_rows_from_inferencex.py"
    assert not fitted["notes"].str.contains(extractor, regex=False).any()
    assert not (fitted["source"] == "ATOM (ROCm/ATOM)").any()
    appended = table.iloc[FITTED_ROWS:]
    atom = appended["source"] == "ATOM (ROCm/ATOM)"
    # the wafer and LPU rows of 2026-12-07 (a later Cerebras speed, a Groq first token): SRAM rows,
    # which move no GPU factor; the SRAM factors were refitted on the stored fit's rows alone
    sram = appended["id"].isin(["cerebras-l31-70b-2024-10", "krabarena-groq-llama-3.3-70b"])
    assert (appended["notes"].str.contains(extractor, regex=False) | atom | sram).all()
    refit, stored = fit_factors(fitted, per_stack=False), Factors()  # the stored fit is per vendor
    prepared = prepare_rows(fitted)
    cost_refit = float(np.sum(log_errors(refit, prepared) ** 2))
    cost_stored = float(np.sum(log_errors(stored, prepared) ** 2))
    assert cost_stored == pytest.approx(cost_refit, rel=5e-3)


@pytest.mark.xfail(
    strict=True,
    reason="measured (2026-12-08): since a step's prompts come in whole chunks (serving.pareto."
    "_mean_step_s) the refit on the stored fit's 50 rows moves NVIDIA η_mem 0.855 → 0.790, AMD η_mem "
    "0.605 → 0.563 and the NVIDIA per-layer latency 71.6 → 61.1 µs at a cost 0.18% below the stored "
    "factors' (18.57 against 18.60): the backend presets still run on the stored factors of 2026-11-27 "
    "until they are refitted",
)
def test_stored_factors_are_the_refit_factor_by_factor(table) -> None:
    fitted = stored_fit_table(table)
    refit, stored = fit_factors(fitted, per_stack=False), Factors()
    for name in (
        "gpu_eta_mem",
        "gpu_eta_flop",
        "amd_eta_mem",
        "amd_eta_flop",
        "gpu_request_overhead_s",
        "wafer_layer_s",
        "lpu_layer_s",
    ):
        assert getattr(stored, name) == pytest.approx(getattr(refit, name), rel=0.02), name


def test_every_factor_starts_inside_its_bounds() -> None:
    for name, (low, high, _, start) in FACTOR_BOUNDS.items():
        assert low <= start <= high, name
    assert set(FACTOR_BOUNDS) == set(Factors.names())


def test_a_held_out_fit_never_sees_its_group(table, monkeypatch) -> None:
    seen: list[set[str]] = []

    def recording_fit(part):  # type: ignore[no-untyped-def]
        seen.append(set(part["group"]))
        return Factors()

    monkeypatch.setattr(serving_module, "fit_factors", recording_fit)
    fits = leave_one_group_out(table, n_jobs=1)  # recorded in this process (the workers' fits are the same)
    assert set(fits) == set(table["group"])
    for group, groups in zip(sorted(fits), seen, strict=True):
        assert group not in groups and groups == set(table["group"]) - {group}


@pytest.mark.slow  # the leave-one-group-out fixture: about a minute (make test-slow)
def test_every_measurement_is_predicted_both_ways(check, table) -> None:
    for fit in ("in_sample", "held_out"):
        part = check[check["fit"] == fit]
        assert set(part["id"]) == set(table["id"])
        assert part["predicted"].map(math.isfinite).all() and (part["predicted"] > 0).all()
    headline = check[check["headline"] & (check["fit"] == "held_out")]
    assert set(headline["metric"]) == {"tok_s_per_user", "tok_s_per_gpu", "ttft_s"}
    # a row with both speeds is compared at equal interactivity, never at a derived concurrency
    both = check[check["comparison"] == "equal_interactivity"]
    assert not both.empty
    at_derived = check["concurrency_derived"] & check["headline"] & (check["comparison"] == "at_concurrency")
    assert set(check.loc[at_derived, "metric"]) <= {"tok_s_per_user", "ttft_s"}  # single-stream API speeds
    assert check.loc[at_derived, "concurrency"].eq(1).all()


@pytest.mark.slow  # the leave-one-group-out fixture: about a minute (make test-slow)
def test_equal_interactivity_compares_where_the_frontier_has_the_measured_speed(check) -> None:
    points = check[(check["comparison"] == "equal_interactivity") & check["reached"]]
    assert len(points) >= 30


def _headline(check, metric: str):  # type: ignore[no-untyped-def]
    summary = summarize(check)
    return summary[(summary["fit"] == "held_out") & (summary["metric"] == metric)].iloc[0]


@pytest.mark.slow  # the leave-one-group-out fixture: about a minute (make test-slow)
@pytest.mark.xfail(
    strict=True,
    reason="measured (2026-12-08, 176 rows, prompts in whole chunks, per-stack efficiency and "
    "scheduling time fitted): held out by group, median |error| of tok/s per GPU at equal interactivity "
    "67% (164 rows), of tok/s per user at equal throughput 30% (172 rows); at the stated concurrencies "
    "22% and 20% (2026-12-07: 73% and 32%; 24% and 23%)",
)
@pytest.mark.parametrize("metric", ["tok_s_per_gpu", "tok_s_per_user"])
def test_held_out_median_error_within_20_percent(check, metric: str) -> None:
    assert _headline(check, metric)["median_abs_error"] <= TARGET_MEDIAN_ABS_ERROR


@pytest.mark.slow  # the leave-one-group-out fixture: about a minute (make test-slow)
@pytest.mark.xfail(
    strict=True,
    reason="measured (2026-12-08, 176 rows, prompts in whole chunks, stack scheduling time): worst "
    "held-out tok/s per GPU 3696% (nim-l33-70b-tp2-500-2k-c1), tok/s per user 284% "
    "(ix-l33-70b-mi355x-vllm-1k1k); 1155% and 626% on 2026-12-07",
)
def test_no_held_out_error_worse_than_100_percent(check) -> None:
    for metric in ("tok_s_per_gpu", "tok_s_per_user"):
        assert _headline(check, metric)["worst_abs_error"] <= TARGET_WORST_ABS_ERROR


@pytest.mark.slow  # the leave-one-group-out fixture: about a minute (make test-slow)
@pytest.mark.xfail(
    strict=True,
    reason="measured (2026-12-08, 176 rows, prompts in whole chunks, stack scheduling time): held-out median "
    "|error| of time to first token 36% (158 rows; 36% at the stated concurrency; 39% on 2026-12-07)",
)
def test_held_out_ttft_median_within_30_percent(check) -> None:
    assert _headline(check, "ttft_s")["median_abs_error"] <= TARGET_TTFT_MEDIAN_ABS_ERROR


@pytest.mark.slow  # the leave-one-group-out fixture: about a minute (make test-slow)
def test_summary_reports_both_fits_and_the_stated_concurrencies(check) -> None:
    for headline in (True, False):
        summary = summarize(check, headline=headline)
        assert set(summary["fit"]) == {"in_sample", "held_out"}
        assert set(summary["metric"]) == {"tok_s_per_user", "tok_s_per_gpu", "ttft_s"}


def test_precisions_are_per_component(table) -> None:
    row = next(r for r in table.itertuples(index=False) if r.id == "ix-gptoss-b200-trt-8k1k")
    spec = row_spec(row)
    assert spec.llm.bytes_per_param == 2.0 and spec.llm.expert_bytes_per_param == pytest.approx(0.53125)
    assert (spec.llm.compute_dtype, spec.llm.expert_compute_dtype, spec.llm.kv_bytes_per_element) == (
        "bf16",
        "fp8",
        1.0,
    )


def test_median_first_tokens_are_compared_with_the_predicted_median() -> None:
    from speedtrap.validation.serving_fit import load_of, physics_of, predict_at_concurrency
    from speedtrap.validation.serving_table import row_spec, ttft_is_median

    table = load_measurements()
    medians = [row for row in table.itertuples(index=False) if ttft_is_median(row)]
    # InferenceX prints median TTFTs, and krabarena's Groq first token is a warm median; the rows say
    # so, and the others (NIM, Vultr) stay means
    assert medians and {str(row.source) for row in medians} == {"InferenceX", "krabarena"}
    assert sum(str(row.source) == "krabarena" for row in medians) == 1
    row = next(r for r in medians if r.id == "ix-l33-70b-mi325x-vllm-8k1k")
    spec = row_spec(row, Factors().apply(hardware_preset(str(row.hardware))))
    load = load_of(physics_of(spec), spec, spec.concurrency)
    assert load.ttft_median_s < load.ttft_s
    assert predict_at_concurrency(row)["ttft_s"] == pytest.approx(load.ttft_median_s)


def test_decode_flop_efficiency_never_exceeds_the_prefill_efficiency() -> None:
    # the fit varies η_f as a ratio ≤ 1 of the prefill η (serving_fit.DECODE_EFFICIENCY_OF)
    stored = Factors()
    assert stored.gpu_eta_flop <= stored.gpu_prefill_eta_flop
    assert stored.amd_eta_flop <= stored.amd_prefill_eta_flop
    vector = [FACTOR_BOUNDS[n][3] for n in Factors.names()]
    names = Factors.names()
    vector[names.index("amd_eta_flop")] = 1.0
    vector[names.index("amd_prefill_eta_flop")] = 0.3
    assert factors_of_fit(vector).amd_eta_flop == pytest.approx(0.3)


@pytest.mark.slow  # the leave-one-group-out fixture: about a minute (make test-slow)
def test_the_stored_residuals_are_this_fits_held_out_errors(check) -> None:
    # speedtrap pareto's prediction intervals read them; regenerate with write_residuals(check)
    from speedtrap.validation.serving_intervals import held_out_residuals, load_residuals

    stored, fresh = load_residuals(), held_out_residuals(check)
    assert list(stored["id"]) == list(fresh["id"]) and list(stored["metric"]) == list(fresh["metric"])
    assert np.allclose(stored["log_error"], fresh["log_error"], rtol=0.0, atol=1e-9)


@pytest.mark.slow  # the leave-one-group-out fixture: about a minute (make test-slow)
def test_error_by_vendor_and_stack_summarises_the_held_out_rows(check) -> None:
    from speedtrap.validation.serving_intervals import error_by_vendor_and_stack, stack_of, vendor_of

    table = error_by_vendor_and_stack(check)
    held = check[(check["fit"] == "held_out") & check["headline"]]
    assert set(table["metric"]) == {"tok_s_per_gpu", "tok_s_per_user", "ttft_s"}
    assert (table["fit"] == "held_out").all()
    by_vendor = table[table["by"] == "vendor"].set_index(["name", "metric"])
    for metric, rows in held.groupby("metric"):
        # every headline comparison has a vendor; the vendors' rows add up to the metric's
        assert by_vendor.xs(metric, level="metric")["rows"].sum() == len(rows)
        amd = rows[[vendor_of(str(h)) == "AMD" for h in rows["hardware"]]]
        errors = amd["error"].abs()
        assert by_vendor.loc[("AMD", metric), "median_abs_error"] == pytest.approx(errors.median())
        assert by_vendor.loc[("AMD", metric), "worst_abs_error"] == pytest.approx(errors.max())
        assert by_vendor.loc[("AMD", metric), "groups"] == amd["group"].nunique()
    by_stack = table[table["by"] == "stack"]
    assert set(by_stack["name"]) <= {"TensorRT-LLM", "vLLM", "SGLang", "ATOM"}
    assert by_stack["rows"].sum() == sum(stack_of(str(i)) is not None for i in held["id"])
    sglang = by_stack[(by_stack["name"] == "SGLang") & (by_stack["metric"] == "ttft_s")].iloc[0]
    is_sglang = np.array([stack_of(str(i)) == "SGLang" for i in held["id"]])
    sglang_rows = held[(held["metric"] == "ttft_s").to_numpy() & is_sglang]
    assert sglang["rows"] == len(sglang_rows) and sglang["groups"] == sglang_rows["group"].nunique() >= 3
    assert (table["worst_abs_error"] >= table["median_abs_error"]).all()


def test_the_profile_bounds_the_gemm_half_point_the_fit_puts_at_zero() -> None:
    """The free fit puts M½ at its lower bound 0; its profile over the table keeps values up to about
    42 tokens at 95% and rules out 44; claim 2 samples 0–42 (experiments/claims/c2_what_fast_mode_is.toml).
    Before the API rows' first tokens carried the API request term the profile kept 0–55: the 405B
    wafer row's log error of −4.5 had inflated the residual variance the statistic divides by."""
    table = stored_fit_table()  # the rows of the stored fit, which claim 2 rests on
    profile = profile_factor(table, "gpu_gemm_half_tokens", [0.0, 16.0, 40.0, 44.0], per_stack=False)
    assert profile["statistic"].iloc[0] == pytest.approx(0.0, abs=0.01)
    # the fit minimises the robust loss, not the squared errors the statistic counts, so a held value
    # near the free one can give a slightly smaller sum (16 tokens: −0.13 since prompts come in whole
    # chunks, 2026-12-08); beyond it the statistic grows
    assert profile["statistic"].iloc[1] < 1.0
    assert profile["statistic"].iloc[1:].is_monotonic_increasing
    assert profile["inside"].tolist() == [True, True, True, False]
    held = fit_factors(table, fixed={"gpu_gemm_half_tokens": 16.0})
    assert held.gpu_gemm_half_tokens == 16.0
    with pytest.raises(ValueError, match="no factor"):
        fit_factors(table, fixed={"gpu_gemm_half": 1.0})


def test_the_refits_in_worker_processes_are_the_refits_in_one(table) -> None:
    # leave_one_group_out runs its independent, deterministic refits in worker processes: the same
    # factors as one process gives, group by group
    part = table[table["group"].isin(sorted(set(table["group"]))[:3])]  # three refits on each side
    serial, parallel = leave_one_group_out(part, n_jobs=1), leave_one_group_out(part, n_jobs=2)
    assert list(serial) == list(parallel) == sorted(set(part["group"]))
    assert all(serial[group] == parallel[group] for group in serial)


def test_a_row_without_a_named_stack_runs_on_the_vendor_baseline() -> None:
    fast = Factors(**{name: 2.0 for name in STACK_FACTORS.values()})
    for hardware in ("h200", "mi355x", "wse-3", "lpu"):
        preset = hardware_preset(hardware)
        assert fast.overrides(preset, None) == Factors().overrides(preset) == fast.overrides(preset, "Dynamo")
    h200, mi355x = hardware_preset("h200"), hardware_preset("mi355x")
    assert fast.overrides(h200, "ATOM") == Factors().overrides(h200)  # no NVIDIA ATOM factor
    trt = Factors(gpu_trt_speed=2.0).overrides(h200, "TensorRT-LLM")
    base = Factors().overrides(h200)
    assert trt["layer_latency_s"] == pytest.approx(base["layer_latency_s"] / 2.0)
    assert trt["request_overhead_s"] == pytest.approx(base["request_overhead_s"] / 2.0)
    assert trt["eta_mem"] == min(1.0, 2.0 * base["eta_mem"]) and trt["eta_flop"] == 2.0 * base["eta_flop"]
    assert Factors(amd_atom_speed=0.5).overrides(mi355x, "ATOM")["eta_mem"] == 0.5 * Factors().amd_eta_mem


def test_the_fit_uses_each_stack_factor_on_that_stacks_rows_only(table) -> None:
    from speedtrap.validation.serving_intervals import stack_of

    prepared = prepare_rows(table)
    base = log_errors(Factors(), prepared)
    moved = log_errors(Factors(gpu_trt_speed=1.5), prepared)
    changed = np.abs(moved - base) > 1e-9
    per_row = [len(item.truth) for item in prepared]
    is_trt = np.repeat(
        [
            stack_of(str(i)) == "TensorRT-LLM" and vendor_of(str(h)) == "NVIDIA"
            for i, h in zip(table["id"], table["hardware"], strict=True)
        ],
        per_row,
    )
    assert changed[is_trt].mean() > 0.9 and not changed[~is_trt].any()


def test_a_held_out_groups_stack_factor_is_fitted_only_from_other_groups(table) -> None:
    # a stack with no row in the fitted table keeps the vendor baseline: holding out one of the four
    # ATOM groups leaves the others, holding out all of them leaves factor 1 exactly
    atom = table[[stack_of(str(i)) == "ATOM" for i in table["id"]]]
    assert atom["group"].nunique() == 4
    for group in set(atom["group"]):
        assert "amd_atom_speed" in stack_factors_of(table[table["group"] != group])
    without = table[~table["group"].isin(set(atom["group"]))]
    assert "amd_atom_speed" not in stack_factors_of(without)
    part = table[
        table["group"].isin(["gpt-oss-120b | h200 | aggregated", "gpt-oss-120b | mi300x | aggregated"])
    ]
    fitted = fit_factors(part)
    informed = stack_factors_of(part)
    for name in STACK_FACTORS.values():
        value = getattr(fitted, name)
        low, high = STACK_SPEED_BOUNDS[:2]
        assert value == 1.0 if name not in informed else low <= value <= high, name
    assert informed and all(
        getattr(fit_factors(part, per_stack=False), n) == 1.0 for n in STACK_FACTORS.values()
    )


@pytest.mark.slow  # the leave-one-group-out fixture: about a minute (make test-slow)
def test_the_documented_command_prints_this_fit(check, tmp_path, monkeypatch) -> None:
    """``speedtrap validate serving`` as the README and docs give it, on the module's held-out fit: the
    command's own call is the fixture's (the stored factors, the whole table, held out), so the fit is
    computed once per suite (tests/test_readme.py leaves this command to this test)."""
    from typer.testing import CliRunner

    from speedtrap.cli import app

    def same_fit(factors, table, *, cross_validate=True, held_out_factors=None):
        assert factors == Factors() and cross_validate and held_out_factors is None
        assert table.equals(load_measurements())
        return check

    monkeypatch.setattr(serving_module, "validate_serving", same_fit)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["validate", "serving"])
    assert result.exit_code == 0, result.output
    assert "held out" in result.output and "per serving stack" in result.output and "Targets" in result.output
    assert (tmp_path / "results" / "validation" / "serving_validation.png").stat().st_size > 10_000
