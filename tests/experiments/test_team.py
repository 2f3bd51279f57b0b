"""A team ensemble on a case whose answer is known: logs simulated with one member's tool time keep
that member and rule out members whose tool time is ten times shorter or longer; the sidecar and
the ensemble file round-trip; no survivor writes nothing and names the least implausible."""

import json
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from speedtrap.config.scenario import Scenario
from speedtrap.experiments.ensemble import load_ensemble
from speedtrap.experiments.team import (
    NoSurvivorError,
    Prior,
    TeamFit,
    fit_team,
    prior_of,
    read_sidecar,
    sidecar_path,
    simulated_trace,
    write_team,
)
from speedtrap.validation.parameters import load_parameters

TOOL = "task_mix.tool_s.median"
SCENARIO = Scenario.model_validate({"name": "team-test", "developers": 1, "horizon_s": 28_800.0})
TRUE_TOOL_S = 4.0


def prior(tmp_path: Path, tools: list[float], ids: list[int] | None = None) -> Prior:
    frame = pd.DataFrame({"member": ids or list(range(len(tools))), TOOL: tools})
    path = tmp_path / "prior.csv"
    frame.to_csv(path, index=False)
    return Prior(frame, path, default=False)


@pytest.fixture(scope="module")
def logs() -> pd.DataFrame:
    """Logs of the true member, on seeds the fit does not use (it uses replication_seeds(0, …))."""
    truth = SCENARIO.with_overrides({TOOL: TRUE_TOOL_S})
    return simulated_trace(truth, [101, 202])


@pytest.fixture(scope="module")
def known(logs: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> TeamFit:
    # members 10 and 30 lie ten times below and above the truth (member 20), inside the ranges table
    given = prior(tmp_path_factory.mktemp("prior"), [1.0, TRUE_TOOL_S, 16.0], ids=[10, 20, 30])
    return fit_team(logs, SCENARIO, given, replications=3, days=1.0)


def test_the_true_member_is_kept_and_the_far_ones_ruled_out(known: TeamFit) -> None:
    assert known.kept == [20]
    ranking = known.ranking().set_index("member")
    assert ranking.loc[20, "max_implausibility"] <= 3.0
    for far in (10, 30):
        assert ranking.loc[far, "max_implausibility"] > 3.0
        assert ranking.loc[far, "worst_statistic"] == "tool_share_of_agent_time"


def test_the_sidecar_and_the_ensemble_round_trip(known: TeamFit, tmp_path: Path) -> None:
    csv, side = write_team(known, tmp_path / "team.csv")
    assert side == sidecar_path(csv) == tmp_path / "team.fit.json"
    members = load_ensemble(csv, parameters=load_parameters())
    assert members == [{TOOL: TRUE_TOOL_S}]
    assert pd.read_csv(csv)["member"].tolist() == [20]  # the prior's member numbers are kept
    data = read_sidecar(csv)
    assert data == json.loads(json.dumps(known.sidecar(), ensure_ascii=False))
    assert data is not None and (data["kept"], data["of"], data["kept_members"]) == (1, 3, [20])
    assert {r["statistic"] for r in data["statistics"] if r["used"]} == set(known.used)
    assert all(r["sd"] > 0 for r in data["statistics"] if r["used"])
    assert [p["path"] for p in data["parameters"]] == [TOOL]
    assert prior_of(data) == known.prior.path.resolve()


def test_no_survivor_writes_nothing_and_names_the_least_implausible(known: TeamFit, tmp_path: Path) -> None:
    far_frame = known.prior.frame[known.prior.frame["member"] != 20].reset_index(drop=True)
    far = replace(
        known,
        prior=Prior(far_frame, known.prior.path, default=False),
        implausibility=known.implausibility.drop(index=20),
    )
    assert far.kept == []
    with pytest.raises(
        NoSurvivorError, match=r"no member of the prior \(2 members\).*least implausible: member"
    ):
        write_team(far, tmp_path / "team.csv")
    assert not (tmp_path / "team.csv").exists() and not (tmp_path / "team.fit.json").exists()


def test_measured_paths_run_at_the_team_value_and_leave_the_ensemble(
    logs: pd.DataFrame, tmp_path: Path
) -> None:
    """A path the scenario fit measured is not matched: every member runs with the scenario's value, so
    all three are alike, and the written ensemble leaves the column out (the fitted scenario holds it)."""
    frame = pd.DataFrame({"member": [0, 1], TOOL: [1.0, 16.0], "developer.review.base_s": [60.0, 90.0]})
    frame.to_csv(tmp_path / "p.csv", index=False)
    given = Prior(frame, tmp_path / "p.csv", default=False)
    scenario = SCENARIO.with_overrides({TOOL: TRUE_TOOL_S})
    fit = fit_team(logs, scenario, given, replications=2, days=0.5, fitted=[TOOL])
    assert fit.measured == [TOOL]
    assert fit.kept == [0, 1]
    assert list(fit.ensemble().columns) == ["member", "developer.review.base_s"]
    assert fit.parameters.set_index("path").loc[TOOL, "verdict"].startswith("measured by the fit")


def test_a_plain_ensemble_has_no_sidecar_and_a_foreign_one_is_refused(tmp_path: Path) -> None:
    assert read_sidecar(tmp_path / "plain.csv") is None
    (tmp_path / "other.fit.json").write_text('{"kind": "something else"}')
    with pytest.raises(ValueError, match="not a team-ensemble sidecar"):
        read_sidecar(tmp_path / "other.csv")
    (tmp_path / "broken.fit.json").write_text("{")
    with pytest.raises(ValueError, match="not a readable"):
        read_sidecar(tmp_path / "broken.csv")


def test_bad_sizes_are_refused(logs: pd.DataFrame, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="replications ≥ 1 and days > 0"):
        fit_team(logs, SCENARIO, prior(tmp_path, [TRUE_TOOL_S]), replications=0)
