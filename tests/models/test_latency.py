"""Latency percentiles of a run's requests, checked against a hand-made request table whose
percentiles are known, and against a simulated run's own columns."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from speedtrap.config import Scenario
from speedtrap.models import simulate
from speedtrap.models.latency import METRIC_COLUMNS, latency_percentiles, request_metrics


def hand_made() -> pd.DataFrame:
    """Backend "a": 100 requests, request i (1…100) with a queue wait of i/10 s, a time to first
    token of i s, 11 output tokens decoded in i/10 s (0.01·i s between tokens) and so done 1.1·i s
    after it arrived. Backend "b": 5 requests, times to first token 2, 4, 6, 8, 10 s, one of a single
    token (no time between tokens), the others of 5 tokens 0.4 s apart. Rows interleaved, "b"
    appearing second."""
    rows = []
    for i in range(1, 101):
        arrival = 10.0 * i
        rows.append(
            {"backend": "a", "tier": "standard", "arrival_s": arrival, "admitted_s": arrival + i / 10,
             "first_token_s": arrival + i, "done_s": arrival + 1.1 * i, "output_tokens": 11,
             "decode_s": 0.1 * i, "developer": i % 3, "task": i}
        )  # fmt: skip
        if i <= 5:
            tokens = 1 if i == 5 else 5
            rows.append(
                {"backend": "b", "tier": "fast", "arrival_s": arrival, "admitted_s": arrival,
                 "first_token_s": arrival + 2 * i, "done_s": arrival + 2 * i + 0.4 * (tokens - 1),
                 "output_tokens": tokens, "decode_s": 0.4 * (tokens - 1), "developer": 0, "task": i}
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_percentiles_per_backend_of_a_hand_made_table() -> None:
    latency = latency_percentiles(hand_made())
    assert list(latency) == ["a", "b"]
    a, b = latency["a"], latency["b"]
    assert a["requests"] == 100 and b["requests"] == 5
    # linear interpolation between order statistics of 1…100: p50 50.5, p90 90.1, p99 99.01
    assert a["ttft_s"] == pytest.approx({"p50": 50.5, "p90": 90.1, "p99": 99.01})
    assert a["tbt_s"] == pytest.approx({"p50": 0.505, "p90": 0.901, "p99": 0.9901})
    assert a["e2e_s"] == pytest.approx({"p50": 55.55, "p90": 99.11, "p99": 108.911})
    # 2, 4, 6, 8, 10: p50 6, p90 8 + 0.6·2, p99 8 + 0.96·2
    assert b["ttft_s"] == pytest.approx({"p50": 6.0, "p90": 9.2, "p99": 9.92})
    assert b["tbt_s"] == pytest.approx({"p50": 0.4, "p90": 0.4, "p99": 0.4})  # the 1-token request has none


def test_request_metrics_has_one_row_per_request() -> None:
    metrics = request_metrics(hand_made())
    assert list(metrics.columns) == list(METRIC_COLUMNS) and len(metrics) == 105
    first = metrics.iloc[0]
    assert (first["backend"], first["tier"], first["tokens"]) == ("a", "standard", 11)
    assert first[["queue_s", "ttft_s", "tbt_s", "e2e_s"]].to_list() == pytest.approx([0.1, 1.0, 0.01, 1.1])
    assert math.isnan(metrics[metrics["tokens"] == 1]["tbt_s"].iloc[0])


def test_no_requests_give_no_backends_and_a_metric_no_request_has_is_nan() -> None:
    assert latency_percentiles(hand_made().iloc[:0]) == {}
    one_token = hand_made().assign(output_tokens=1, decode_s=0.0)
    assert all(math.isnan(v) for v in latency_percentiles(one_token)["a"]["tbt_s"].values())


def test_a_simulated_runs_metrics_agree_with_its_request_table() -> None:
    result = simulate(Scenario(developers=2, horizon_s=3600.0), 3)
    requests = result.requests
    metrics = request_metrics(requests)
    np.testing.assert_allclose(metrics["ttft_s"], requests["ttft_s"])
    np.testing.assert_allclose(metrics["queue_s"], requests["queue_wait_s"])
    np.testing.assert_allclose(metrics["e2e_s"], requests["sojourn_s"])
    latency = latency_percentiles(requests)
    assert sum(entry["requests"] for entry in latency.values()) == len(requests)
    for entry in latency.values():
        assert entry["ttft_s"]["p50"] <= entry["ttft_s"]["p90"] <= entry["ttft_s"]["p99"]
