"""The sensitivity report's verdicts on a constructed case: which targets constrain a parameter,
which parameters are fitted, dominant and flagged."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from speedtrap.analysis.share_sensitivity import (
    DOMINANCE_THRESHOLD,
    FIT_THRESHOLD,
    MIN_TARGET_Q2,
    constraining_targets,
    dominance_table,
)


def indices(st: dict[str, float], *, width: float = 0.02) -> pd.DataFrame:
    """An indices frame with S1 = ST and an interval of ± ``width``."""
    return pd.DataFrame(
        {
            "factor": list(st),
            "S1": list(st.values()),
            "S1_low": [v - width for v in st.values()],
            "S1_high": [v + width for v in st.values()],
            "ST": list(st.values()),
            "ST_low": [v - width for v in st.values()],
            "ST_high": [v + width for v in st.values()],
        }
    )


SHARES = {
    "waiting": indices({"a": 0.60, "b": 0.30, "c": 0.05, "d": 0.05}),
    "fixing": indices({"a": 0.10, "b": 0.05, "c": 0.25, "d": 0.10}),
}
TARGETS = {
    "t_good": indices({"a": 0.50, "b": 0.11, "c": 0.0, "d": 0.30}),  # b: lower bound 0.09 < 0.10
    "t_poor": indices({"a": 0.0, "b": 0.90, "c": 0.90, "d": 0.0}),  # its emulator does not predict
}
Q2 = {"t_good": 0.8, "t_poor": MIN_TARGET_Q2 - 0.01}


def test_a_target_constrains_where_the_lower_bound_clears_the_bar_and_its_emulator_predicts() -> None:
    found = constraining_targets(TARGETS, Q2)
    assert found == {
        "a": [("t_good", pytest.approx(0.48))],
        "b": [],
        "c": [],
        "d": [("t_good", pytest.approx(0.28))],
    }
    assert constraining_targets(TARGETS, {"t_good": 0.8, "t_poor": 0.9})["c"] == [
        ("t_poor", pytest.approx(0.88))
    ]
    assert constraining_targets(TARGETS, {"t_good": math.nan})["a"] == []  # no usable emulator: nothing
    assert FIT_THRESHOLD == 0.10 and DOMINANCE_THRESHOLD == 0.20  # the bars the docs state


def test_dominance_table_flags_the_unfitted_dominant_parameters() -> None:
    table = dominance_table(SHARES, TARGETS, Q2).set_index("parameter")
    assert list(table.index) == ["a", "b", "c", "d"]  # by the larger total index over the shares
    assert table.loc["a", "max_ST"] == 0.60 and table.loc["c", "max_ST"] == 0.25
    assert table.loc["a", "fitted_to"] == "t_good" and bool(table.loc["a", "fitted"])
    assert bool(table.loc["a", "dominant"]) and not bool(table.loc["a", "flag"])  # dominant, fitted
    assert bool(table.loc["b", "flag"])  # 0.30 on waiting, and t_good's bound (0.09) is below 0.10
    assert bool(table.loc["c", "flag"])  # 0.25 on fixing; only the poor emulator "constrains" it
    assert not bool(table.loc["d", "dominant"]) and bool(table.loc["d", "fitted"])
    assert table.loc["b", "waiting:ST_low"] == pytest.approx(0.28)
    assert table.loc["c", "fixing:S1_high"] == pytest.approx(0.27)


def test_a_nan_index_is_never_dominant_and_bad_frames_are_refused() -> None:
    shares = {"waiting": indices({"a": math.nan, "b": 0.5})}
    table = dominance_table(shares, {}, {}).set_index("parameter")
    assert list(table.index) == ["b", "a"] and not bool(table.loc["a", "dominant"])
    with pytest.raises(ValueError, match="at least one share"):
        dominance_table({}, {}, {})
    with pytest.raises(ValueError, match="missing columns ST_low"):
        dominance_table({"waiting": indices({"a": 0.1}).drop(columns="ST_low")}, {}, {})
    with pytest.raises(ValueError, match="parameters differ"):
        dominance_table({"waiting": indices({"a": 0.1}), "fixing": indices({"b": 0.1})}, {}, {})
