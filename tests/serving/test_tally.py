"""RequestTally: the summary's request means equal the request table's, bit for bit."""

from __future__ import annotations

import numpy as np
import pandas as pd

from speedtrap.models.results import request_means
from speedtrap.serving.request import Request, RequestTally, record, records_frame, tally_means


def finished_requests(rng: np.random.Generator, n: int, first_id: int) -> list[Request]:
    """``n`` finished requests in a shuffled completion order, arrivals with ties."""
    arrivals = np.sort(rng.choice(np.arange(n) * 0.37, size=n))  # repeated times: ties
    out = []
    for i, arrival in enumerate(arrivals):
        wait, prefill, decode = rng.exponential(1.0, 3) * (rng.random(3) < 0.7)
        output = int(rng.integers(1, 400))
        out.append(
            Request(
                id=first_id + i,
                tier="standard",
                input_tokens=1000,
                cached_tokens=500,
                output_tokens=output,
                arrival_s=float(arrival),
                admitted_s=float(arrival + wait),
                first_token_s=float(arrival + wait + prefill),
                done_s=float(arrival + wait + prefill + decode),
                replica=0,
                cost_usd=float(rng.random() * 1e-3),
            )
        )
    return [out[i] for i in rng.permutation(n)]


def test_tally_means_equal_the_request_tables_bit_for_bit() -> None:
    rng = np.random.default_rng(13)
    pools = [finished_requests(rng, 3000, 0), finished_requests(rng, 500, 0), []]
    tallies = []
    for done in pools:
        tally = RequestTally()
        tally.add(done)
        tallies.append(tally)
    frame = pd.concat([records_frame([record(r) for r in done]) for done in pools], ignore_index=True)
    frame = frame.sort_values("arrival_s", kind="stable", ignore_index=True)
    assert frame["arrival_s"].duplicated().any()
    expected = request_means(frame)
    got = tally_means(tallies)
    assert {k: float(v).hex() for k, v in got.items()} == {k: float(v).hex() for k, v in expected.items()}


def test_no_requests_give_zero_cost_and_nan_means() -> None:
    got = tally_means([RequestTally()])
    assert got["requests"] == 0.0 and got["usd_total"] == 0.0
    assert all(np.isnan(got[k]) for k in ("mean_queue_wait_s", "mean_ttft_s", "mean_decode_tok_s"))
