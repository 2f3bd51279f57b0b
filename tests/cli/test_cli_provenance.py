import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from speedtrap import __version__
from speedtrap.build import build_description, pool_build
from speedtrap.cli import app, load_scenario
from speedtrap.config import Scenario
from speedtrap.experiments import ResultStore, StoreMismatchError, make_executor
from speedtrap.models import simulate

runner = CliRunner()


def test_version_flag_and_module_entry_point() -> None:
    assert pool_build() in ("compiled pool (mypyc)", "pure Python")
    build = build_description()
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"speedtrap {__version__} ({build})"
    out = subprocess.run(
        [sys.executable, "-m", "speedtrap", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"speedtrap {__version__} ({build})"
    pure = subprocess.run(
        [sys.executable, "-m", "speedtrap", "--version"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "SPEEDTRAP_PURE": "1"},
    )
    assert pure.stdout.strip() == f"speedtrap {__version__} (pure Python, no typed core)"


def test_run_json_records_backend_overrides_spec_and_provenance() -> None:
    sets = ["--set", "developers=1", "--set", "horizon_s=3600"]
    result = runner.invoke(app, ["run", "--backend", "gpu-fast", *sets, "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["backends"] == ["gpu-fast"] and payload["policy"] == "always"
    assert payload["overrides"] == ["developers=1", "horizon_s=3600"]
    assert payload["scenario_spec"]["developers"] == 1
    provenance = payload["provenance"]
    assert provenance["speedtrap"] == __version__ and provenance["python"].startswith("3.")
    assert set(provenance["libraries"]) >= {"mesa", "numpy", "pandas"}


def test_run_export_writes_the_tables_as_parquet(tmp_path: Path) -> None:
    out = tmp_path / "export"
    result = runner.invoke(
        app, ["run", "--set", "developers=1", "--set", "horizon_s=3600", "--export", str(out)]
    )
    assert result.exit_code == 0, result.output
    simulated = simulate(Scenario(developers=1, horizon_s=3600.0), 0)
    for name in ("tasks", "requests", "ledger"):
        pd.testing.assert_frame_equal(pd.read_parquet(out / f"{name}.parquet"), getattr(simulated, name))
    spec = json.loads((out / "spec.json").read_text())
    assert spec["seed"] == 0 and spec["scenario"]["developers"] == 1 and "git_commit" in spec["provenance"]


@pytest.mark.parametrize("kind", ["by_difficulty", "escalate", "interactive_fast", "manual", "always"])
def test_set_policy_kind_rebuilds_the_policy_table(kind: str) -> None:
    scenario = load_scenario(None, backend="gpu-fast", sets=[f"policy.kind={kind}"])
    assert scenario.policy.kind == kind
    routes = scenario.policy.references(scenario.backends) if kind != "manual" else {}
    assert all(backend == "gpu-fast" for backend, _ in routes.values())


def test_set_policy_kind_then_refines_and_refuses_unknown_kinds() -> None:
    scenario = load_scenario(
        None,
        sets=["policy.kind=by_difficulty", "policy.routes.easy=gpu-batched", "policy.default=gpu-batched"],
    )
    assert scenario.policy.kind == "by_difficulty"
    with pytest.raises(ValueError, match="unknown policy kind 'nope'"):
        load_scenario(None, sets=["policy.kind=nope"])


def test_store_spec_json_records_provenance_outside_the_identity(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "exp")
    store.open({"a": 1})
    written = store.identity()
    assert written is not None and written["provenance"]["speedtrap"] == __version__
    ResultStore(tmp_path / "exp").open({"a": 1})  # reopening: provenance is not compared
    with pytest.raises(StoreMismatchError):
        ResultStore(tmp_path / "exp").open({"a": 2})


def test_a_dead_scheduler_address_fails_fast_with_one_line() -> None:
    pytest.importorskip("distributed")
    import socket
    import time

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    executor = make_executor("dask", scheduler=f"tcp://127.0.0.1:{port}")
    start = time.monotonic()
    with pytest.raises(ValueError, match="no Dask scheduler answered within 5 s"):
        list(executor.map_unordered(abs, [1]))
    assert time.monotonic() - start < 15


def test_empty_and_wrong_kind_files_are_named_as_such(tmp_path: Path) -> None:
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    result = runner.invoke(app, ["run", str(empty)])
    assert result.exit_code == 2 and "empty scenario file" in result.output
    scenario = tmp_path / "team.toml"
    scenario.write_text("developers = 3\n")
    result = runner.invoke(app, ["sweep", str(scenario)])
    assert result.exit_code == 2 and "this is a scenario file" in result.output
    experiment = tmp_path / "exp.toml"
    experiment.write_text('name = "x"\nreplications = 2\n[[factors]]\npath = "developers"\nvalues = [1, 2]\n')
    result = runner.invoke(app, ["run", str(experiment)])
    assert result.exit_code == 2 and "this is an experiment file" in result.output


def test_the_policy_kinds_in_the_help_are_the_registered_ones() -> None:
    from speedtrap.cli import POLICY_KINDS
    from speedtrap.config.policy import known_policy_kinds

    assert sorted(POLICY_KINDS) == sorted(known_policy_kinds())
