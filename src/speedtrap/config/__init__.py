"""Specs: validated, frozen pydantic data describing hardware, models, backends and scenarios."""

from speedtrap.config.base import Spec
from speedtrap.config.tier import Price, Quality, Tier

__all__ = ["Price", "Quality", "Spec", "Tier"]
