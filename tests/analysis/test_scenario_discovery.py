"""Scenario discovery on a synthetic function with a known box.

The cases are the samples inside 0.2 ≤ a ≤ 0.6 and b ≥ 0.3 (c is irrelevant), 2 000 uniform samples,
5% of the labels flipped at random. Tolerances fixed before the first run: each recovered bound within
0.05 of the true one, the irrelevant input left free (or cut within 0.05 of its ends), coverage and
density at least 0.8, and PRIM and CART holding mostly the same samples (Jaccard ≥ 0.8).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from speedtrap.analysis.scenario_discovery import Box, box_agreement, cart_box, prim_box

TRUE = {"a": (0.2, 0.6), "b": (0.3, None)}
TOLERANCE = 0.05


@pytest.fixture(scope="module")
def sample() -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(20260)
    x = pd.DataFrame({name: rng.uniform(0.0, 1.0, 2_000) for name in ("a", "b", "c")})
    inside = (x["a"] >= 0.2) & (x["a"] <= 0.6) & (x["b"] >= 0.3)
    noise = rng.uniform(size=len(x)) < 0.05
    return x, (inside.to_numpy() ^ noise)


def check_recovered(box: Box | None) -> None:
    assert box is not None
    bounds = {b.path: b for b in box.bounds}
    assert set(bounds) <= {"a", "b", "c"}
    for path, (low, high) in TRUE.items():
        found = bounds[path]
        for true, got in ((low, found.low), (high, found.high)):
            if true is None:
                assert got is None or got >= 1.0 - TOLERANCE
            else:
                assert got is not None and abs(got - true) <= TOLERANCE, (path, true, got)
    if "c" in bounds:  # the irrelevant input: free, or cut only at its ends
        assert (bounds["c"].low or 0.0) <= TOLERANCE and (bounds["c"].high or 1.0) >= 1.0 - TOLERANCE
    assert box.coverage >= 0.8 and box.density >= 0.8


def test_prim_recovers_the_known_box(sample: tuple[pd.DataFrame, np.ndarray]) -> None:
    check_recovered(prim_box(*sample))


def test_cart_recovers_the_known_box(sample: tuple[pd.DataFrame, np.ndarray]) -> None:
    check_recovered(cart_box(*sample))


def test_prim_and_cart_agree(sample: tuple[pd.DataFrame, np.ndarray]) -> None:
    x, y = sample
    prim, cart = prim_box(x, y), cart_box(x, y)
    assert prim is not None and cart is not None
    assert box_agreement(prim, cart, x) >= 0.8


def test_a_box_in_words(sample: tuple[pd.DataFrame, np.ndarray]) -> None:
    box = cart_box(*sample)
    assert box is not None
    text = box.describe("holds", {"a": "review detection", "b": "task hours"})
    assert text.startswith("holds when review detection is between 0.2")
    assert "task hours ≥ 0.3" in text and f"coverage {box.coverage:.2f}, density {box.density:.2f}" in text


def test_no_cases_no_box_and_all_cases_everywhere() -> None:
    x = pd.DataFrame({"a": np.linspace(0, 1, 40)})
    assert prim_box(x, np.zeros(40, dtype=bool)) is None
    assert cart_box(x, np.zeros(40, dtype=bool)) is None
    everywhere = prim_box(x, np.ones(40, dtype=bool))
    assert everywhere is not None and everywhere.bounds == () and everywhere.coverage == 1.0
    assert (
        everywhere.describe()
        == "holds everywhere in the sampled ranges (coverage 1.00, density 1.00, 40 samples)"
    )
    # half the cases, spread over the whole range: a box of the whole space is no boundary
    spread = prim_box(x, (np.arange(40) % 2).astype(bool))
    assert spread is not None and not spread.bounds
    assert spread.describe("pays").startswith("no boundary: no region of the sampled ranges")


def test_inputs_must_be_numbers() -> None:
    with pytest.raises(ValueError, match="not so: k"):
        prim_box(pd.DataFrame({"k": ["x", "y"]}), [True, False])
    with pytest.raises(ValueError, match="3 rows and y 2"):
        cart_box(pd.DataFrame({"a": [1.0, 2.0, 3.0]}), [True, False])
