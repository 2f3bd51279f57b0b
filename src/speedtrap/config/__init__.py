"""Specs: validated, frozen pydantic data describing hardware, models, backends and scenarios."""

from speedtrap.config.backend import Backend, SpeculativeDecoding
from speedtrap.config.base import Spec
from speedtrap.config.catalog import (
    HARDWARE_PRESETS,
    LLM_PRESETS,
    UnknownPresetError,
    hardware_preset,
    llm_preset,
)
from speedtrap.config.developer import Attention, Developer, Fixing, Review
from speedtrap.config.dist import LogNormal
from speedtrap.config.experiment import Design, Experiment, Factor, Quick
from speedtrap.config.hardware import Hardware
from speedtrap.config.llm import LLM
from speedtrap.config.policy import PolicySpec, RouteSpec
from speedtrap.config.presets import BACKEND_PRESETS, backend_preset
from speedtrap.config.scenario import WORKDAY_S, Scenario
from speedtrap.config.tier import Price, Quality, Tier
from speedtrap.config.work import Difficulty, TaskMix

__all__ = [
    "BACKEND_PRESETS",
    "HARDWARE_PRESETS",
    "LLM",
    "LLM_PRESETS",
    "WORKDAY_S",
    "Attention",
    "Backend",
    "Design",
    "Developer",
    "Difficulty",
    "Experiment",
    "Factor",
    "Fixing",
    "Hardware",
    "LogNormal",
    "PolicySpec",
    "Price",
    "Quality",
    "Quick",
    "Review",
    "RouteSpec",
    "Scenario",
    "Spec",
    "SpeculativeDecoding",
    "TaskMix",
    "Tier",
    "UnknownPresetError",
    "backend_preset",
    "hardware_preset",
    "llm_preset",
]
