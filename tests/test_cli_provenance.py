import json
import subprocess
import sys

from typer.testing import CliRunner

from speedtrap import __version__
from speedtrap.cli import app

runner = CliRunner()


def test_version_flag_and_module_entry_point() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"speedtrap {__version__}"
    out = subprocess.run(
        [sys.executable, "-m", "speedtrap", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"speedtrap {__version__}"


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
