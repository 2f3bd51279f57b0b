"""Mesa models: wiring, timing and measurement."""

from speedtrap.models.base import EventModel

__all__ = ["EventModel"]
