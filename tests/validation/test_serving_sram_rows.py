"""The wafer and LPU rows of the measured table, row by row: each published per-user speed and first
token against the architecture's prediction (layers over wafers by SRAM, a sourced hop, the API
request term) on the stored factors, within the ±25% band the Cerebras 8B row was first held to
(tests/validation/test_calibration.py). A row outside it is a strict expected failure with its figure."""

from __future__ import annotations

import math

import pytest

from speedtrap.validation.serving_fit import predict_at_concurrency
from speedtrap.validation.serving_table import API_REQUEST_S, load_measurements, measured

BAND = 0.25


def _miss(row_id: str, metric: str, reason: str) -> object:
    return pytest.param(row_id, metric, marks=pytest.mark.xfail(strict=True, reason=reason))


CASES = [
    _miss("cerebras-l31-8b", "tok_s_per_user", "measured: 2,279 tok/s predicted against 1,800 (+27%)"),
    _miss(
        "cerebras-l31-70b",
        "tok_s_per_user",
        "measured: 844 tok/s predicted against 450 (+88%); Cerebras' own later 2,100 on the same four "
        "wafers is −60% (the software, not the wafers, changed)",
    ),
    _miss(
        "cerebras-l31-70b-2024-10",
        "tok_s_per_user",
        "measured: 844 tok/s predicted against 2,100 (−60%); the same model and wafers ran 450 two "
        "months before",
    ),
    _miss("cerebras-l31-405b", "tok_s_per_user", "measured: 522 tok/s on 21 wafers against 969 (−46%)"),
    _miss(
        "cerebras-l31-405b",
        "ttft_s",
        "measured: 0.152 s predicted (0.15 s API request, 2.4 ms prefill and pipeline fill) against "
        "0.24 s (−36%)",
    ),
    ("aa-cerebras-gptoss-120b", "tok_s_per_user"),
    _miss("semi-cerebras-glm-4.7", "tok_s_per_user", "measured: 799 tok/s predicted against 1,201 (−33%)"),
    ("semi-cerebras-kimi-k2.6", "tok_s_per_user"),
    _miss(
        "cerebras-llama4-maverick",
        "tok_s_per_user",
        "measured: 1,513 tok/s predicted against 2,500 (−40%; drafting likely, undisclosed)",
    ),
    ("groq-llama-2-7b", "tok_s_per_user"),
    ("groq-llama-2-70b", "tok_s_per_user"),
    ("groq-mixtral-8x7b", "tok_s_per_user"),
    ("krabarena-groq-llama-3.3-70b", "ttft_s"),
]


@pytest.fixture(scope="module")
def rows():
    table = load_measurements()
    return {row.id: row for row in table.itertuples(index=False)}


@pytest.mark.parametrize(("row_id", "metric"), CASES)
def test_published_wafer_and_lpu_figure(rows, row_id: str, metric: str) -> None:
    row = rows[row_id]
    truth = measured(row)[metric]
    assert not math.isnan(truth)
    predicted = predict_at_concurrency(row)[metric]
    assert abs(predicted / truth - 1.0) <= BAND


def test_every_published_sram_figure_is_checked(rows) -> None:
    sram = [r for r in rows.values() if r.hardware in ("wse-3", "lpu")]
    checked = {(c.values[0], c.values[1]) if hasattr(c, "values") else c for c in CASES}
    for row in sram:
        for metric, value in measured(row).items():
            if not math.isnan(value):
                assert (row.id, metric) in checked, (row.id, metric)


def test_api_rows_first_token_carries_the_api_request_and_the_physics(rows) -> None:
    row = rows["cerebras-l31-405b"]
    assert str(row.api).lower() == "true"
    local = row._replace(api="")
    with_api, without = predict_at_concurrency(row), predict_at_concurrency(local)
    assert with_api["ttft_s"] - without["ttft_s"] == pytest.approx(API_REQUEST_S, rel=1e-6)
    assert with_api["tok_s_per_user"] == pytest.approx(without["tok_s_per_user"], rel=1e-6)
    assert 0 < without["ttft_s"] < 0.01  # the wafers' prefill and pipeline fill: milliseconds
    # the benchmark rows beside the server carry no API term
    assert not any(str(r.api).lower() == "true" for r in rows.values() if r.source == "InferenceX")
