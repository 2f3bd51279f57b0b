"""Every result names the engine that ran it (issue 41): ``RunResult``, the summary, ``speedtrap run
--json`` and its export, the sweep store's rows, ``claim.json`` and the provenance record say "typed
core" or "mesa", and why the typed core was not taken when it was not."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

import speedtrap.models.typed_core as typed_core
import speedtrap.models.workflow as workflow
from speedtrap.cli import app
from speedtrap.config import Scenario
from speedtrap.config.experiment import Experiment
from speedtrap.experiments import ResultStore
from speedtrap.experiments.claims import result_payload
from speedtrap.experiments.runner import RunTask, evaluate, run_experiment, run_task
from speedtrap.experiments.store import ENGINE_COLUMNS, engine_tally
from speedtrap.models import simulate, simulate_summary
from speedtrap.models.results import RUN_DIRECTLY, RunSummary
from speedtrap.models.typed_core import MESA, TYPED_CORE, Engine, choose_engine, engines_of
from speedtrap.models.workflow import WorkflowModel
from speedtrap.provenance import provenance

ROOT = Path(__file__).resolve().parents[2]
SHORT = Scenario.from_toml(ROOT / "experiments" / "scenarios" / "headline.toml").with_overrides(
    {"developers": 2, "horizon_s": 1800.0}
)
THRESHOLD = SHORT.with_overrides({"developer.attention.rule": "threshold"})
CORE = typed_core.core_module()
needs_core = pytest.mark.skipif(CORE is None, reason="the typed core is not built or not in use here")


def mesa_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workflow, "core_module", lambda: None)


@needs_core
def test_a_core_run_says_so_and_gives_no_reason() -> None:
    result = simulate(SHORT, 1)
    assert (result.engine, result.engine_reason) == (TYPED_CORE, None)
    summary = simulate_summary(SHORT, 1)
    assert isinstance(summary, RunSummary)
    assert (summary.engine, summary.engine_reason) == (TYPED_CORE, None)
    assert (result.summary().engine, result.summary().engine_reason) == (TYPED_CORE, None)


def test_a_mesa_run_names_why_the_core_was_not_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """An uncovered scenario names the field; a trace says so; no core says why there is none."""
    monkeypatch.setattr(workflow, "core_module", lambda: object())  # a core in use
    threshold = simulate_summary(THRESHOLD, 1)
    assert threshold.engine == MESA and "developer.attention.rule" in (threshold.engine_reason or "")
    traced = simulate(SHORT, 1, trace=True)
    assert traced.engine == MESA and "trace" in (traced.engine_reason or "")
    assert traced.summary().engine == MESA and traced.summary().engine_reason == traced.engine_reason
    monkeypatch.setenv("SPEEDTRAP_PURE", "1")
    mesa_only(monkeypatch)
    pure = simulate(SHORT, 1)
    assert (pure.engine, pure.engine_reason) == (MESA, "SPEEDTRAP_PURE=1")
    assert simulate_summary(SHORT, 1).engine_reason == "SPEEDTRAP_PURE=1"


def test_the_reason_when_no_core_is_built_or_it_is_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPEEDTRAP_PURE", raising=False)
    monkeypatch.setattr(typed_core, "core_state", lambda: "absent")
    assert choose_engine(None, SHORT) == Engine(MESA, "not built")
    monkeypatch.setattr(typed_core, "core_state", lambda: "stale")
    assert (choose_engine(None, SHORT).reason or "").startswith("stale build")
    module: Any = object()
    assert choose_engine(module, SHORT) == Engine(TYPED_CORE, None)
    assert choose_engine(module, SHORT, trace=True).name == MESA


def test_a_model_run_directly_says_so() -> None:
    model = WorkflowModel(SHORT, rng=1)
    model.run_until(SHORT.horizon_s)
    result = model.result()
    assert (result.engine, result.engine_reason) == (MESA, RUN_DIRECTLY)


def test_the_summary_keeps_its_engine_through_pickling_and_stays_a_float_dict() -> None:
    summary = RunSummary({"requests": 3.0}, Engine(MESA, "not built"))
    again = pickle.loads(pickle.dumps(summary))
    assert again == {"requests": 3.0} and (again.engine, again.engine_reason) == (MESA, "not built")
    assert Engine(MESA, "x").as_dict() == {"engine": MESA, "engine_reason": "x"}


def test_run_json_and_export_name_the_engine(tmp_path: Path) -> None:
    runner = CliRunner()
    sets = ["--set", "developers=1", "--set", "horizon_s=1800"]
    result = runner.invoke(app, ["run", *sets, "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    expected = typed_core.engine_for(Scenario(developers=1, horizon_s=1800.0)).as_dict()
    assert {k: payload[k] for k in ("engine", "engine_reason")} == expected
    assert payload["provenance"]["engines"] == {payload["scenario"]: expected}
    threshold_run = runner.invoke(
        app, ["run", *sets, "--set", "developer.attention.rule=threshold", "--json"]
    )
    assert threshold_run.exit_code == 0, threshold_run.output
    threshold_payload = json.loads(threshold_run.stdout)
    assert threshold_payload["engine"] == MESA and threshold_payload["engine_reason"]
    out = tmp_path / "export"
    exported = runner.invoke(app, ["run", *sets, "--export", str(out)])
    assert exported.exit_code == 0, exported.output
    spec = json.loads((out / "spec.json").read_text())
    assert {k: spec[k] for k in ("engine", "engine_reason")} == expected


def test_provenance_records_the_engines_given_and_nothing_else() -> None:
    assert "engines" not in provenance()
    engines = engines_of({"threshold": THRESHOLD})
    assert engines["threshold"]["engine"] == MESA and engines["threshold"]["engine_reason"]
    assert provenance(engines)["engines"] == engines


def tiny_experiment() -> Experiment:
    scenario = {
        "name": "tiny",
        "developers": 2,
        "horizon_s": 1800.0,
        "developer": {"attention": {"away_s": None}},
    }
    return Experiment.model_validate(
        {
            "name": "engine-tiny",
            "scenario": scenario,
            "factors": [{"path": "developer.attention.rule", "values": ["expected_wait", "threshold"]}],
            "replications": 2,
            "seed": 3,
            "outcomes": ["tasks_completed", "requests"],
        }
    )


def test_the_sweep_stores_rows_name_the_engine_and_the_table_keeps_only_outcomes(tmp_path: Path) -> None:
    spec = tiny_experiment()
    table = run_experiment(spec, results_dir=tmp_path, progress=False)
    assert not set(ENGINE_COLUMNS) & set(table.columns)
    assert table.attrs["outcomes"] == ["tasks_completed", "requests"]
    rows = ResultStore(tmp_path / spec.name).read()
    assert set(ENGINE_COLUMNS) <= set(rows.columns)
    threshold = rows[rows["point"] == 1]
    assert (threshold["engine"] == MESA).all()
    reason = typed_core.engine_for(THRESHOLD).reason  # the field named, or why there is no core here
    assert reason is not None and (threshold["engine_reason"] == reason).all()
    whole = rows[rows["point"] == 0]
    engine = typed_core.engine_for(Scenario.model_validate(spec.scenario.model_dump()))
    assert (whole["engine"] == engine.name).all()
    tally = engine_tally(rows)
    assert sum(entry["runs"] for entry in tally.values()) == 4
    for entry in tally.values():  # each engine and reason counted as the rows give them
        same = (rows["engine"] == entry["engine"]) & (
            rows["engine_reason"].fillna("") == (entry["engine_reason"] or "")
        )
        assert entry["runs"] == int(same.sum()) > 0
    assert evaluate([SHORT], [1]).columns.tolist()[:3] == ["point", "replication", "seed"]
    assert not set(ENGINE_COLUMNS) & set(evaluate([SHORT], [1]).columns)


def test_a_run_record_names_its_engine_only_when_the_model_does() -> None:
    record = run_task(RunTask(0, 0, 1, THRESHOLD, simulate_summary, ("requests",)))
    assert record["engine"] == MESA and record["engine_reason"] == typed_core.engine_for(THRESHOLD).reason
    plain = run_task(RunTask(0, 0, 1, THRESHOLD, lambda s, seed: {"requests": 1.0}, ("requests",)))
    assert "engine" not in plain


def test_engine_tally_counts_runs_stored_without_an_engine() -> None:
    old = pd.DataFrame({"point": [0, 1]})
    assert engine_tally(old) == {"not recorded": {"engine": None, "engine_reason": None, "runs": 2}}
    mixed = pd.DataFrame(
        {"engine": [TYPED_CORE, MESA, MESA], "engine_reason": [None, "not built", "not built"]}
    )
    assert engine_tally(mixed) == {
        TYPED_CORE: {"engine": TYPED_CORE, "engine_reason": None, "runs": 1},
        "mesa (not built)": {"engine": MESA, "engine_reason": "not built", "runs": 2},
    }


def test_claim_json_records_the_engines() -> None:
    class Result:
        name = "c"

        def as_dict(self) -> dict[str, Any]:
            return {"name": "c"}

    engines = {TYPED_CORE: {"engine": TYPED_CORE, "engine_reason": None, "runs": 4}}
    payload = result_payload(Result(), wall_s=1.0, quick=True, engines=engines)  # type: ignore[arg-type]
    assert payload["engines"] == engines and payload["provenance"]["engines"] == engines


def test_compare_json_names_each_arms_engine_in_its_provenance() -> None:
    args = ["compare", "--backend", "gpu-batched", "--backend", "gpu-fast", "--replications", "2", "--single"]
    sets = ["--set", "developers=1", "--set", "horizon_s=1800", "--set", "developer.attention.rule=threshold"]
    result = CliRunner().invoke(app, [*args, *sets, "--json"])
    assert result.exit_code == 0, result.output
    engines = json.loads(result.stdout)["provenance"]["engines"]
    assert set(engines) == {"gpu-batched", "gpu-fast"}
    expected = typed_core.engine_for(SHORT.with_overrides({"developer.attention.rule": "threshold"}))
    for engine in engines.values():
        assert engine == expected.as_dict() and engine["engine"] == MESA
