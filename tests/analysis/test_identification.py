"""The span share of each parameter over its sourced range (speedtrap.analysis.identification), and
the count the docs state for the stored ensemble."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from speedtrap.analysis.identification import UNIDENTIFIED_SPAN, parameter_spans
from speedtrap.experiments.ensemble import default_ensemble
from speedtrap.validation.parameters import load_parameters

ROOT = Path(__file__).resolve().parents[2]


def test_span_is_measured_on_each_parameter_scale() -> None:
    parameters = pd.DataFrame(
        [
            {"path": "lin", "low": 0.0, "high": 10.0, "scale": "linear"},
            {"path": "log", "low": 1.0, "high": 100.0, "scale": "log"},
            {"path": "absent", "low": 0.0, "high": 1.0, "scale": "linear"},
        ]
    )
    members = pd.DataFrame({"lin": [2.0, 5.0, 4.0], "log": [1.0, 10.0, 100.0]})
    table = parameter_spans(members, parameters).set_index("path")
    assert "absent" not in table.index
    assert table.loc["lin", "span"] == pytest.approx(0.3)
    assert table.loc["log", "span"] == pytest.approx(1.0)  # 1 to 100 on the log scale: all of it
    assert table.loc["log", "unidentified"] and not table.loc["lin", "unidentified"]
    assert list(table.index) == ["log", "lin"]  # widest first


def test_a_single_member_identifies_nothing_it_spans_zero() -> None:
    parameters = pd.DataFrame([{"path": "x", "low": 1.0, "high": 2.0, "scale": "linear"}])
    table = parameter_spans(pd.DataFrame({"x": [1.5]}), parameters)
    assert table.loc[0, "span"] == 0.0 and not table.loc[0, "unidentified"]


def test_the_docs_state_the_stored_ensembles_count() -> None:
    """docs/validation.md's "What the data leave open" states how many of the behaviour parameters
    span at least 80% of their range over the stored ensemble: recomputed here from the ensemble."""
    members = default_ensemble()
    assert members, "no stored ensemble"
    parameters = load_parameters()
    table = parameter_spans(pd.DataFrame(members), parameters)
    count = int(table["unidentified"].sum())
    text = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    section = text[text.index("### What the data leave open") :]
    stated = re.search(r"(\d+) of the (\d+) behaviour parameters span at least 80%", section)
    assert stated, "the count is not stated"
    assert (int(stated.group(1)), int(stated.group(2))) == (count, len(table)), table
    concentrated = re.search(r"(\d+) of the (\d+) are concentrated", section)
    assert concentrated, "the concentrated count is not stated"
    assert (int(concentrated.group(1)), int(concentrated.group(2))) == (
        int(table["concentrated"].sum()),
        len(table),
    ), table
    assert UNIDENTIFIED_SPAN == 0.8
    assert np.isfinite(table["span"]).all()


def test_uniform_range_cdf_is_the_sample_range_law() -> None:
    """The closed form against 200,000 simulated ranges of 13 uniform draws (a 99.9% binomial band), and
    its ends."""
    import numpy as np

    from speedtrap.analysis.identification import uniform_range_cdf

    rng = np.random.default_rng(7)
    draws = rng.random((200_000, 13))
    ranges = draws.max(axis=1) - draws.min(axis=1)
    for r in (0.5, 0.8, 0.95):
        p = uniform_range_cdf(r, 13)
        assert abs(float(np.mean(ranges <= r)) - p) < 3.3 * (p * (1 - p) / 200_000) ** 0.5 + 1e-9
    assert uniform_range_cdf(0.0, 5) == 0.0 and uniform_range_cdf(1.0, 5) == 1.0
    assert uniform_range_cdf(0.3, 1) == 1.0
    with pytest.raises(ValueError, match="span must lie"):
        uniform_range_cdf(1.5, 4)


def test_concentration_follows_the_member_count() -> None:
    """The same span of 0.7 is chance with 4 members and concentration with 34."""
    parameters = pd.DataFrame([{"path": "x", "low": 0.0, "high": 1.0, "scale": "linear"}])
    few = parameter_spans(pd.DataFrame({"x": np.linspace(0.1, 0.8, 4)}), parameters).iloc[0]
    many = parameter_spans(pd.DataFrame({"x": np.linspace(0.1, 0.8, 34)}), parameters).iloc[0]
    assert few["span"] == pytest.approx(0.7) and many["span"] == pytest.approx(0.7)
    assert not few["concentrated"] and many["concentrated"]
    assert many["p_uniform"] < 1e-3 < few["p_uniform"]
