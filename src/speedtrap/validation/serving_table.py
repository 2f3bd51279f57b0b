"""The published serving measurements as data, and each row as the specs ``speedtrap pareto`` reads.

``data/serving_measurements.csv`` holds one row per published operating point: the source, the
hardware and chips of one replica (for a disaggregated deployment: of its decode pool), the model and
the precision of each component (``weights``: attention, embeddings and shared experts; ``experts``:
routed experts; ``kv``: KV cache; ``compute`` and ``expert_compute``: the dtypes of the matrix
multiplies), the request shape (``isl`` uncached input and ``osl`` output tokens; no ``osl``: a
decode-only measurement at a context of ``isl``), the concurrency per replica (``concurrency_derived``
when the source does not print it and it was derived from the other figures), the measured output
tok/s per user, tok/s per GPU and time to first token where the source gives them (``ttft_statistic``:
``median`` where the source prints the median, empty for the mean or an unstated statistic), the replica's
parallel layout (attention data parallelism, expert parallelism, dispatch bytes, overlapped
communication, chunked-prefill budget), a separate prefill pool (``prefill_chips``: counted chips,
0 when the source measured the decode pool alone), the source's address and how every figure was
derived (``notes``); ``api``: the figures were measured through the provider's public API, so the
time to first token includes the API request (:data:`API_REQUEST_S`).

A row is predicted from specs that ``speedtrap pareto`` accepts (:func:`row_spec_toml` writes them as
a ``--spec`` file), so anyone can reproduce a prediction from the command line.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from importlib import resources
from typing import Any

import pandas as pd

from speedtrap.config.backend import derive_chips_per_replica
from speedtrap.config.catalog import hardware_preset, llm_preset
from speedtrap.config.hardware import Hardware
from speedtrap.config.llm import LLM
from speedtrap.config.parallel import Disaggregation, Parallelism

__all__ = [
    "API_REQUEST_S",
    "KV_BYTES",
    "MEASUREMENTS_FILE",
    "PRECISIONS",
    "RowSpec",
    "group_of",
    "load_measurements",
    "measured",
    "row_spec",
    "row_spec_toml",
    "ttft_is_median",
]

MEASUREMENTS_FILE = "serving_measurements.csv"

PRECISIONS: dict[str, tuple[float, str]] = {
    # weight storage (bytes/param, block scales included) and the dtype its matrix multiplies use
    "bf16": (2.0, "bf16"),
    "fp8": (1.0, "fp8"),
    "fp4": (0.5625, "fp4"),  # NVFP4: 4-bit values + an 8-bit scale per 16, W4A4
    "mxfp4": (0.53125, "fp8"),  # MXFP4: 4-bit values + an 8-bit scale per 32, computed as W4A8
    "int4": (0.5625, "bf16"),  # weight-only int4 with group scales, 16-bit compute
}
KV_BYTES: dict[str, float] = {"bf16": 2.0, "fp8": 1.0}

API_REQUEST_S = 0.15
"""The time a request through a provider's public API spends before the first token beyond the
serving physics (network round trip, TLS and HTTP handling, authentication, routing), s: rows measured
that way (``api``) add it to the predicted time to first token. Source: the warm median time to first
token of Llama 3.1 8B on Groq's API, 157 ms (a ~700-token cached prompt, 64 tokens out, streamed, via
OpenRouter with the proxy's separately measured 337-ms floor subtracted; krabarena, 2026,
https://krabarena.org/claims/592e1fd1-27a7-4326-8c0f-b0de58f6ef54), less the physics of that request
(1.9 ms: its prefill and pipeline fill on 40 LPUs): 0.155 s, rounded down to 0.15 s. An 8B model's
prefill is so short that the measured first token is almost all API; the larger models' first tokens
(Groq's Llama 3.3 70B in the same benchmark, Cerebras' Llama 3.1 405B) are the check
(docs/serving_validation.md, "Wafer and LPU from their architecture")."""


def load_measurements() -> pd.DataFrame:
    """The published measurements (``data/serving_measurements.csv``) with their configuration ``group``."""
    with resources.files("speedtrap.validation.data").joinpath(MEASUREMENTS_FILE).open("rb") as f:
        table = pd.read_csv(f, keep_default_na=True)
    table["group"] = [group_of(row) for row in table.itertuples(index=False)]
    return table


def _text(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _number(value: Any) -> float | None:
    if value is None or value == "":
        return None
    number = float(value)
    return None if math.isnan(number) else number


def _flag(value: Any) -> bool:
    return _text(value).strip().lower() == "true"


def mode_of(row: Any) -> str:
    """``disaggregated`` (prefill on its own pool) or ``aggregated``."""
    return "disaggregated" if _number(row.prefill_chips) is not None else "aggregated"


def group_of(row: Any) -> str:
    """The configuration group a row belongs to: model × hardware × serving mode. Cross-validation
    holds out whole groups, so a row is never predicted from another point of its own curve."""
    return f"{row.model} | {row.hardware} | {mode_of(row)}"


@dataclass(frozen=True, slots=True)
class RowSpec:
    """What a row's prediction is computed from: the specs of one replica and the request shape."""

    hardware: Hardware
    llm: LLM
    chips: int
    parallel: Parallelism
    disaggregation: Disaggregation | None
    isl: float
    osl: float | None
    concurrency: float
    api_s: float = 0.0
    """The API request's own time before the first token (:data:`API_REQUEST_S` for a row measured
    through a provider's public API, ``api`` in the table; 0 for a benchmark beside the server), s."""


