"""The serving physics against published serving measurements.

The measurements live in ``data/serving_measurements.csv``: one row per published operating point
(hardware, chips, model, weight precision, input/output lengths, concurrency) with the measured
output tok/s per user, tok/s per GPU and time to first token where the source gives them, the
source's address and how any figure was derived. :func:`validate_serving` predicts every row with
:func:`speedtrap.serving.pareto.steady_load` over :func:`speedtrap.serving.roofline.step_s` (the
step function the serving pool uses) and returns one row
per (measurement, metric) with the relative error.

**The split** (fixed before any fit, :func:`assign_parts`): within each memory kind (HBM GPUs,
wafer SRAM), rows are ordered by the SHA-256 of their id and every third one (positions 2, 5, 8, …)
is held out; the rest calibrate. **The fit** (:func:`fit_efficiencies`): five efficiency factors
(GPU η_mem, η_f and per-step overhead; wafer per-layer latency and wafer hop) minimise the squared
log errors of per-user and per-GPU speed on the calibration part only (``scipy.optimize.
least_squares``). The result is stored as constants in ``speedtrap.config.hardware`` with the fit
date and the ids it used; a test refits and compares.

**What a prediction assumes** (steady load at the row's concurrency ``B``, prompt ``I``, output
``O``): each stream's inter-token time is one step of B streams of mean context ``I + O/2`` that
also carries its share of the other requests' prompts, ``(B − 1)·I/O`` tokens (chunked prefill);
time to first token is one step of the B − 1 other streams plus the whole prompt; a request takes
TTFT + (O − 1) inter-token times, so throughput per GPU is ``B·O / request time / chips``. Output
tokens only: where a source counts input tokens too (``gpu_counts_input``), its figure is scaled
by ``O / (I + O)`` before comparing. Queueing for admission is not modelled.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from speedtrap.config.backend import derive_chips_per_replica
from speedtrap.config.catalog import hardware_preset, llm_preset
from speedtrap.config.hardware import (
    FITTED_FIT_DATE,
    FITTED_GPU_ETA_FLOP,
    FITTED_GPU_ETA_MEM,
    FITTED_GPU_STEP_OVERHEAD_S,
    FITTED_IDS,
    FITTED_WAFER_HOP_S,
    FITTED_WAFER_LAYER_S,
    Hardware,
)
from speedtrap.config.llm import LLM
from speedtrap.serving.pareto import steady_load
from speedtrap.serving.replica import ReplicaPhysics

__all__ = [
    "MEASUREMENTS_FILE",
    "METRICS",
    "Efficiencies",
    "assign_parts",
    "fit_efficiencies",
    "load_measurements",
    "predict",
    "summarize",
    "validate_serving",
    "write_figure",
]

MEASUREMENTS_FILE = "serving_measurements.csv"
METRICS = ("tok_s_per_user", "tok_s_per_gpu", "ttft_s")
"""Compared metrics: output tok/s per user, output tok/s per GPU, time to first token (s)."""

TARGET_MEDIAN_ABS_ERROR = 0.15
"""Acceptance (issue 9): held-out median absolute error on tok/s per user and per GPU."""
TARGET_WORST_ABS_ERROR = 0.35
"""Acceptance (issue 9): no held-out row worse than this."""

_PRECISIONS: dict[str, tuple[float, str, float]] = {
    # weight bytes/param (incl. block scales), compute dtype, KV bytes/element
    "bf16": (2.0, "bf16", 2.0),
    "fp8": (1.0, "fp8", 1.0),
    "fp4": (0.5625, "fp4", 1.0),  # NVFP4/MXFP4: 4-bit values + an 8-bit scale per 16 or 32
    "int4": (0.5625, "bf16", 2.0),  # weight-only int4, 16-bit compute
}


def load_measurements() -> pd.DataFrame:
    """The published measurements (``data/serving_measurements.csv``) with their ``part``."""
    with resources.files("speedtrap.validation.data").joinpath(MEASUREMENTS_FILE).open("rb") as f:
        table = pd.read_csv(f)
    table["part"] = assign_parts(table["id"], table["hardware"])
    return table


def _memory_kind(hardware: str) -> str:
    return hardware_preset(hardware).memory_kind


def assign_parts(ids: Iterable[str], hardware: Iterable[str]) -> list[str]:
    """``calibration`` or ``heldout`` for each id: within each memory kind, ids ordered by SHA-256
    and every third (positions 2, 5, 8, …) held out. Depends on the ids alone, never on errors."""
    ids, hardware = list(ids), list(hardware)
    parts = ["calibration"] * len(ids)
    for kind in ("hbm", "sram"):
        members = [i for i in range(len(ids)) if _memory_kind(hardware[i]) == kind]
        members.sort(key=lambda i: hashlib.sha256(ids[i].encode()).hexdigest())
        for position, i in enumerate(members):
            if position % 3 == 2:
                parts[i] = "heldout"
    return parts


@dataclass(frozen=True, slots=True)
class Efficiencies:
    """The fitted factors: GPU (HBM) η_mem, η_f and per-step overhead; wafer per-layer latency and hop."""

    gpu_eta_mem: float = FITTED_GPU_ETA_MEM
    gpu_eta_flop: float = FITTED_GPU_ETA_FLOP
    gpu_step_overhead_s: float = FITTED_GPU_STEP_OVERHEAD_S
    wafer_layer_s: float = FITTED_WAFER_LAYER_S
    wafer_hop_s: float = FITTED_WAFER_HOP_S

    def as_vector(self) -> NDArray[np.float64]:
        return np.array(list(asdict(self).values()), dtype=float)

    @classmethod
    def from_vector(cls, values: Sequence[float]) -> Efficiencies:
        return cls(*(float(v) for v in values))

    def apply(self, hardware: Hardware) -> Hardware:
        """``hardware`` with these factors (GPU ones on HBM chips, wafer ones on SRAM)."""
        if hardware.memory_kind == "sram":
            overrides = {"layer_latency_s": self.wafer_layer_s, "wafer_hop_s": self.wafer_hop_s}
        else:
            overrides = {
                "eta_mem": self.gpu_eta_mem,
                "eta_flop": self.gpu_eta_flop,
                "step_overhead_s": self.gpu_step_overhead_s,
            }
        return hardware.with_overrides(overrides)


def _llm_for(row: Any, hardware: Hardware) -> LLM:
    weight_bytes, dtype, kv_bytes = _PRECISIONS[str(row.weight_precision)]
    if dtype not in hardware.peak_tflop_s:
        dtype = "bf16"
    base = llm_preset(str(row.model))
    return base.with_overrides(
        {"bytes_per_param": weight_bytes, "compute_dtype": dtype, "kv_bytes_per_element": kv_bytes}
    )


def _chips_for(row: Any, hardware: Hardware, llm: LLM) -> int:
    if isinstance(row.chips, (int, float)) and not math.isnan(row.chips):
        return int(row.chips)
    return derive_chips_per_replica(
        hardware, llm, batch=int(row.concurrency), context_tokens=row.isl + row.osl
    )


def predict(row: Any, eff: Efficiencies | None = None) -> dict[str, float]:
    """Predicted output tok/s per user, output tok/s per GPU and TTFT (s) of one measurement row."""
    eff = Efficiencies() if eff is None else eff
    hardware = eff.apply(hardware_preset(str(row.hardware)))
    llm = _llm_for(row, hardware)
    chips = _chips_for(row, hardware, llm)
    physics = ReplicaPhysics.from_parts(hardware, llm, chips)
    load = steady_load(
        physics, int(row.concurrency), context_tokens=0.0, isl=float(row.isl), osl=float(row.osl)
    )
    return {
        "tok_s_per_user": load.tok_s_per_user,
        "tok_s_per_gpu": load.tok_s_per_chip,
        "ttft_s": load.ttft_s,
        "chips": float(chips),
        "concurrency": float(row.concurrency),
    }


def _measured(row: Any) -> dict[str, float]:
    per_gpu = float(row.tok_s_per_gpu)
    if not math.isnan(per_gpu) and bool(row.gpu_counts_input):
        per_gpu *= row.osl / (row.isl + row.osl)
    return {
        "tok_s_per_user": float(row.tok_s_per_user),
        "tok_s_per_gpu": per_gpu,
        "ttft_s": float(row.ttft_s),
    }


def validate_serving(eff: Efficiencies | None = None, table: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (measurement, metric that the source gives): id, part, model, hardware, chips,
    concurrency, metric, measured, predicted, error (predicted/measured − 1)."""
    table = load_measurements() if table is None else table
    rows = []
    for row in table.itertuples(index=False):
        predicted, measured = predict(row, eff), _measured(row)
        for metric in METRICS:
            if math.isnan(measured[metric]):
                continue
            rows.append(
                {
                    "id": row.id,
                    "part": row.part,
                    "model": row.model,
                    "hardware": row.hardware,
                    "chips": int(predicted["chips"]),
                    "concurrency": int(predicted["concurrency"]),
                    "metric": metric,
                    "measured": measured[metric],
                    "predicted": predicted[metric],
                    "error": predicted[metric] / measured[metric] - 1.0,
                }
            )
    return pd.DataFrame(rows)


