"""The README's claim on the decisions read against what a team can measure: on the stored ensemble at
the README's full size, the idle share decides AI against by hand at two seeds — it is the measurement
worth most, its box survives resampling, and each seed's break-even lies inside the other's bootstrap
interval — and bounds fast mode at both: worth most, paying only above a threshold whose box survives
resampling (docs/decisions.md, "A second draw")."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from speedtrap.cli import app
from speedtrap.cli.compare import FULL_REPLICATIONS
from speedtrap.experiments.ensemble import default_ensemble_path

ROOT = Path(__file__).resolve().parents[2]
FULL = [
    "compare",
    str(ROOT / "experiments" / "scenarios" / "headline.toml"),
    *(
        "--backend",
        "gpu-batched",
        "--backend",
        "gpu-fast",
        "--backend",
        "wafer-distilled",
        "--backend",
        "manual",
    ),
    *("--set", "developers=10", "--set", "value.usd_per_dev_hour=100"),
    *("--replications", str(FULL_REPLICATIONS)),
]
AI = "AI (gpu-batched) vs by hand"
FAST = "gpu-fast vs gpu-batched"


@pytest.mark.slow
def test_the_idle_share_decides_ai_against_by_hand_and_bounds_fast_mode_at_two_seeds(tmp_path: Path) -> None:
    """About 2.5–5 min per seed on two cores."""
    if not default_ensemble_path().exists():
        pytest.skip("no calibrated ensemble is stored")
    rows, fast_rows = [], []
    for seed in ("0", "1000"):
        out = tmp_path / f"seed-{seed}"
        result = CliRunner().invoke(app, [*FULL, "--seed", seed, "--decisions", str(out)])
        assert result.exit_code == 0, result.output
        table = pd.read_csv(out / "decisions.csv").set_index("decision")
        rows.append(table.loc[AI])
        fast_rows.append(table.loc[FAST])
    for row in rows:
        assert row["measure_first"] == "share_idle" and row["measure_pays_side"] == "below"
        assert "idle share" in row["measure_boundary"] and "stable:" in row["measure_boundary"]
    for row, other in ((rows[0], rows[1]), (rows[1], rows[0])):
        assert (
            other["measure_break_even_low"] <= row["measure_break_even"] <= other["measure_break_even_high"]
        )
    for row in fast_rows:
        assert row["measure_first"] == "share_idle" and row["measure_pays_side"] == "above"
        boundary = row["measure_boundary"]
        assert boundary.startswith("pays when idle share ≥") and "stable:" in boundary
