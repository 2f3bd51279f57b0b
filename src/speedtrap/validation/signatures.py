"""The behavioural signatures of patience and switching away, from a simulated run.

:func:`signature_statistics` gives a run's :data:`~speedtrap.analysis.signatures.SIGNATURE_STATISTICS`
— the share of fast responses and the median response after short and after long agent stretches,
and the rank correlation of response with stretch — computed by the same function
(:func:`~speedtrap.analysis.signatures.signature_values`) that
:func:`speedtrap.sessions.targets.trace_targets` applies to real logs. Definitions, thresholds and
their sources: :mod:`speedtrap.analysis.signatures`. The proposed calibration rows are in
``src/speedtrap/validation/data/signature_target_rows.csv``.

A run's pairs are its check-ins (:func:`stretch_pairs`): every stretch the developer handed back
(``back_s`` set), its length ``need_s − handoff_s`` (hand-off to the agent's check-in) and the
response ``back_s − need_s`` (check-in to the developer's next hand-off). A stretch that ended in
the review of the agent's result has no hand-back and is not a pair, as in the logs, where the
prompt after a finished task starts a new one.
"""

from __future__ import annotations

import numpy as np

from speedtrap.analysis.signatures import signature_values
from speedtrap.models.results import RunResult

__all__ = ["signature_statistics", "stretch_pairs"]


def stretch_pairs(result: RunResult) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(stretch seconds, response seconds, developer) of every check-in of a run that the
    developer answered by the horizon. Needs the run's stretches table (a run with tables)."""
    st = result.stretches
    if st is None:
        raise ValueError("the run has no stretches table: simulate it with its tables")
    answered = st[np.isfinite(st["need_s"].to_numpy(float)) & np.isfinite(st["back_s"].to_numpy(float))]
    stretch = (answered["need_s"] - answered["handoff_s"]).to_numpy(float)
    response = (answered["back_s"] - answered["need_s"]).to_numpy(float)
    return stretch, response, answered["developer"].astype(str).to_numpy()


def signature_statistics(result: RunResult) -> dict[str, float]:
    """The run's behavioural signatures (keys :data:`~speedtrap.analysis.signatures.
    SIGNATURE_STATISTICS`; shares as fractions, medians in seconds, the correlation unitless; NaN
    where the run had no check-in after a stretch of that length)."""
    stretch, response, _ = stretch_pairs(result)
    return signature_values(stretch, response)
