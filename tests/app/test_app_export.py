"""The app's settings exported as scenario files and command lines: each loads back to the arm the
app runs (equal specs), and the exported file runs to the app's result."""

from __future__ import annotations

import dataclasses
import json
import math
import shlex
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from speedtrap.app.export import UPLOADED_FILE, export_settings, file_name
from speedtrap.app.settings import UPLOADED, Settings, build_arms
from speedtrap.cli import app
from speedtrap.cli.common import load_scenario
from speedtrap.cli.compare import build_arms as compare_arms
from speedtrap.config.scenario import Scenario
from speedtrap.models import simulate

SMALL = Settings(developers=2, horizon_h="0.5", seed="3")
"""Two developers for half an hour of the headline population."""

CASES = {
    "headline": SMALL,
    "what-ifs": dataclasses.replace(
        SMALL, decode_speedup=6.0, failure_multiplier=1.7, usd_per_dev_hour="150"
    ),
    "interactive_fast": dataclasses.replace(
        SMALL, backend_a="gpu-fast", backend_b="none", policy="interactive_fast"
    ),
    "fast_share": dataclasses.replace(
        SMALL, backend_a="gpu-fast", backend_b="gpu-batched", policy="fast_share", fast_share=0.35
    ),
    "manual": dataclasses.replace(SMALL, backend_b="manual", review_detection=0.8, patience_s=120.0),
    "defaults": dataclasses.replace(SMALL, scenario="built-in defaults", parallel_sessions=2, seed="11"),
    "two_backends": dataclasses.replace(SMALL, scenario="two_backends", horizon_h="2.25"),
}


def _command_scenario(command: str) -> tuple[Scenario, int]:
    """The scenario and seed ``speedtrap run`` builds from an exported command line."""
    argv = shlex.split(command)
    assert argv[:2] == ["speedtrap", "run"]
    path = Path(argv[2]) if len(argv) > 2 and not argv[2].startswith("-") else None
    options = argv[3:] if path is not None else argv[2:]
    backend = options[options.index("--backend") + 1]
    seed = int(options[options.index("--seed") + 1])
    sets = [o.removeprefix("--set=") for o in options if o.startswith("--set=")]
    return load_scenario(path, backend=backend, sets=sets), seed


@pytest.mark.parametrize("case", list(CASES))
def test_every_exported_file_and_command_loads_back_to_the_arm_the_app_runs(case: str) -> None:
    settings = CASES[case]
    arms = build_arms(settings)
    assert arms.ok, arms.errors
    export = export_settings(settings)
    assert export.seed == arms.seed
    assert list(export.files) == list(arms.scenarios) == list(export.commands)
    for name, scenario in arms.scenarios.items():
        loaded = Scenario.model_validate(tomllib.loads(export.files[name]))
        assert loaded == scenario  # equal specs, field by field
        from_command, seed = _command_scenario(export.commands[name])
        assert from_command == scenario and seed == arms.seed
        assert f"speedtrap run {file_name(name)} --seed {arms.seed}" in export.files[name]


def test_the_compare_command_is_given_without_what_ifs_and_builds_the_same_arms() -> None:
    export = export_settings(CASES["headline"])
    assert export.compare is not None
    argv = shlex.split(export.compare)
    assert argv[:3] == ["speedtrap", "compare", "experiments/scenarios/headline.toml"]
    assert argv[argv.index("--replications") + 1] == str(Settings().replications)
    assert argv[argv.index("--seed") + 1] == "3"
    backends = [argv[i + 1] for i, a in enumerate(argv) if a == "--backend"]
    sets = [a.removeprefix("--set=") for a in argv if a.startswith("--set=")]
    built = compare_arms(Path(argv[2]), backends, [], sets)
    assert built == build_arms(CASES["headline"]).scenarios
    assert export_settings(CASES["what-ifs"]).compare is None  # the what-ifs act on B alone
    assert export_settings(CASES["fast_share"]).compare is None  # the policy routes to each arm's backend


def test_an_uploaded_scenario_is_named_as_a_file_to_save() -> None:
    text = (Path(__file__).resolve().parents[2] / "experiments" / "scenarios" / "headline.toml").read_text()
    settings = dataclasses.replace(SMALL, scenario=UPLOADED, uploaded_toml=text)
    export = export_settings(settings)
    for command in export.commands.values():
        assert shlex.split(command)[2] == UPLOADED_FILE
    bundled = export_settings(SMALL)
    for name, body in export.files.items():  # the same arms as the bundled file, apart from the header
        assert "scenario 'uploaded file'" in body.splitlines()[0]
        assert body.splitlines()[2:] == bundled.files[name].splitlines()[2:]


def test_bad_controls_are_not_exported() -> None:
    with pytest.raises(ValueError, match="seed"):
        export_settings(dataclasses.replace(SMALL, seed="abc"))


def test_the_exported_file_runs_to_the_apps_result(tmp_path: Path) -> None:
    settings = CASES["what-ifs"]
    arms = build_arms(settings)
    export = export_settings(settings)
    name = list(arms.scenarios)[-1]
    path = tmp_path / file_name(name)
    path.write_text(export.files[name], encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(path), "--seed", str(export.seed), "--json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)["summary"]
    expected = simulate(arms.scenarios[name], arms.seed).summary()
    assert shown.keys() == expected.keys()
    for key, value in expected.items():
        assert (shown[key] is None) if math.isnan(value) else shown[key] == pytest.approx(value), key
