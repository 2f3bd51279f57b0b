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
    heap_run = bench.run_pool_heap_clock(workload, replicas=2, batch_cap=4)
    assert pool.customers == simpy_run.customers == heap_run.customers == len(workload.gaps_s) > 1_500
    # Same customers, same FIFO M/M/c discipline: every customer waits the same in all three engines.
    np.testing.assert_allclose(pool.waits_s, simpy_run.waits_s, atol=1e-6)
    np.testing.assert_allclose(heap_run.waits_s, simpy_run.waits_s, atol=1e-6)
    assert 2.0 <= pool.events_per_request < 3.0
    mean, se, _ = bench.mean_wait_check(pool.waits_s, 0.877)
    assert mean > 0 and se > 0
    bench.main(["--customers", "1000", "--layout", "8x1"])
    assert "ratio pool/SimPy" in capsys.readouterr().out
