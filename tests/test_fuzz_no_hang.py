"""No hang, by construction (issue 44): zero, negative-zero and subnormal durations, rates and counts
are refused where they would stop the clock, with one line naming the field; the event loop stops a
model that runs an unbounded number of events at one instant; the TOML long-key check is linear."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import mesa
import pytest
from typer.testing import CliRunner

from fuzz_cases import time_limit
from speedtrap.cli import app
from speedtrap.config.base import MIN_DURATION_S
from speedtrap.config.scenario import MIN_AWAY_S, Scenario
from speedtrap.models import base
from speedtrap.models.base import EventModel, ZeroTimeLoopError

runner = CliRunner()

ZEROS = ("0", "-0.0", "5e-324")
"""A zero, a negative zero (which passed a "not negative" check) and the smallest subnormal float."""

FIELDS = {
    "durations": (
        "developer.attention.away_s.median",  # 0 made a developer look at their agents for ever
        "horizon_s",
        "workday_s",
        "developer.prompt_s.median",
        "developer.attention.turn_prior_s",
        "developer.attention.resumption_tau_s",
    ),
    "rates": (
        "backends.gpu-batched.decode_speedup",
        "backends.gpu-batched.hardware.memory_bandwidth_tb_s",
        "developer.attention.turn_memory",
    ),
    "counts": (
        "developers",
        "backends.gpu-batched.replicas",
        "backends.gpu-batched.typical_batch",
        "developer.checkin_every_turns",
    ),
}


@pytest.mark.parametrize("value", ZEROS)
@pytest.mark.parametrize(
    ("field_class", "path"), [(kind, path) for kind, paths in FIELDS.items() for path in paths]
)
def test_a_zero_that_would_stop_the_clock_is_one_line_naming_the_field(
    field_class: str, path: str, value: str
) -> None:
    result = runner.invoke(app, ["run", "--set", f"{path}={value}"])
    assert result.exit_code == 2, (field_class, result.output)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: --set {path}={value}: "), result.output
    assert path.rsplit(".", 1)[-1] in lines[0].split(": ", 2)[-1], result.output  # the field, again


def test_a_negative_zero_is_read_as_zero_and_subnormals_are_refused_everywhere() -> None:
    scenario = Scenario().with_overrides({"developer.attention.resumption_max_s": -0.0})
    assert str(scenario.developer.attention.resumption_max_s) == "0.0"
    for path in (
        "developer.attention.other_work_prob",
        "task_mix.turns_exponent",
        "developer.review.detect_prob",
    ):
        with pytest.raises(ValueError, match="subnormal"):
            Scenario().with_overrides({path: 5e-324})


def test_durations_are_zero_or_at_least_the_floor() -> None:
    assert Scenario().with_overrides({"task_mix.tool_s.median": 0.0}).task_mix.tool_s.median == 0.0
    for path in ("task_mix.tool_s.median", "developer.attention.resumption_short_s", "horizon_s"):
        with pytest.raises(ValueError, match=r"must be 0 or at least 1e-06 s"):
            Scenario().with_overrides({path: MIN_DURATION_S / 2})
    with pytest.raises(ValueError, match=r"away_s.median: must be at least 0.001 s"):
        Scenario().with_overrides({"developer.attention.away_s.median": MIN_AWAY_S / 2})
    # rates ending in _s (per second) are not durations; a chip's latency per hop is microseconds
    fast = Scenario().with_overrides({"backends.gpu-batched.hardware.scale_out_latency_s": 1e-8})
    assert fast.backends["gpu-batched"].hardware.scale_out_latency_s == 1e-8


class Looper(mesa.Agent):
    """An agent whose event reschedules itself ``step_s`` later, for ever."""

    def __init__(self, model: EventModel, step_s: float) -> None:
        super().__init__(model)
        self.step_s = step_s

    def tick(self) -> None:
        self.model.schedule_event(self.tick, after=self.step_s)


@pytest.mark.parametrize(
    ("start_s", "step_s"),
    [(0.0, 0.0), (1000.0, 1e-300)],  # no step at all; a step too small to move the clock at t = 1000 s
)
def test_the_event_loop_stops_a_model_that_never_moves_the_clock(
    monkeypatch: pytest.MonkeyPatch, start_s: float, step_s: float
) -> None:
    monkeypatch.setattr(base, "MAX_EVENTS_AT_ONE_INSTANT", 1_000)
    model = EventModel(rng=1)
    looper = Looper(model, step_s)
    model.schedule_event(looper.tick, at=start_s)
    with (
        time_limit(120, error=AssertionError),  # a guard for a loop that would never end, not a timing check
        pytest.raises(ZeroTimeLoopError, match=r"2,00\d events at one instant .*Looper\.tick"),
    ):
        model.run_until(2000.0)


def test_many_events_at_one_instant_within_the_limit_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "MAX_EVENTS_AT_ONE_INSTANT", 1_000)
    model = EventModel(rng=1)
    loopers = [Looper(model, 1.0) for _ in range(50)]  # 50 agents: the limit grows by 1,000 each
    for looper in loopers:
        for _ in range(100):
            model.schedule_event(looper.tick, at=5.0)  # 5,000 events at t = 5 s, then one a second each
    model.run_until(10.0)
    assert model.events_executed == 5_000 * 6


def test_the_long_key_check_is_linear_in_the_text() -> None:
    # 10 MB of name characters: the check before took 84 s for 100 kB (quadratic); a generous timeout
    # guards against a hang, the assertion is that it ends at all
    script = textwrap.dedent(
        """
        from speedtrap.config.toml_file import LONG_DOTTED_KEY
        assert not LONG_DOTTED_KEY.search("a" * 10_000_000)
        assert not LONG_DOTTED_KEY.search(('"' + "a" * 1000) * 10_000)
        assert LONG_DOTTED_KEY.search("x = 1\\n" + "a." * 40 + "b = 1")
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