def summarize(check: pd.DataFrame) -> pd.DataFrame:
    """Per part and metric: rows, median and worst absolute relative error."""
    grouped = check.assign(abs_error=check["error"].abs()).groupby(["part", "metric"])["abs_error"]
    out = grouped.agg(rows="count", median_abs_error="median", worst_abs_error="max").reset_index()
    return out


def _residuals(vector: NDArray[np.float64], table: pd.DataFrame, /) -> NDArray[np.float64]:
    check = validate_serving(Efficiencies.from_vector(list(vector)), table)
    check = check[check["metric"] != "ttft_s"]
    ratio = check["predicted"].to_numpy(dtype=float) / check["measured"].to_numpy(dtype=float)
    logs: NDArray[np.float64] = np.log(ratio)
    return logs


def fit_efficiencies(table: pd.DataFrame | None = None) -> tuple[Efficiencies, list[str]]:
    """Least squares on log error over the calibration part only; returns the factors and the ids."""
    from scipy.optimize import least_squares

    table = load_measurements() if table is None else table
    calibration = table[table["part"] == "calibration"]
    start = np.array([0.85, 0.6, 0.5e-3, 10e-6, 0.1e-3])
    lower = np.array([0.3, 0.1, 0.0, 0.0, 0.0])
    upper = np.array([1.0, 1.0, 20e-3, 100e-6, 5e-3])
    scale = np.array([0.1, 0.1, 1e-3, 10e-6, 0.1e-3])
    result = least_squares(_residuals, start, bounds=(lower, upper), x_scale=scale, args=(calibration,))
    return Efficiencies.from_vector(list(result.x)), sorted(calibration["id"])


