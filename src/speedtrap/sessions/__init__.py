"""Bring your own sessions: load coding-agent logs (Claude Code transcripts, Codex CLI rollouts,
plain CSV/Parquet traces), fit a scenario to them, and export simulated runs in the same trace
format.

Loading and fitting are pure (no Mesa); :mod:`speedtrap.sessions.replay` drives the workflow model
with recorded sessions. The trace format is documented in docs/sessions.md.
"""

from speedtrap.sessions.claude_code import load_claude_code
from speedtrap.sessions.codex import load_codex
from speedtrap.sessions.export import trace_from_result
from speedtrap.sessions.fit import Fit, ScenarioFit, fit_lognormal, fit_scenario, scenario_toml
from speedtrap.sessions.load import LOG_FORMATS, Sessions, load_sessions
from speedtrap.sessions.plain_trace import TRACE_COLUMNS, LoadReport, NoRequestsError, normalize_trace

__all__ = [
    "LOG_FORMATS",
    "TRACE_COLUMNS",
    "Fit",
    "LoadReport",
    "NoRequestsError",
    "ScenarioFit",
    "Sessions",
    "fit_lognormal",
    "fit_scenario",
    "load_claude_code",
    "load_codex",
    "load_sessions",
    "normalize_trace",
    "scenario_toml",
    "trace_from_result",
]
