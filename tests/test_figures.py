"""The canonical experiments' figures, built from small synthetic run tables (no simulation): the
break-even map sits on numeric axes, waits are on log axes, shares are in %, starved groups are
marked, every band and error bar is named, and the headline figure shows the outcomes that matter."""

from __future__ import annotations

import math
from collections.abc import Iterator

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.collections import FillBetweenPolyCollection, QuadMesh
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from speedtrap.config.ledger import LEDGER_CATEGORIES
from speedtrap.experiments.canonical import break_even as be
from speedtrap.experiments.canonical import fast_mode_externality as fme
from speedtrap.experiments.canonical import headline, load_spec
from speedtrap.plots import plot_line_panels

SEEDS = (1, 2, 3)
SPEEDS = (1.0, 2.0, 6.0, 20.0)
MULTS = (1.0, 1.2, 1.5, 2.0)


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    plt.close("all")


def _texts(fig: Figure) -> list[str]:
    """Every legend entry, axis label and title of ``fig`` (one string each, line breaks folded)."""
    found = [fig.get_suptitle()]
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    for legend in legends:
        found += [t.get_text() for t in legend.get_texts()]
    for ax in fig.axes:
        found += [ax.get_xlabel(), ax.get_ylabel(), ax.get_title()]
    return [" ".join(t.split()) for t in found if t]


def _has_bands(ax: Axes) -> bool:
    return any(isinstance(c, FillBetweenPolyCollection) for c in ax.collections)


def _assert_shares_in_percent(fig: Figure) -> None:
    """Any axis whose label speaks of a share says "%", and what it draws lies in 0–100."""
    for ax in fig.axes:
        for label, column in ((ax.get_xlabel(), 0), (ax.get_ylabel(), 1)):
            if "share" not in label.lower():
                continue
            assert "%" in label, label
            data = np.concatenate(
                [np.asarray(line.get_xydata(), dtype=float)[:, column] for line in ax.get_lines()]
            )
            data = data[np.isfinite(data)]
            assert len(data) and data.min() >= 0.0 and data.max() <= 100.0, label
            assert data.max() > 1.0, f"{label}: drawn as a fraction"


# --- break_even -------------------------------------------------------------------------------


def _break_even_runs(wide_at: float = 20.0) -> pd.DataFrame:
    """Paired runs of the break-even design: tasks per developer-day and $ per task are the seed's
    reference value × a ratio; at speed-up ``wide_at`` the ratios scatter by ±0.5 between seeds
    (intervals that include 1 on both sides of the crossing), elsewhere by ±0.01."""
    spec = load_spec("break_even")
    speed, mult = spec.factor_paths
    rows = []
    for s in SPEEDS:
        for m in MULTS:
            for k, seed in enumerate(SEEDS):
                noise = (k - 1) * (0.5 if s == wide_at else 0.01)
                reference = s == 1.0 and m == 1.0
                tasks = 1.0 if reference else (1 + 0.05 * math.log2(s)) * (1 - 0.5 * (m - 1)) + noise
                cost = 1.0 if reference else 1 + 0.3 * (m - 1) + noise
                rows.append(
                    {"seed": seed, speed: s, mult: m}
                    | {"tasks_per_dev_day": (10 + seed) * tasks, "usd_per_task": (5 + seed) * cost}
                )
    return pd.DataFrame(rows)


def _break_even_map(contour: pd.DataFrame | None = None) -> tuple[Figure, Axes, pd.DataFrame]:
    spec = load_spec("break_even")
    relative = be.relative_table(_break_even_runs(), spec)
    if contour is None:
        contour = pd.DataFrame(columns=["speedup", "metric", "m_star"])
    fig, ax = plt.subplots(layout="constrained")
    be.plot_map(relative, contour, "tasks_per_dev_day", ax)
    return fig, ax, relative[relative["metric"] == "tasks_per_dev_day"]


def test_break_even_map_sits_on_numeric_axes_at_the_true_speed_ups() -> None:
    fig, ax, relative = _break_even_map()
    assert ax.get_xscale() == "log"
    assert list(ax.get_xticks()) == list(SPEEDS)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1×", "2×", "6×", "20×"]
    assert list(ax.get_yticks()) == list(MULTS)
    (mesh,) = [c for c in ax.collections if isinstance(c, QuadMesh)]
    coordinates = mesh.get_coordinates()
    x_edges, y_edges = coordinates[0, :, 0], coordinates[:, 0, 1]
    # cell edges at the geometric midpoints of the speed-ups, the arithmetic ones of the multipliers
    assert list(x_edges[1:-1]) == pytest.approx(np.sqrt(np.array(SPEEDS[:-1]) * np.array(SPEEDS[1:])))
    assert list(y_edges[1:-1]) == pytest.approx((np.array(MULTS[:-1]) + np.array(MULTS[1:])) / 2)
    grid = relative.pivot(index="failure_multiplier", columns="speedup", values="relative")
    assert list(np.asarray(mesh.get_array()).ravel()) == pytest.approx(grid.to_numpy().ravel())
    label = fig.axes[-1].get_ylabel()  # the colour bar
    assert "ratio" in label and "×" in label and "relative to 1× speed, 1.0× mistakes" in label


