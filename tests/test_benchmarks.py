"""The benchmark scripts run (small sizes, no timing assertions)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


def test_bench_pool_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    bench = load("bench_pool")
    pool, workload = bench.run_pool(2_000, replicas=2, batch_cap=4, seed=3)
    simpy_run = bench.run_simpy(workload)
    ciw_run = bench.run_ciw(workload)
    heap_run = bench.run_pool_heap_clock(workload, replicas=2, batch_cap=4)
    customers = {pool.customers, simpy_run.customers, ciw_run.customers, heap_run.customers}
    assert customers == {len(workload.gaps_s)} and len(workload.gaps_s) > 1_500
    # Same customers, same FIFO M/M/c discipline: every customer waits the same in all four engines.
    np.testing.assert_allclose(pool.waits_s, simpy_run.waits_s, atol=1e-6)
    np.testing.assert_allclose(ciw_run.waits_s, simpy_run.waits_s, atol=1e-6)
    np.testing.assert_allclose(heap_run.waits_s, simpy_run.waits_s, atol=1e-6)
    assert 2.0 <= pool.events_per_request < 3.0
    mean, se, _ = bench.mean_wait_check(pool.waits_s, 0.877)
    assert mean > 0 and se > 0
    bench.main(["--customers", "1000", "--repeats", "2", "--layout", "8x1"])
    out = capsys.readouterr().out
    assert "ratio pool/SimPy" in out and "ratio pool/Ciw" in out


def test_bench_workflow_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    bench = load("bench_workflow")
    base = bench.Scenario.from_toml(bench.HEADLINE)
    team = bench.scaled(base, 100, 0.5)
    per = base.developers / base.backends["gpu-batched"].replicas
    assert (team.developers, team.backends["gpu-batched"].replicas) == (100, round(100 / per))
    assert team.horizon_s == 0.5 * base.workday_s
    m = bench.measure(bench.scaled(base, 4, 0.02), seed=1)
    assert (m.developers, m.replicas, m.developer_days) == (4, round(4 / per), pytest.approx(0.08))
    assert m.turns > 20 and m.run_s > 0 and m.result_s > 0 and m.gc_s >= 0
    # a turn is at least a prefill end, a last token and a tool call: about 3 events
    assert 2.5 <= m.events_per_turn <= 4.5
    refs = bench.references(events=2_000, repeats=1)
    assert refs.mesa_us > 0 and refs.event_model_us > 0 and refs.simpy_us > 0
    sizes = ["--factor", "0.01", "--seeds", "2", "--developers", "2", "5", "--days", "1", "2"]
    bench.main([*sizes, "--reference-events", "2000", "--memory-days", "0.5"])
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("(a) headline: 10 developers x 0.2 days = 2 developer-days")
    assert [line.split(":")[0] for line in out[2:5]] == ["seed 0", "seed 1", "all seeds"]
    assert all("developer-days/s" in line and "events/s" in line for line in out[2:5])
    scaling = out.index(bench.SCALING_HEADER)
    rows = [line.split() for line in out[scaling + 1 : scaling + 6] if line]  # a blank between tables
    assert [(int(r[0]), float(r[1])) for r in rows] == [(2, 0.005), (5, 0.005), (20, 0.01), (20, 0.02)]
    assert any(line.startswith("developers x2.5: cost x") for line in out)
    assert any(line.startswith("days x2: cost x") for line in out)
    c = next(i for i, line in enumerate(out) if line.startswith("(c) reference event loops, interleaved"))
    assert "stock Mesa events" in out[c + 1] and "SimPy events" in out[c + 1]
    assert out[c + 2].startswith("(e) typed core")
    if bench.core_module() is None:
        assert out[c + 2].startswith("(e) typed core: not measured") and out[c + 3].startswith("(d)")
    else:  # the two headline runs on the core, its turn in reference events, its scaling with the team
        assert [line.split(":")[0] for line in out[c + 3 : c + 5]] == ["seed 0", "seed 1"]
        assert "EventModel events" in out[c + 5] and "x the Mesa model's developer-days/s" in out[c + 5]
        assert out[c + 6] == bench.SCALING_HEADER
        assert all("x the Mesa model run just before" in line for line in out[c + 7 : c + 9])
    assert out[-3].startswith("(d) peak resident memory")
    assert out[-2].startswith("summary only:") and out[-1].startswith("tables kept")
    baseline, peak = bench.peak_rss_mib(bench.scaled(base, 2, 0.01))
    assert 0 < baseline <= peak


def test_the_command_line_starts_without_the_heavy_libraries() -> None:
    bench = load("bench_cli")
    count, heavy = bench.imported_modules()
    assert heavy == [] and count < 600  # Mesa, scipy.stats, matplotlib, seaborn and pandas load on use


def test_bench_break_even_counts_the_models_evaluations() -> None:
    bench = load("bench_break_even")
    from speedtrap.analysis.mean_value import ANALYTIC_RULES
    from speedtrap.config import Scenario

    scenario = Scenario().with_overrides(ANALYTIC_RULES)
    values, calls, wall, cpu = bench.counted(
        lambda: [bench.break_even.expected_task_time(scenario).total_s] * 2
    )
    assert calls == 1 and len(values) == 2 and values[0] > 0 and wall >= 0 and cpu >= 0
    from speedtrap.analysis.task_model import expected_task_time

    assert bench.break_even.expected_task_time is expected_task_time  # the model is put back


@pytest.mark.slow
def test_bench_break_even_runs(capsys: pytest.CaptureFixture[str]) -> None:
    load("bench_break_even").main(["--repeat", "1"])
    out = capsys.readouterr().out
    assert "model evaluations" in out and "largest difference between the two" in out


def test_bench_history_matching_reference_is_the_cut() -> None:
    """The benchmark's reference (two calls per target, every candidate) keeps what Wave.survives and
    Wave.cut keep, on a small wave (the benchmark itself refits the stored calibration's wave 1:
    minutes, so it is not run here)."""
    from speedtrap.analysis.emulator import training_sample
    from speedtrap.analysis.history_matching import Parameter, Target, history_matching_wave

    bench = load("bench_history_matching")
    unit = training_sample(32, 3, seed=1)
    outputs = {"a": unit[:, 0] + unit[:, 1], "b": np.exp(2 * unit[:, 2])}
    targets = [Target("a", 1.0, 0.05, 0.02), Target("b", 3.0, 0.2, 0.1, scale="log")]
    parameters = [Parameter(f"p{j}", 0.0, 1.0) for j in range(3)]
    wave = history_matching_wave(unit, outputs, targets, parameters, candidates=500, restarts=0)
    points = np.random.default_rng(2).random((4000, 3))
    kept = bench.reference_kept(wave, points)
    assert 0 < kept.sum() < len(points)
    assert np.array_equal(kept, wave.survives(points)) and np.array_equal(kept, wave.cut(points)[0])
    assert bench.WAVE1.exists()  # the stored runs it refits
