"""The ledger's categories: every developer-second of a run belongs to exactly one of them.

Kept here, free of Mesa, so that the simulation's ledger (:mod:`speedtrap.models.ledger`) and the
analytic model (:mod:`speedtrap.analysis.mean_value`) share one list.
"""

from __future__ import annotations

LEDGER_CATEGORIES: tuple[str, ...] = (
    "prompting",
    "waiting_queue",
    "waiting_ttft",
    "waiting_generation",
    "waiting_tool",
    "reviewing",
    "fixing",
    "switching",
    "manual",
    "other_work",
    "idle",
)
"""The categories, in ledger order. ``waiting_*``: waiting on an agent turn — for a slot in the
backend (queue), for the first token after admission (ttft: prefill and overhead), for the rest
of the output (generation), for the turn's tool call (tool). ``fixing`` includes every human
step of a repair and the rework of escaped defects; ``switching`` is resumption overhead (coming
back to a session, or going into other work); ``manual`` is work on a task by hand (policy
``manual``, or the part of a task a hybrid developer keeps); ``other_work`` is work outside the
agent tasks, valued in task-equivalents (see ``speedtrap.models.results``)."""

WAITING_CATEGORIES: tuple[str, ...] = LEDGER_CATEGORIES[1:5]
"""The four waiting categories."""
