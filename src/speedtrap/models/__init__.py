"""Mesa models: wiring, timing and measurement."""

from speedtrap.models.base import EventModel
from speedtrap.models.ledger import LEDGER_CATEGORIES, Ledger
from speedtrap.models.open_arrival import ArrivalStream, OpenArrivalModel
from speedtrap.models.results import SUMMARY_KEYS, RunResult
from speedtrap.models.workflow import WorkflowModel, simulate, simulate_summary

__all__ = [
    "LEDGER_CATEGORIES",
    "SUMMARY_KEYS",
    "ArrivalStream",
    "EventModel",
    "Ledger",
    "OpenArrivalModel",
    "RunResult",
    "WorkflowModel",
    "simulate",
    "simulate_summary",
]
