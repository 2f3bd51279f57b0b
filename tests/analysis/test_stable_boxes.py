"""Boxes that survive resampling (:mod:`speedtrap.analysis.stable_boxes`): a synthetic case with a known
box (the cases are the samples with a ≥ 0.7, 3% of the labels flipped at random) is reported, with its
bound within 0.05 of the true one; labels drawn at random (30% cases, no box) give "no stable box";
too few samples give none either."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from speedtrap.analysis.stable_boxes import (
    MIN_BOX_MASS,
    MIN_STABLE_SAMPLES,
    NO_STABLE_BOX,
    stable_prim_box,
)


def inputs(n: int, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.uniform(0, 1, n), "b": rng.uniform(0, 1, n)})


def test_a_known_box_survives_resampling() -> None:
    x = inputs(120)
    flip = np.random.default_rng(8).uniform(size=len(x)) < 0.03
    found = stable_prim_box(x, (x["a"].to_numpy() >= 0.7) ^ flip)
    assert found.stable, found.reasons
    assert found.box is not None and found.box.mass >= MIN_BOX_MASS
    (bound,) = found.box.bounds
    assert bound.path == "a" and bound.low == pytest.approx(0.7, abs=0.05) and bound.high is None
    assert found.quasi_p["a"] < 0.05 and found.reproduced["a"] >= 0.5 and found.bootstrap_overlap >= 0.5
    assert found.describe("flips").startswith("flips when a ≥ 0.")


def test_noise_gives_no_stable_box() -> None:
    x = inputs(120)
    found = stable_prim_box(x, np.random.default_rng(9).uniform(size=len(x)) < 0.3)
    assert not found.stable and found.reasons
    assert found.describe("flips").startswith(NO_STABLE_BOX)


def test_too_few_samples_give_no_stable_box() -> None:
    x = inputs(MIN_STABLE_SAMPLES - 1)
    found = stable_prim_box(x, x["a"].to_numpy() >= 0.5)
    assert not found.stable and "fewer than" in found.reasons[0]
    assert stable_prim_box(x, np.zeros(len(x), dtype=bool)).box is None
