"""An event-driven Mesa model: continuous time, no unit-interval step loop."""

from __future__ import annotations

from typing import Any

import mesa


class EventModel(mesa.Model):
    """A Mesa 3.5 model advanced only by scheduled events (``schedule_event``, ``run_until``).

    Mesa starts a built-in unit-interval ``step`` event by default; a purely event-driven model
    stops it (as Mesa's own M/M/c example does). This is the one place that does so.
    Event callbacks are held by weak reference: schedule bound methods of live objects.
    """

    def __init__(self, *args: Any, rng: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, rng=rng, **kwargs)
        self._default_schedule.stop()
