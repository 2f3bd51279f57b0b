"""Every ``--set`` knob the README's "For your own team" list offers moves the result on the headline
scenario it is offered for, or is refused with an error that names what overrides it (issue 40,
point 8): a knob that changes nothing is a defect the user cannot see."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from speedtrap.analysis.value import day_cost_usd
from speedtrap.cli.common import load_scenario
from speedtrap.models.workflow import simulate_summary

ROOT = Path(__file__).resolve().parents[1]
HEADLINE = ROOT / "experiments" / "scenarios" / "headline.toml"
README = (ROOT / "README.md").read_text(encoding="utf-8")
SMALL = ["developers=2", "horizon_s=14400"]

# a value for each placeholder the README's list uses (N, X, P, [P1,P2,P3]), away from the headline's own
EXAMPLES = {"N": "3", "X": "250", "P": "0.9", "[P1,P2,P3]": "[0,1]"}


def readme_knobs() -> list[str]:
    """The ``--set path=PLACEHOLDER`` knobs of the README's bullet lists, with an example value."""
    found = re.findall(r"^\s*(?:\*|`[^`]*`;?)?.*?`--set ([a-z_.]+)=([^`]+)`", README, flags=re.M)
    knobs = [f"{path}={EXAMPLES[value]}" for path, value in found if value in EXAMPLES]
    return list(dict.fromkeys(knobs))


def test_the_readme_offers_the_knobs() -> None:
    knobs = readme_knobs()
    assert any(k.startswith("developers=") for k in knobs)
    assert any(k.startswith("developer.attention.parallel_sessions_probs=") for k in knobs)
    assert any(k.startswith("developer.attention.max_parallel_sessions=") for k in knobs)


@pytest.mark.parametrize("knob", readme_knobs())
def test_every_readme_knob_moves_the_result_or_is_refused(knob: str) -> None:
    base = load_scenario(HEADLINE, sets=SMALL)
    path = knob.partition("=")[0]
    if path == "developer.attention.max_parallel_sessions":
        # the headline sets a mix of sessions, which decides: the cap alone is refused, naming the mix
        with pytest.raises(ValueError, match="parallel_sessions_probs"):
            load_scenario(HEADLINE, sets=[*SMALL, knob])
        moved = load_scenario(
            HEADLINE, sets=[*SMALL, knob, "developer.attention.parallel_sessions_probs=null"]
        )
        assert moved.developer.attention.max_parallel_sessions == 3
        assert simulate_summary(moved, 1) != simulate_summary(base, 1)
        return
    moved = load_scenario(HEADLINE, sets=[*SMALL, knob])
    if path.startswith("value."):  # prices the same runs: the run is unchanged, its value is not
        assert moved.model_dump(exclude={"value"}) == base.model_dump(exclude={"value"})
        assert day_cost_usd(moved.value, moved.workday_s) != day_cost_usd(base.value, base.workday_s)
        return
    assert simulate_summary(moved, 1) != simulate_summary(base, 1)
