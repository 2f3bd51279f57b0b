"""Prediction intervals for the serving physics' speeds, from its held-out errors.

``speedtrap validate serving`` predicts every published measurement with factors refitted without the
measurement's configuration group (leave one group out, :func:`speedtrap.validation.serving.
validate_serving`). Those held-out errors are what a new prediction should expect: a predicted speed
``p`` whose held-out log errors ``r = ln(predicted / measured)`` have empirical quantiles ``q_low`` and
``q_high`` (2.5% and 97.5%) carries the 95% prediction interval ``[p·e^(−q_high), p·e^(−q_low)]`` for
the measured speed. The errors are pooled per hardware vendor (NVIDIA, AMD, Cerebras, Groq), and per
serving stack where the measurement's id names one (``trt``, ``vllm``, ``sglang``, ``atom``); a vendor
without held-out errors falls back to every vendor's. With fewer than :data:`ROUGH_BELOW` errors the
interval is rough: the 2.5% and 97.5% quantiles of so few points are close to their extremes.

The errors are stored in ``data/serving_residuals.csv`` (:func:`write_residuals` regenerates it from a
cross-validated check; ``tests/validation/test_serving_validation.py`` holds it equal to a fresh one),
so that ``speedtrap pareto`` and its ``--explain`` print intervals without refitting.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "INTERVAL_METRICS",
    "LEVEL",
    "ROUGH_BELOW",
    "STACKS",
    "VENDORS",
    "PredictionInterval",
    "error_by_vendor_and_stack",
    "error_summary",
    "held_out_residuals",
    "interval_from_residuals",
    "load_residuals",
    "prediction_interval",
    "residual_quantiles",
    "stack_of",
    "vendor_of",
    "write_residuals",
]

LEVEL = 0.95
"""Coverage of the prediction intervals: the central 95% of the held-out log errors."""
ROUGH_BELOW = 10
"""Fewer held-out errors than this make an interval rough (its 2.5% and 97.5% quantiles are then
interpolated between the few most extreme errors)."""

INTERVAL_METRICS = ("tok_s_per_user", "tok_s_per_gpu")
"""The speeds that carry an interval: output tok/s per user and per GPU (per chip: a wafer or an LPU
counts as a GPU, as in the measurements table)."""

VENDORS: dict[str, str] = {
    "h100-sxm": "NVIDIA",
    "h200": "NVIDIA",
    "b200": "NVIDIA",
    "gb200": "NVIDIA",
    "mi300x": "AMD",
    "mi325x": "AMD",
    "mi355x": "AMD",
    "wse-3": "Cerebras",
    "lpu": "Groq",
}
"""The maker of each catalogued chip (the hardware catalogue's datasheets, speedtrap.config.catalog)."""

STACKS: dict[str, str] = {"trt": "TensorRT-LLM", "vllm": "vLLM", "sglang": "SGLang", "atom": "ATOM"}
"""Serving stacks named by a measurement's id (a token of the id; InferenceX and LMSYS rows name one)."""

_RESIDUALS_CSV = "serving_residuals.csv"
_COLUMNS = ["id", "group", "hardware", "vendor", "stack", "metric", "comparison", "log_error"]


def vendor_of(hardware: str) -> str | None:
    """The vendor of catalogued hardware ``hardware`` (``None`` for hardware outside the catalogue)."""
    return VENDORS.get(hardware)


def stack_of(row_id: str) -> str | None:
    """The serving stack a measurement's id names (``None`` when it names none)."""
    for token in row_id.split("-"):
        if token in STACKS:
            return STACKS[token]
    return None


def held_out_residuals(check: pd.DataFrame) -> pd.DataFrame:
    """The held-out log errors ``ln(predicted / measured)`` of a cross-validated check's headline
    comparisons of tok/s per user and per GPU, one row each, with the row's vendor and stack."""
    part = check[(check["fit"] == "held_out") & check["headline"] & check["metric"].isin(INTERVAL_METRICS)]
    part = part[(part["predicted"] > 0) & (part["measured"] > 0)]
    out = pd.DataFrame(
        {
            "id": part["id"].astype(str),
            "group": part["group"].astype(str),
            "hardware": part["hardware"].astype(str),
            "vendor": [vendor_of(str(h)) or "" for h in part["hardware"]],
            "stack": [stack_of(str(i)) or "" for i in part["id"]],
            "metric": part["metric"].astype(str),
            "comparison": part["comparison"].astype(str),
            "log_error": np.log(part["predicted"].to_numpy(float) / part["measured"].to_numpy(float)),
        }
    )
    return out.sort_values(["metric", "id"], kind="stable").reset_index(drop=True)[_COLUMNS]


def write_residuals(check: pd.DataFrame, path: Path | None = None) -> Path:
    """Store :func:`held_out_residuals` of ``check`` (default: the packaged ``serving_residuals.csv``)."""
    target = Path(str(files("speedtrap.validation.data").joinpath(_RESIDUALS_CSV))) if path is None else path
    held_out_residuals(check).to_csv(target, index=False, float_format="%.17g")
    return target


def load_residuals() -> pd.DataFrame:
    """The stored held-out log errors (:func:`write_residuals`)."""
    with files("speedtrap.validation.data").joinpath(_RESIDUALS_CSV).open() as handle:
        table = pd.read_csv(handle, keep_default_na=False, dtype={"stack": str, "vendor": str})
    table["log_error"] = table["log_error"].astype(float)
    return table


@dataclass(frozen=True, slots=True)
class PredictionInterval:
    """A predicted speed's prediction interval for the measured speed (module docstring)."""

    predicted: float
    low: float
    """Lower end, in the prediction's unit: ``predicted · e^(−q_high)``."""
    high: float
    """Upper end, in the prediction's unit: ``predicted · e^(−q_low)``."""
    q_low: float
    """2.5% quantile of the held-out log errors ``ln(predicted / measured)``."""
    q_high: float
    """97.5% quantile of the held-out log errors."""
    count: int
    """Held-out errors the quantiles rest on."""
    scope: str
    """Whose errors: e.g. ``"NVIDIA"``, ``"NVIDIA, vLLM"`` or ``"all vendors"``."""
    level: float = LEVEL

    @property
    def rough(self) -> bool:
        """Fewer than :data:`ROUGH_BELOW` errors: the quantiles are close to the extremes."""
        return self.count < ROUGH_BELOW

    def as_dict(self) -> dict[str, float | int | str | bool]:
        """The JSON record of the interval."""
        return {
            "low": self.low,
            "high": self.high,
            "level": self.level,
            "log_error_q025": self.q_low,
            "log_error_q975": self.q_high,
            "residuals": self.count,
            "scope": self.scope,
            "rough": self.rough,
        }


def residual_quantiles(log_errors: np.ndarray | pd.Series, level: float = LEVEL) -> tuple[float, float]:
    """The empirical ``(1 − level)/2`` and ``(1 + level)/2`` quantiles of ``log_errors`` (numpy's
    linear interpolation between order statistics); raises ``ValueError`` for none."""
    values = np.asarray(log_errors, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        raise ValueError("no held-out errors to take quantiles of")
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return float(low), float(high)


def interval_from_residuals(
    predicted: float, log_errors: np.ndarray | pd.Series, *, scope: str = "", level: float = LEVEL
) -> PredictionInterval:
    """The prediction interval of ``predicted`` from held-out log errors (module docstring)."""
    q_low, q_high = residual_quantiles(log_errors, level)
    count = int(np.isfinite(np.asarray(log_errors, dtype=float)).sum())
    return PredictionInterval(
        predicted=predicted,
        low=predicted * math.exp(-q_high),
        high=predicted * math.exp(-q_low),
        q_low=q_low,
        q_high=q_high,
        count=count,
        scope=scope,
        level=level,
    )


def _pool(residuals: pd.DataFrame, metric: str, hardware: str, stack: str | None) -> tuple[pd.Series, str]:
    rows = residuals[residuals["metric"] == metric]
    vendor = vendor_of(hardware)
    if vendor is not None:
        by_vendor = rows[rows["vendor"] == vendor]
        if stack is not None:
            by_stack = by_vendor[by_vendor["stack"] == stack]
            if len(by_stack):
                return by_stack["log_error"], f"{vendor}, {stack}"
        if len(by_vendor):
            return by_vendor["log_error"], vendor
    return rows["log_error"], "all vendors"


def prediction_interval(
    predicted: float,
    metric: str,
    hardware: str,
    *,
    stack: str | None = None,
    residuals: pd.DataFrame | None = None,
) -> PredictionInterval:
    """The prediction interval of a predicted ``metric`` (``tok_s_per_user`` or ``tok_s_per_gpu``) on
    ``hardware`` (a catalogue name): from the held-out errors of that vendor and ``stack`` (a value of
    :data:`STACKS`) where it has some, else the vendor's, else every vendor's."""
    if metric not in INTERVAL_METRICS:
        raise ValueError(f"metric {metric!r}: intervals are for {', '.join(INTERVAL_METRICS)}")
    table = load_residuals() if residuals is None else residuals
    errors, scope = _pool(table, metric, hardware, stack)
    return interval_from_residuals(predicted, errors, scope=scope)


def error_summary(group: pd.DataFrame) -> dict[str, Any]:
    """A group of validation rows' ``error`` column in brief: its row count, median and worst
    absolute error (fractions), and the worst row's id and signed error."""
    errors = group["error"].abs()
    worst = group.loc[errors.idxmax()]
    return {
        "rows": len(group),
        "median_abs_error": float(errors.median()),
        "worst_abs_error": float(errors.max()),
        "worst_id": str(worst["id"]),
        "worst_error": float(worst["error"]),
    }


def error_by_vendor_and_stack(check: pd.DataFrame) -> pd.DataFrame:
    """Per vendor, per serving stack (where ids name one) and per headline metric: the configuration
    groups and rows, and the median and worst absolute error of the held-out headline comparisons (in
    sample when ``check`` was not cross-validated) — tok/s per GPU at equal interactivity (else at the
    concurrency), tok/s per user at equal throughput (else at the concurrency), time to first token at
    the concurrency. Columns: by (``vendor``/``stack``), name, fit, metric, groups, rows,
    median_abs_error, worst_abs_error, worst_id, worst_error (errors: predicted / measured − 1)."""
    fit = "held_out" if (check["fit"] == "held_out").any() else "in_sample"
    part = check[(check["fit"] == fit) & check["headline"]]
    part = part.assign(
        vendor=[vendor_of(str(h)) or "" for h in part["hardware"]],
        stack=[stack_of(str(i)) or "" for i in part["id"]],
    )
    rows = []
    for by in ("vendor", "stack"):
        for (name, metric), group in part[part[by] != ""].groupby([by, "metric"], sort=True):
            groups = int(group["group"].nunique())
            rows.append(
                {"by": by, "name": str(name), "fit": fit, "metric": str(metric), "groups": groups}
                | error_summary(group)
            )
    return pd.DataFrame(rows)