def _dtype(name: str, hardware: Hardware) -> str:
    """``name`` if the hardware computes in it, else the nearest wider dtype it has."""
    for dtype in (name, "fp8", "bf16"):
        if dtype in hardware.peak_tflop_s:
            return dtype
    return next(iter(hardware.peak_tflop_s))


def llm_overrides(row: Any, hardware: Hardware) -> dict[str, Any]:
    """The row's precisions as :class:`LLM` field overrides."""
    weights = _text(row.weights)
    experts = _text(row.experts) or weights
    weight_bytes, weight_dtype = PRECISIONS[weights]
    expert_bytes, expert_dtype = PRECISIONS[experts]
    compute = _dtype(_text(row.compute) or weight_dtype, hardware)
    overrides: dict[str, Any] = {
        "bytes_per_param": weight_bytes,
        "compute_dtype": compute,
        "kv_bytes_per_element": KV_BYTES[_text(row.kv) or "bf16"],
    }
    base = llm_preset(str(row.model))
    if base.is_moe:
        overrides["expert_bytes_per_param"] = expert_bytes
        expert_compute = _dtype(_text(row.expert_compute) or expert_dtype, hardware)
        overrides["expert_compute_dtype"] = expert_compute
    return overrides


def parallel_of(row: Any) -> Parallelism:
    """The row's parallel layout."""
    fields: dict[str, Any] = {"overlap_communication": _flag(row.overlap)}
    for column, field, kind in (
        ("attention_dp", "attention_data_parallel", int),
        ("expert_parallel", "expert_parallel", int),
        ("dispatch_bytes", "dispatch_bytes", float),
        ("chunk_tokens", "prefill_chunk_tokens", int),
    ):
        value = _number(getattr(row, column))
        if value is not None:
            fields[field] = kind(value)
    return Parallelism(**fields)


def disaggregation_of(row: Any) -> Disaggregation | None:
    """The row's prefill pool (``None``: prefill on the replica)."""
    chips = _number(row.prefill_chips)
    return None if chips is None else Disaggregation(prefill_chips=int(chips))


def row_spec(row: Any, hardware: Hardware | None = None) -> RowSpec:
    """The specs of one row; ``hardware`` replaces the catalogue's (e.g. with refitted factors: the
    model's precisions and the replica's chips depend only on the hardware's dtypes and memory)."""
    hw = hardware_preset(str(row.hardware)) if hardware is None else hardware
    llm = _row_llm(str(row.model), tuple(sorted(llm_overrides(row, hw).items())))
    osl = _number(row.osl)
    isl = float(row.isl)
    chips_value = _number(row.chips)
    concurrency = float(row.concurrency)
    if chips_value is None:
        context = isl + (osl or 0.0)
        chips = derive_chips_per_replica(hw, llm, batch=max(int(concurrency), 1), context_tokens=context)
    else:
        chips = int(chips_value)
    api_s = API_REQUEST_S if _flag(getattr(row, "api", "")) else 0.0
    return RowSpec(hw, llm, chips, parallel_of(row), disaggregation_of(row), isl, osl, concurrency, api_s)


@functools.lru_cache(maxsize=1024)
def _row_llm(model: str, overrides: tuple[tuple[str, Any], ...]) -> LLM:
    return llm_preset(model).with_overrides(dict(overrides))


def measured(row: Any) -> dict[str, float]:
    """The row's measured output tok/s per user, output tok/s per GPU and TTFT (NaN where not given);
    a per-GPU figure that counts input tokens is scaled by ``osl / (isl + osl)``."""
    per_gpu = _number(row.tok_s_per_gpu)
    osl = _number(row.osl)
    if per_gpu is not None and _flag(row.gpu_counts_input) and osl is not None:
        per_gpu *= osl / (float(row.isl) + osl)
    return {
        "tok_s_per_user": _number(row.tok_s_per_user) or math.nan,
        "tok_s_per_gpu": math.nan if per_gpu is None else per_gpu,
        "ttft_s": _number(row.ttft_s) or math.nan,
    }


def ttft_is_median(row: Any) -> bool:
    """Whether the row's time to first token is a median (``ttft_statistic``; else the mean)."""
    return _text(getattr(row, "ttft_statistic", "")).strip().lower() == "median"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def row_spec_toml(row: Any) -> str:
    """A ``speedtrap pareto --spec`` file that reproduces the row's prediction with the catalogue's
    hardware: ``speedtrap pareto --spec FILE --chips N --isl I --osl O --batch B`` (decode-only rows:
    ``--context I`` instead of ``--isl``/``--osl``)."""
    hw = hardware_preset(str(row.hardware))
    lines = ["[model]", f'preset = "{row.model}"']
    lines += [f"{key} = {_toml_value(value)}" for key, value in llm_overrides(row, hw).items()]
    lines += ["", "[hardware]", f'preset = "{row.hardware}"', "", "[parallel]"]
    layout = parallel_of(row).model_dump(exclude_defaults=True)
    lines += [f"{key} = {_toml_value(value)}" for key, value in layout.items()]
    pool = disaggregation_of(row)
    if pool is not None:
        lines += ["", "[disaggregation]", f"prefill_chips = {pool.prefill_chips}"]
    return "\n".join(lines) + "\n"