def stored_fit() -> tuple[Efficiencies, str, tuple[str, ...]]:
    """The factors in use, their fit date and the calibration ids they came from."""
    return Efficiencies(), FITTED_FIT_DATE, FITTED_IDS


def write_figure(check: pd.DataFrame, path: Path) -> Path:
    """Predicted vs measured, log-log, one panel per metric, calibration and held-out marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = [m for m in METRICS if (check["metric"] == m).any()]
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 4.0))
    for ax, metric in zip(np.atleast_1d(axes), metrics, strict=True):
        part = check[check["metric"] == metric]
        for name, marker in (("calibration", "o"), ("heldout", "s")):
            sel = part[part["part"] == name]
            ax.scatter(sel["measured"], sel["predicted"], marker=marker, label=name, alpha=0.8)
        lo = float(min(part["measured"].min(), part["predicted"].min())) * 0.8
        hi = float(max(part["measured"].max(), part["predicted"].max())) * 1.25
        ax.plot([lo, hi], [lo, hi], color="grey", lw=1)
        ax.fill_between([lo, hi], [lo * 0.85, hi * 0.85], [lo * 1.15, hi * 1.15], color="grey", alpha=0.15)
        ax.set(xscale="log", yscale="log", xlabel=f"measured {metric}", ylabel=f"predicted {metric}")
        ax.legend(loc="upper left", fontsize=8)
    fig.suptitle("speedtrap serving physics vs published measurements (band: ±15%)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