def test_break_even_lines_are_drawn_at_their_true_coordinates() -> None:
    contour = pd.DataFrame(
        {"speedup": list(SPEEDS), "metric": "tasks_per_dev_day", "m_star": [1.0, 1.1, 1.25, math.inf]}
    )
    _, ax, relative = _break_even_map(contour)
    lines = {line.get_label(): line for line in ax.get_lines()}
    analytic = lines["break-even, analytic model"]
    assert list(analytic.get_xdata()) == [1.0, 2.0, 6.0]  # m* = ∞ (speed always pays) is not drawn
    assert list(analytic.get_ydata()) == [1.0, 1.1, 1.25]
    (simulated,) = [line for label, line in lines.items() if str(label).startswith("break-even, simulation")]
    crossings = be.simulated_break_even(relative, "tasks_per_dev_day").set_index("speedup")
    assert list(simulated.get_xdata()) == list(SPEEDS)
    y = np.asarray(simulated.get_ydata(), dtype=float)
    assert list(y[:3]) == pytest.approx(crossings.loc[[1.0, 2.0, 6.0], "m_star_simulated"].to_numpy())
    # at 20× both cells around the crossing have 95% CIs that include 1: no line there
    assert np.isfinite(crossings.loc[20.0, "m_star_simulated"]) and np.isnan(y[3])
    assert "95% CI" in str(simulated.get_label()) and "n=3" in str(simulated.get_label())


def test_break_even_cells_show_their_values_and_the_article_point_hides_none() -> None:
    fig, ax, relative = _break_even_map()
    texts = [(t.get_text(), t.xy) for t in ax.texts]
    for row in relative.itertuples():
        at = [xy for text, xy in texts if text == f"{row.relative:.2f}"]
        assert any(x == row.speedup for x, _ in at), (row.speedup, row.failure_multiplier)
    # the article's cell (6×, 1.2×) is outlined, its star on the outline's corner, not on the value
    outlines = [p for p in ax.patches if isinstance(p, Rectangle) and not p.get_fill()]
    assert len(outlines) == 1
    x0, y0 = outlines[0].get_xy()
    assert x0 < 6.0 < x0 + outlines[0].get_width() and y0 < 1.2 < y0 + outlines[0].get_height()
    (star,) = [line for line in ax.get_lines() if line.get_marker() == "*"]
    assert (star.get_xdata()[0], star.get_ydata()[0]) != (6.0, 1.2)
    assert any("95% t-interval" in t and "paired" in t for t in _texts(fig))


# --- fast_mode_externality --------------------------------------------------------------------

SHARES = (0.0, 0.1, 0.5, 0.75, 1.0)


def _fleet_runs() -> pd.DataFrame:
    """Runs with the columns of :func:`fleet_outcomes`: waits grow by orders of magnitude with
    adoption; at 75% the standard developers complete no task (starved)."""
    rows = []
    for share in SHARES:
        for k, seed in enumerate(SEEDS):
            wiggle = 1 + 0.05 * (k - 1)
            row: dict[str, float] = {fme.SHARE: share, "seed": seed}
            for group, present in (("standard", share < 1), ("fast", share > 0)):
                wait = (1.0 if group == "standard" else 3.0) * 10 ** (4 * share) * wiggle
                starved = group == "standard" and share == 0.75
                values = {
                    "queue_wait_s": wait / 2,
                    "ttft_s": wait,
                    "decode_tok_s": (75.0 if group == "standard" else 186.0) * wiggle,
                    "tasks_per_dev_day": 0.0 if starved else (6.0 - 2 * share) * wiggle,
                    "waiting_share": (0.05 if starved else 0.4 + 0.1 * share) * wiggle,
                }
                row |= {f"{group}_{k}": v if present else math.nan for k, v in values.items()}
            row |= {
                "tasks_per_dev_day": (6.0 - 2 * share) * wiggle,
                "usd_per_task": 9.0 * (1 + 5 * share) * wiggle,
                "backend_utilization": 0.8,
                "provider_tok_s_per_gpu": (190.0 - 110 * share) * wiggle,
                "revenue_usd_per_gpu_hour": (160.0 + 220 * share) * wiggle,
            }
            rows.append(row)
    return pd.DataFrame(rows)


def _externality() -> Figure:
    return fme.plot_externality(_fleet_runs(), load_spec("fast_mode_externality"))


