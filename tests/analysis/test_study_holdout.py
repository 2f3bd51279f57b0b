"""Leave-one-study-out on a final check (speedtrap.analysis.study_holdout): a study's own targets
never decide which sets predict it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from speedtrap.analysis.study_holdout import StudyTarget, leave_one_study_out


def _check() -> pd.DataFrame:
    # four checked sets; study A rules out sets 2 and 3, study B rules out set 0
    return pd.DataFrame(
        {
            "a": [1.0, 1.1, 5.0, 6.0],
            "I:a": [0.5, 0.4, 9.0, 8.0],
            "b": [50.0, 10.0, 11.0, 12.0],
            "I:b": [7.0, 0.2, 0.3, 0.1],
        }
    )


TARGETS = [StudyTarget("ta", "a", "A", 1.0, 0.8, 1.2), StudyTarget("tb", "b", "B", 10.0, 8.0, 12.0)]


def test_each_study_is_predicted_by_the_sets_the_others_keep() -> None:
    table = leave_one_study_out(_check(), TARGETS, cutoff=3.0).set_index("study")
    # without A, B keeps sets 1–3: their mean of a is (1.1 + 5 + 6)/3, outside A's tolerance
    assert table.loc["A", "members_without"] == 3 and table.loc["A", "members_with"] == 1
    assert np.isclose(table.loc["A", "predicted"], (1.1 + 5.0 + 6.0) / 3)
    assert not table.loc["A", "predicted_within"]
    # without B, A keeps sets 0 and 1: b's mean (50 + 10)/2 = 30, outside B's tolerance
    assert table.loc["B", "members_without"] == 2 and np.isclose(table.loc["B", "predicted"], 30.0)
    assert not table.loc["B", "predicted_within"]
    assert table.loc["B", "member_low"] <= table.loc["B", "predicted"] <= table.loc["B", "member_high"]


def test_a_study_the_others_pin_is_predicted() -> None:
    check = _check().assign(**{"I:b": [0.1, 0.2, 9.0, 9.0]})  # B now also rules out sets 2 and 3
    table = leave_one_study_out(check, TARGETS, cutoff=3.0).set_index("study")
    assert table.loc["A", "members_without"] == 2 and table.loc["A", "predicted_within"]