def _panel(fig: Figure, words: str) -> Axes:
    (ax,) = [ax for ax in fig.axes if words in ax.get_ylabel()]
    return ax


def test_fast_mode_waits_are_on_a_log_axis() -> None:
    fig = _externality()
    ttft = _panel(fig, "first token")
    assert ttft.get_yscale() == "log"
    assert "log" in ttft.get_ylabel()
    assert all(ax.get_yscale() == "linear" for ax in fig.axes if ax is not ttft)


def test_fast_mode_shares_are_in_percent_on_both_axes() -> None:
    fig = _externality()
    _assert_shares_in_percent(fig)
    waiting = _panel(fig, "waiting")
    assert waiting.get_ylabel() == "share of time waiting (%)"
    for ax in fig.axes:
        assert ax.get_xlabel() == "developers on the fast tier (%)"
        assert list(ax.get_xticks()) == [100 * s for s in SHARES]


def test_fast_mode_starved_group_is_marked_and_named() -> None:
    fig = _externality()
    assert fme.starved_shares(_fleet_runs(), "standard") == [0.75]
    assert fme.starved_shares(_fleet_runs(), "fast") == []
    for words in ("tasks per developer-day", "waiting", "first token", "decode"):
        marks = [line for line in _panel(fig, words).get_lines() if line.get_marker() == "X"]
        xs = [x for line in marks for x in line.get_xdata()]
        assert xs == [75.0], words  # the standard group at 75% adoption, and nowhere else
    (legend,) = fig.legends
    assert any(t.get_text().startswith("starved: < 0.01 tasks per developer-day") for t in legend.get_texts())


def test_fast_mode_bands_are_named() -> None:
    fig = _externality()
    assert all(_has_bands(ax) for ax in fig.axes)
    (legend,) = fig.legends
    bands = [" ".join(t.get_text().split()) for t in legend.get_texts() if t.get_text().startswith("bands")]
    assert bands == ["bands: 95% t-interval over 3 replications (unpaired; only 3 replications: unreliable)"]


# --- headline ---------------------------------------------------------------------------------


def _headline_runs() -> pd.DataFrame:
    rows = []
    for b, backend in enumerate(("gpu-batched", "gpu-fast", "manual")):
        for k, seed in enumerate(SEEDS):
            shares = np.full(len(LEDGER_CATEGORIES), 1.0 + b + 0.1 * k)
            shares /= shares.sum()
            rows.append(
                {"backend": backend, "seed": seed}
                | {f"share_{c}": v for c, v in zip(LEDGER_CATEGORIES, shares, strict=True)}
                | {
                    "tasks_per_dev_day": 6.0 + b + 0.2 * k,
                    "usd_per_task": 0.0 if backend == "manual" else 9.0 * (1 + 5 * b) + k,
                }
            )
    return pd.DataFrame(rows)


def test_headline_figure_shows_the_ledger_and_the_outcomes_with_named_intervals() -> None:
    fig = headline.plot_headline(_headline_runs(), load_spec("headline"))
    ledger, tasks, cost = fig.axes
    assert ledger.get_xlabel() == "hours per developer-day"
    assert tasks.get_ylabel() == "tasks per developer-day"
    assert "$ per task" in cost.get_ylabel()
    for ax in (ledger, tasks, cost):
        legend = ax.get_legend()
        assert legend is not None
        notes = [" ".join(t.get_text().split()) for t in legend.get_texts() if "95%" in t.get_text()]
        assert notes == ["error bars: 95% t-interval over 3 runs (unpaired; only 3 runs: unreliable)"]
    means = _headline_runs().groupby("backend", sort=False)["tasks_per_dev_day"].mean()
    heights = [bar.get_height() for bar in tasks.patches]
    assert heights == pytest.approx(list(means))


# --- every figure -----------------------------------------------------------------------------


def test_line_panels_draw_shares_in_percent_and_name_their_bands() -> None:
    runs = _headline_runs()
    runs["sessions"] = [1, 2, 4] * 3
    runs = pd.concat([runs, runs.assign(seed=runs["seed"] + 10)], ignore_index=True)
    fig = plot_line_panels(
        runs,
        "sessions",
        [("tasks_per_dev_day", "tasks per developer-day"), ("share_fixing", "share of time fixing (%)")],
        hue="backend",
        percent={"share_fixing"},
    )
    _assert_shares_in_percent(fig)
    assert all(_has_bands(ax) for ax in fig.axes)
    assert any(t.startswith("bands: 95% t-interval over 2 runs") for t in _texts(fig))
    with pytest.raises(ValueError, match="'%' in its axis label"):
        plot_line_panels(
            runs, "sessions", [("share_fixing", "share of time fixing")], percent={"share_fixing"}
        )
