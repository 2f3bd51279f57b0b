"""seaborn figures shared by the command line, the experiment scripts and the notebooks.

Each function draws on a given matplotlib ``Axes`` (or a new figure) and returns it; nothing is
shown or saved implicitly — :func:`save_figure` writes PNG and SVG side by side.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.container import Container, ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter, NullLocator

from speedtrap.analysis.statistics import MIN_REPLICATIONS_FOR_CI, ci_flag, mean_ci
from speedtrap.config.ledger import LEDGER_CATEGORIES
from speedtrap.serving.economics import SECONDS_PER_HOUR

CATEGORY_LABELS: dict[str, str] = {
    "prompting": "prompting",
    "waiting_queue": "waiting: queue",
    "waiting_ttft": "waiting: first token",
    "waiting_generation": "waiting: generation",
    "waiting_tool": "waiting: tools",
    "reviewing": "reviewing",
    "fixing": "fixing",
    "switching": "switching (resumption)",
    "manual": "manual work",
    "other_work": "other work",
    "idle": "idle",
}
"""Legend labels of the ledger categories, in ledger order."""

_PALETTE: dict[str, str] = dict(
    zip(
        LEDGER_CATEGORIES,
        [
            sns.color_palette("Greens", 3).as_hex()[1],  # prompting
            *sns.color_palette("Oranges", 5).as_hex()[1:],  # the four waits
            sns.color_palette("Blues", 3).as_hex()[1],  # reviewing
            sns.color_palette("Reds", 3).as_hex()[2],  # fixing
            sns.color_palette("Purples", 3).as_hex()[1],  # switching
            "#8c6d31",  # manual work
            "#d9d9d9",  # other work
            "#f5f5f5",  # idle
        ],
        strict=True,
    )
)
"""Colours: greens for prompting, oranges for waiting, blue reviewing, red fixing, purple switching."""

CATEGORY_COLOURS: dict[str, str] = _PALETTE
"""Colour of each ledger category in the ledger figures (hex), for figures drawn elsewhere."""

BAND_COLOUR = "#bbbbbb"
"""Colour of the legend entry that says what a figure's shaded bands are."""

ERRORBAR_COLOUR = "#333333"
"""Colour of error bars (and of the legend entry that says what they are)."""


def interval_note(
    what: str,
    counts: Iterable[int],
    *,
    paired: bool = False,
    confidence: float = 0.95,
    of: str = "runs",
) -> str:
    """What a figure's intervals are, for its legend: e.g. ``"bands: 95% t-interval over 3 runs
    (unpaired; only 3 runs: unreliable)"``.

    ``what`` names the marks ("bands", "error bars"); ``counts`` are the numbers of values behind
    each interval (one number, or a range "3–5" when they differ); ``paired``: intervals of
    differences paired by seed. Intervals from fewer than
    :data:`~speedtrap.analysis.statistics.MIN_REPLICATIONS_FOR_CI` values are flagged as unreliable
    (as :func:`~speedtrap.analysis.statistics.ci_caveat` does in the findings).
    """
    n = sorted({int(c) for c in counts if c > 0})
    level = f"{100 * confidence:g}% t-interval"
    if not n:
        return f"{what}: {level} ({'paired by seed' if paired else 'unpaired'})"
    over = f"{n[0]}" if len(n) == 1 else f"{n[0]}–{n[-1]}"
    caveat = f"; only {n[0]} {of}: unreliable" if n[0] < MIN_REPLICATIONS_FOR_CI else ""
    return f"{what}: {level} over {over} {of} ({'paired by seed' if paired else 'unpaired'}{caveat})"


def band_handle(label: str) -> Patch:
    """A legend entry for shaded bands (grey patch) with ``label``."""
    return Patch(facecolor=BAND_COLOUR, edgecolor="none", label=label)


def errorbar_handle(label: str, *, horizontal: bool = False) -> ErrorbarContainer:
    """A legend entry for error bars (a capped whisker, vertical unless ``horizontal``) with ``label``."""
    cap = Line2D([], [], ls="none", marker="|" if horizontal else "_", color=ERRORBAR_COLOUR, ms=6, mew=0.8)
    return ErrorbarContainer(
        (
            Line2D([], [], ls="none", color=ERRORBAR_COLOUR),
            (cap, cap),
            (LineCollection([], colors=ERRORBAR_COLOUR, linewidths=0.8),),
        ),
        has_xerr=horizontal,
        has_yerr=not horizontal,
        label=label,
    )


def add_legend_entries(ax: Axes, handles: Sequence[Artist | Container], **kwargs: Any) -> None:
    """Append ``handles`` to the legend of ``ax`` (its title and entries kept), or make one; the
    keyword arguments go to ``Axes.legend`` (e.g. ``loc``)."""
    legend = ax.get_legend()
    old, labels = ax.get_legend_handles_labels()
    title = legend.get_title().get_text() if legend is not None else ""
    ax.legend(
        [*old, *handles],
        [*labels, *(str(h.get_label()) for h in handles)],
        title=title or None,
        **kwargs,
    )


def ledger_hours(frame: pd.DataFrame, by: str, *, workday_s: float, confidence: float = 0.95) -> pd.DataFrame:
    """Mean hours per developer-day in each ledger category for each level of ``by``.

    ``frame`` has one row per run (a summary dict per row, with the ``share_<category>`` keys);
    returns columns ``by``, ``category``, ``hours``, ``ci_half_hours`` (half-width of the
    ``confidence`` interval over the runs; NaN for a single run), in ledger order.
    """
    rows = []
    scale = workday_s / SECONDS_PER_HOUR
    for level, group in frame.groupby(by, sort=False):
        for category in LEDGER_CATEGORIES:
            mean, low, high = mean_ci(group[f"share_{category}"].to_numpy() * scale, confidence)
            rows.append({by: level, "category": category, "hours": mean, "ci_half_hours": (high - low) / 2})
    return pd.DataFrame(rows)


def plot_ledger(
    frame: pd.DataFrame,
    by: str = "backend",
    *,
    workday_s: float,
    order: Sequence[str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Stacked horizontal bars: where a developer-day goes (hours) for each level of ``by``.

    Error bars (when ``frame`` holds several runs per level) are the 95% t-interval of each
    category's mean over the runs (unpaired), drawn at the right end of its segment; the legend
    says so (:func:`interval_note`).
    """
    hours = ledger_hours(frame, by, workday_s=workday_s)
    levels = list(order) if order is not None else list(dict.fromkeys(hours[by]))
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 1.2 + 0.7 * len(levels)), layout="constrained")
    y = np.arange(len(levels))
    left = np.zeros(len(levels))
    handles: list[Artist | Container] = []
    whiskers: list[Artist | Container] = []
    for category in LEDGER_CATEGORIES:
        part = hours[hours["category"] == category].set_index(by).reindex(levels)
        widths = part["hours"].to_numpy()
        handles.append(
            ax.barh(
                y, widths, left=left, color=_PALETTE[category], label=CATEGORY_LABELS[category], height=0.7
            )
        )
        errors = part["ci_half_hours"].to_numpy()
        if np.isfinite(errors).any():
            bars = ax.errorbar(
                left + widths, y, xerr=errors, fmt="none", ecolor=ERRORBAR_COLOUR, elinewidth=0.8, capsize=2
            )
            if not whiskers:
                note = interval_note("error bars", frame.groupby(by).size())
                bars.set_label(textwrap.fill(note, 34))
                whiskers.append(bars)
        left += widths
    ax.set_yticks(y, levels)
    ax.invert_yaxis()
    ax.set_xlabel("hours per developer-day")
    ax.set_xlim(0, workday_s / SECONDS_PER_HOUR)
    ax.legend(
        handles=[*handles, *whiskers],
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
        fontsize="small",
    )
    sns.despine(ax=ax, left=True)
    if title:
        ax.set_title(title)
    return ax


def _t_interval(values: pd.Series) -> tuple[float, float]:
    _, low, high = mean_ci(values.to_numpy())
    return low, high


def _as_percent(frame: pd.DataFrame, column: str, label: str) -> pd.DataFrame:
    """``frame`` with the share ``column`` (0–1) in percent, for an axis whose ``label`` says "%"."""
    if "%" not in label:
        raise ValueError(f"a share drawn in percent needs '%' in its axis label, got {label!r}")
    return frame.assign(**{column: 100.0 * frame[column]})


def plot_outcome(
    frame: pd.DataFrame,
    outcome: str,
    label: str,
    by: str = "backend",
    *,
    order: Sequence[str] | None = None,
    ax: Axes | None = None,
    percent: bool = False,
) -> Axes:
    """Bars of the mean of ``outcome`` per level of ``by`` with 95% t confidence intervals over runs
    (unpaired), which a legend under the axes names (:func:`interval_note`). ``percent``: the
    outcome is a share (0–1) drawn in % (``label`` must say "%")."""
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 3.2), layout="constrained")
    if percent:
        frame = _as_percent(frame, outcome, label)
    counts = frame.groupby(by)[outcome].count()
    many = counts.min() > 1
    sns.barplot(
        data=frame,
        x=by,
        y=outcome,
        order=order,
        hue=by,
        hue_order=order,
        palette="colorblind",
        legend=False,
        errorbar=_t_interval if many else None,
        err_kws={"color": ERRORBAR_COLOUR, "linewidth": 1.2},
        capsize=0.2,
        ax=ax,
    )
    ax.set_ylabel(label)
    ax.set_xlabel("")
    if many:
        note = textwrap.fill(interval_note("error bars", counts), 48)
        ax.legend(
            handles=[errorbar_handle(note)],
            loc="upper center",
            bbox_to_anchor=(0.5, -0.12),
            frameon=False,
            fontsize="small",
        )
    sns.despine(ax=ax)
    return ax


LOG_CUT_NOTE = "lower ends ≤ 0 cut off on the log axis"
"""Added to the band note of a log-scale :func:`plot_lines` whose t-intervals reach 0 or below."""


def plot_lines(
    frame: pd.DataFrame,
    x: str,
    y: str,
    label: str,
    *,
    hue: str | None = None,
    ax: Axes | None = None,
    percent: bool = False,
    color: str | None = None,
    log: bool = False,
) -> Axes:
    """Mean of ``y`` against ``x`` (one line per level of ``hue``) with 95% t confidence bands over
    runs (unpaired), which a legend entry names (:func:`interval_note`). ``percent``: ``y`` is a
    share (0–1) drawn in % (``label`` must say "%"); ``color``: the line's colour without ``hue``;
    ``log``: ``y`` on a log axis, where a band's lower end at or below 0 (a t-interval from few
    runs of a positive quantity can reach it) is cut at half the smallest mean, and the legend
    entry says so (:data:`LOG_CUT_NOTE`)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 3.2), layout="constrained")
    if percent:
        frame = _as_percent(frame, y, label)
    keys = [x, *([hue] if hue else [])]
    counts = frame.groupby(keys)[y].count()
    many = counts.min() > 1
    means = frame.groupby(keys)[y].mean()
    floor = float(means[means > 0].min()) / 2 if log and (means > 0).any() else None
    cut = []

    def interval(values: pd.Series) -> tuple[float, float]:
        low, high = _t_interval(values)
        if floor is not None and low <= 0:
            cut.append(low)
            low = floor
        return low, high

    sns.lineplot(
        data=frame,
        x=x,
        y=y,
        hue=hue,
        marker="o",
        palette="colorblind" if hue else None,
        color=None if hue else color,
        errorbar=interval if many else None,
        ax=ax,
    )
    ax.set_ylabel(label)
    if log:
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
    if many:
        note = interval_note("bands", counts) + (f"; {LOG_CUT_NOTE}" if cut else "")
        add_legend_entries(ax, [band_handle(textwrap.fill(note, 40))])
    sns.despine(ax=ax)
    return ax


def figure_of(ax: Axes) -> Figure:
    """The figure an axes belongs to (its root figure, for an axes on a subfigure)."""
    fig = ax.get_figure(root=True)
    if fig is None:  # pragma: no cover - an axes made by pyplot always has one
        raise ValueError("the axes belongs to no figure")
    return fig


def save_figure(fig: Figure, directory: str | Path, stem: str) -> list[Path]:
    """Write ``fig`` as ``<stem>.png`` (150 dpi) and ``<stem>.svg`` under ``directory``; return the paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{stem}.png", out / f"{stem}.svg"]
    fig.savefig(paths[0], dpi=150, bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight")
    return paths


def plot_line_panels(
    frame: pd.DataFrame,
    x: str,
    panels: Sequence[tuple[str, str]],
    *,
    hue: str | None = None,
    xlabel: str | None = None,
    xticks: Sequence[float] | None = None,
    ncols: int = 3,
    title: str | None = None,
    percent: Collection[str] = (),
) -> Figure:
    """A grid of :func:`plot_lines` panels, one per ``(outcome column, axis label)`` in ``panels``.

    Every panel plots the mean of its outcome against ``x`` (one line per level of ``hue``) with
    95% t confidence bands over runs; only the first panel keeps a legend (which names the bands).
    Outcomes in ``percent`` are shares (0–1) drawn in % (their labels must say "%"). ``xticks``
    puts the ticks at given values (e.g. the levels of a discrete factor). Unused grid cells are
    hidden. Returns the figure (nothing is shown or saved).
    """
    if not panels:
        raise ValueError("plot_line_panels needs at least one panel")
    ncols = max(1, min(ncols, len(panels)))
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(4.3 * ncols, 3.2 * nrows), layout="constrained", squeeze=False
    )
    for i, (ax, (outcome, label)) in enumerate(zip(axes.flat, panels, strict=False)):
        plot_lines(frame, x, outcome, label, hue=hue, ax=ax, percent=outcome in percent)
        ax.set_xlabel(xlabel if xlabel is not None else x)
        if xticks is not None:
            ax.set_xticks(list(xticks))
        legend = ax.get_legend()
        if legend is not None and i > 0:
            legend.remove()
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title)
    return fig


def ci_table(
    frame: pd.DataFrame,
    by: Sequence[str],
    columns: Mapping[str, str],
    *,
    digits: int | Mapping[str, int] = 2,
    percent: Collection[str] = (),
) -> pd.DataFrame:
    """A display table of means with confidence intervals: "mean ± half-width" per group and outcome.

    ``frame`` is long, one row per group × outcome with ``outcome``, ``mean``, ``ci_low`` and
    ``ci_high`` columns (the output of :func:`speedtrap.analysis.statistics.summarize` or
    :func:`~speedtrap.analysis.statistics.paired_differences`). ``columns`` maps the outcomes to
    show, in order, to their column titles (which should state the unit); outcomes in ``percent``
    are shares shown in percent (×100). ``digits``: decimals, one number or per outcome. The
    half-width is that of the interval (symmetric Student-t); without one (a single run) the cell
    holds the mean alone; a missing or NaN mean shows as "–". An interval from fewer than 5 values
    (``n`` column) is marked " (n=3)", one of zero width " (zero width)" (see
    :func:`speedtrap.analysis.statistics.ci_caveat`). Rows are indexed by ``by`` (at least
    one column), in their order in ``frame``.
    """
    by = list(by)
    if not by:
        raise ValueError("ci_table needs at least one grouping column in `by`")
    missing = [c for c in [*by, "outcome", "mean", "ci_low", "ci_high"] if c not in frame.columns]
    if missing:
        raise KeyError(f"ci_table: no column {missing[0]!r} (columns: {', '.join(map(str, frame.columns))})")
    unknown = [o for o in columns if o not in set(frame["outcome"])]
    if unknown:
        raise KeyError(f"ci_table: no outcome {unknown[0]!r} in the table")
    rows = frame[frame["outcome"].isin(list(columns))]
    counts = rows["n"] if "n" in rows.columns else pd.Series([None] * len(rows), index=rows.index)
    values = {
        (*key, outcome): (mean, low, high, n)
        for *key, outcome, mean, low, high, n in rows[[*by, "outcome", "mean", "ci_low", "ci_high"]]
        .assign(_n=counts)
        .itertuples(index=False, name=None)
    }
    keys = list(dict.fromkeys(map(tuple, rows[by].itertuples(index=False, name=None))))
    cells: dict[str, list[str]] = {title: [] for title in columns.values()}
    for key in keys:
        for outcome, title in columns.items():
            mean, low, high, n = values.get((*key, outcome), (math.nan, math.nan, math.nan, None))
            scale = 100.0 if outcome in percent else 1.0
            d = digits if isinstance(digits, int) else digits.get(outcome, 2)
            half = (high - low) / 2 * scale
            if not np.isfinite(mean):
                cells[title].append("–")  # no value: e.g. an empty group
            elif np.isfinite(half):
                flag = ci_flag(None if n is None or pd.isna(n) else int(n), low, high)
                cells[title].append(f"{mean * scale:.{d}f} ± {half:.{d}f}{flag}")
            else:
                cells[title].append(f"{mean * scale:.{d}f}")
    if len(by) > 1:
        index: pd.Index = pd.MultiIndex.from_tuples(keys, names=by)
    else:
        index = pd.Index([k[0] for k in keys], name=by[0])
    return pd.DataFrame(cells, index=index)


def _one_outcome(indices: pd.DataFrame, outcome: str | None) -> pd.DataFrame:
    """The rows of one outcome (tables from ``run_sobol`` / ``run_morris`` may hold several)."""
    if "outcome" not in indices.columns:
        if outcome is not None:
            raise ValueError("these indices have no outcome column; drop outcome=")
        return indices
    outcomes = list(dict.fromkeys(indices["outcome"]))
    if outcome is None:
        if len(outcomes) > 1:
            listed = ", ".join(outcomes)
            raise ValueError(f"the indices hold several outcomes ({listed}); pick one with outcome=")
        return indices
    if outcome not in outcomes:
        raise ValueError(f"no outcome {outcome!r} in the indices (outcomes: {', '.join(outcomes)})")
    return indices[indices["outcome"] == outcome]


def _index_errors(rows: pd.DataFrame, column: str) -> np.ndarray:
    """Error bar lengths of an index: its ``_conf`` half-width, or (2 × rows) distances to its
    ``_low`` / ``_high`` interval bounds (emulated indices' percentile intervals)."""
    if f"{column}_low" in rows.columns:
        value = rows[column].to_numpy(dtype=float)
        below = value - rows[f"{column}_low"].to_numpy(dtype=float)
        above = rows[f"{column}_high"].to_numpy(dtype=float) - value
        return np.clip(np.vstack([below, above]), 0.0, None)
    return rows[f"{column}_conf"].to_numpy(dtype=float)


def plot_sensitivity(
    indices: pd.DataFrame,
    ax: Axes | None = None,
    *,
    outcome: str | None = None,
    labels: Mapping[str, str] | None = None,
    title: str | None = None,
    confidence: float = 0.95,
) -> Axes:
    """Horizontal bars of first-order (S1) and total (ST) Sobol' indices per factor, sorted by ST
    (largest on top), with the confidence half-widths (``S1_conf``, ``ST_conf``) as error bars.

    ``indices`` has the columns of :func:`speedtrap.analysis.sensitivity.sobol_indices` (and an
    ``outcome`` column when it comes from ``run_sobol``: pick one with ``outcome``), or those of
    :func:`speedtrap.analysis.emulator.emulated_sobol` (interval bounds ``S1_low``/``S1_high``, …,
    drawn as they are). ``labels`` maps
    factor paths to shorter names. Indices are shares of the output variance, drawn in %;
    ``confidence`` is the level the half-widths were computed at (SALib's bootstrap; the legend
    says so).
    """
    rows = _one_outcome(indices, outcome).sort_values("ST", ascending=False, ignore_index=True)
    names = [labels.get(f, f) if labels else f for f in rows["factor"]]
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 1.0 + 0.45 * len(rows)), layout="constrained")
    y = np.arange(len(rows))
    colors = sns.color_palette("colorblind", 2)
    for offset, (column, label, color) in enumerate(
        [("ST", "total (ST)", colors[0]), ("S1", "first order (S1)", colors[1])]
    ):
        ax.barh(
            y + (offset - 0.5) * 0.38,
            100.0 * rows[column].to_numpy(dtype=float),
            height=0.38,
            xerr=100.0 * _index_errors(rows, column),
            color=color,
            label=label,
            error_kw={"ecolor": ERRORBAR_COLOUR, "elinewidth": 0.8, "capsize": 2},
        )
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.axvline(0.0, color="#999999", linewidth=0.8)
    ax.set_xlabel("Sobol' index (% of output variance)")
    note = f"error bars: {100 * confidence:g}% bootstrap interval"
    add_legend_entries(
        ax, [errorbar_handle(note, horizontal=True)], loc="best", frameon=False, fontsize="small"
    )
    sns.despine(ax=ax, left=True)
    if title:
        ax.set_title(title)
    return ax


_LABEL_OFFSET = (4.0, 4.0)  # points right and above a marker, where a label goes when it has room
_LABEL_LINE = 10.0  # points between stacked labels (the "small" font is ≈8 pt)
_CHAR_WIDTH = 5.0  # points per character of a "small" label, a generous estimate


def _label_offsets(
    ax: Axes, xs: np.ndarray, ys: np.ndarray, names: Sequence[str]
) -> list[tuple[float, float]]:
    """Offsets (points) for the labels of markers at ``xs``, ``ys`` such that no two labels overlap:
    each goes right and above its marker unless an earlier one (placed from the top down) is there,
    then one line higher or lower, two lines, … until it fits inside the axes. Positions are taken at
    the axes' size as the figure is laid out now (later content can still move them a little)."""
    fig = figure_of(ax)
    fig.draw_without_rendering()  # lay the figure out first (constrained layout resizes the axes)
    points_per_px = 72.0 / fig.dpi
    anchors = ax.transData.transform(np.column_stack([xs, ys])) * points_per_px
    bottom, top = ax.get_window_extent().y0 * points_per_px, ax.get_window_extent().y1 * points_per_px
    placed: list[tuple[float, float, float, float]] = []  # label boxes: left, bottom, right, top
    offsets: list[tuple[float, float]] = [_LABEL_OFFSET] * len(names)
    steps = [0] + [k for j in range(1, 2 * len(names) + 1) for k in (j, -j)]  # 0, +1, −1, +2, −2, …
    for i in sorted(range(len(names)), key=lambda k: (-anchors[k][1], anchors[k][0])):
        x0, y0 = anchors[i]
        dx = _LABEL_OFFSET[0]
        width = _CHAR_WIDTH * len(names[i])
        choice = None
        for step in steps:
            dy = _LABEL_OFFSET[1] + step * _LABEL_LINE
            box = (x0 + dx, y0 + dy, x0 + dx + width, y0 + dy + _LABEL_LINE)
            if box[1] < bottom or box[3] > top:  # outside the axes: over tick labels or the title
                continue
            if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed):
                choice = (box, dy)
                break
        if choice is None:  # crowded everywhere: the usual place
            dy = _LABEL_OFFSET[1]
            choice = ((x0 + dx, y0 + dy, x0 + dx + width, y0 + dy + _LABEL_LINE), dy)
        placed.append(choice[0])
        offsets[i] = (dx, choice[1])
    return offsets


def plot_morris(
    indices: pd.DataFrame,
    ax: Axes | None = None,
    *,
    outcome: str | None = None,
    labels: Mapping[str, str] | None = None,
    unit: str = "",
    title: str | None = None,
    confidence: float = 0.95,
) -> Axes:
    """Morris screening: σ against μ* per factor, labelled, with μ*'s confidence half-width (at
    ``confidence``, SALib's bootstrap; the legend says so) as a horizontal error bar.

    Factors far right matter; factors high up act nonlinearly or through interactions (the line
    σ = μ* is drawn for reference). ``indices`` has the columns of
    :func:`speedtrap.analysis.sensitivity.morris_indices`; both measures are in the outcome's unit
    (``unit``, e.g. "tasks per developer-day") per full range of the factor.
    """
    rows = _one_outcome(indices, outcome)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4.5), layout="constrained")
    mu_star = rows["mu_star"].to_numpy(dtype=float)
    sigma = rows["sigma"].to_numpy(dtype=float)
    ax.errorbar(
        mu_star,
        sigma,
        xerr=rows["mu_star_conf"].to_numpy(dtype=float),
        fmt="o",
        color=sns.color_palette("colorblind", 1)[0],
        ecolor="#777777",
        elinewidth=0.8,
        capsize=2,
        label=f"μ* with its {100 * confidence:g}% bootstrap interval",
    )
    top = float(np.nanmax(np.r_[mu_star, sigma, 0.0])) * 1.1 or 1.0
    ax.plot([0.0, top], [0.0, top], linestyle="--", color="#999999", linewidth=0.8, label="σ = μ*")
    ax.set_xlim(left=0.0)
    ax.set_ylim(bottom=0.0)
    names = [labels.get(f, f) if labels else f for f in rows["factor"]]
    for (x, s), name, (dx, dy) in zip(
        zip(mu_star, sigma, strict=True), names, _label_offsets(ax, mu_star, sigma, names), strict=True
    ):
        moved = (dx, dy) != _LABEL_OFFSET
        ax.annotate(
            name,
            (x, s),
            xytext=(dx, dy),
            textcoords="offset points",
            fontsize="small",
            arrowprops={"arrowstyle": "-", "color": "#aaaaaa", "linewidth": 0.6} if moved else None,
        )
    per = f" ({unit} per factor range)" if unit else " (per factor range)"
    ax.set_xlabel("μ*, mean |elementary effect|" + per)
    ax.set_ylabel("σ of elementary effects" + per)
    ax.legend(loc="upper left", frameon=False, fontsize="small")
    sns.despine(ax=ax)
    if title:
        ax.set_title(title)
    return ax


def plot_emulator_check(
    comparison: pd.DataFrame,
    ax: Axes | None = None,
    *,
    outcome: str | None = None,
    labels: Mapping[str, str] | None = None,
    title: str | None = None,
    confidence: float = 0.95,
) -> Axes:
    """Emulated Sobol' indices against a direct study's, per factor (S1 and ST as two marker
    shapes), in % of the output variance: the direct index with its half-width (horizontal bars,
    SALib's bootstrap at ``confidence``), the emulated one with its percentile interval (vertical
    bars), the line of agreement, and in the lower right corner the indices whose two intervals do
    not overlap.

    ``comparison`` is :func:`speedtrap.experiments.sensitivity.compare_direct`'s table (pick one
    outcome with ``outcome`` when it holds several); ``labels`` maps factor paths to shorter names.
    """
    rows = _one_outcome(comparison, outcome)
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 5.0), layout="constrained")
    colours = sns.color_palette("colorblind", 2)
    top = 0.0
    names: list[str] = []  # the indices whose two intervals do not overlap
    for (key, name, marker), colour in zip(
        [("ST", "total (ST)", "o"), ("S1", "first order (S1)", "s")], colours, strict=True
    ):
        direct = 100.0 * rows[f"direct_{key}"].to_numpy(dtype=float)
        xerr = 100.0 * rows[f"direct_{key}_conf"].to_numpy(dtype=float)
        emulated = 100.0 * rows[f"emulated_{key}"].to_numpy(dtype=float)
        low = 100.0 * rows[f"emulated_{key}_low"].to_numpy(dtype=float)
        high = 100.0 * rows[f"emulated_{key}_high"].to_numpy(dtype=float)
        yerr = np.clip(np.vstack([emulated - low, high - emulated]), 0.0, None)
        ax.errorbar(
            direct,
            emulated,
            xerr=xerr,
            yerr=yerr,
            fmt=marker,
            color=colour,
            ecolor=colour,
            elinewidth=0.8,
            capsize=2,
            markersize=5,
            label=name,
        )
        top = max(top, float(np.nanmax(np.r_[direct + xerr, high, 0.0])))
        apart = ~rows[f"{key}_overlap"].to_numpy(dtype=bool)
        names.extend(f"{labels.get(f, f) if labels else f} ({key})" for f in rows["factor"][apart])
    top = top * 1.05 or 1.0
    ax.plot([0.0, top], [0.0, top], linestyle="--", color="#999999", linewidth=0.8, label="emulated = direct")
    ax.set_xlim(min(0.0, ax.get_xlim()[0]), top)
    ax.set_ylim(min(0.0, ax.get_ylim()[0]), top)
    ax.set_xlabel(f"direct Sobol' index (% of variance; bars: {100 * confidence:g}% bootstrap half-width)")
    ax.set_ylabel(f"emulated index (% of variance; bars: {100 * confidence:g}% percentile interval)")
    ax.legend(loc="upper left", frameon=False, fontsize="small")
    if names:  # listed in a corner: small disagreeing indices crowd near zero
        ax.text(
            0.98,
            0.02,
            "intervals apart:\n" + "\n".join(names),
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize="small",
        )
    sns.despine(ax=ax)
    if title:
        ax.set_title(title)
    return ax


_CALIBRATION_FLOOR = 0.1
"""Lowest simulated / published ratio drawn by :func:`plot_calibration`; intervals reaching below
(zero or negative lower bounds of small-sample intervals) are cut there."""


def plot_calibration(table: pd.DataFrame, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Each calibration target as simulated / published (log scale, 1 = the published value): the
    simulated mean with its 95% t-interval over replications (whiskers; the legend gives their
    number, from an ``n`` column when there is one), the range the target's
    pre-declared tolerance accepts (grey band), pass in blue and miss in red. ``table`` is
    :func:`speedtrap.validation.workflow.validate_workflow`'s (columns ``id``, ``published``,
    ``simulated``, ``ci_low``, ``ci_high``, ``accept_low``, ``accept_high``, ``passed``)."""
    rows = table.reset_index(drop=True)
    if ax is None:
        _, ax = plt.subplots(figsize=(7.0, 0.38 * len(rows) + 1.2), layout="constrained")
    published = rows["published"].astype(float)
    scale = published.where(published != 0)
    colours = sns.color_palette("colorblind")
    y = np.arange(len(rows))[::-1]
    for yi, (_, row), s in zip(y, rows.iterrows(), scale, strict=True):
        low, high = row["accept_low"] / s, row["accept_high"] / s
        ax.fill_betweenx([yi - 0.35, yi + 0.35], max(low, _CALIBRATION_FLOOR), high, color="0.88", lw=0)
        colour = colours[0] if row["passed"] else colours[3]
        mean = row["simulated"] / s
        if math.isfinite(row["ci_low"]) and math.isfinite(row["ci_high"]):
            lo, hi = max(row["ci_low"] / s, _CALIBRATION_FLOOR), row["ci_high"] / s
            ax.plot([lo, hi], [yi, yi], color=colour, lw=1.5)
        ax.plot([mean], [yi], "o", color=colour, ms=6)
    ax.axvline(1.0, color="0.3", lw=0.8, ls="--")
    ax.set_xscale("log")
    shown = [float(v) for line in ax.lines for v in np.asarray(line.get_xdata(), dtype=float)] + [0.5, 2.0]
    ax.set_xlim(max(min(shown) / 1.3, _CALIBRATION_FLOOR), max(shown) * 1.3)
    ticks = [2.0**k for k in range(-8, 9) if ax.get_xlim()[0] <= 2.0**k <= ax.get_xlim()[1]]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"×{v:g}"))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_yticks(y, rows["id"])
    ax.set_xlabel("simulated / published (log scale; grey band: what the tolerance accepts)")
    counts = rows["n"] if "n" in rows.columns else []
    handles = [
        plt.Line2D([], [], marker="o", color=colours[0], ls="", label="pass"),
        plt.Line2D([], [], marker="o", color=colours[3], ls="", label="miss"),
        plt.Line2D([], [], color="0.3", lw=1.5, label=interval_note("whiskers", counts, of="replications")),
    ]
    ax.legend(handles=handles, loc="upper right", frameon=False, fontsize="small")
    sns.despine(ax=ax)
    if title:
        ax.set_title(title)
    return ax


__all__ = [
    "BAND_COLOUR",
    "CATEGORY_COLOURS",
    "CATEGORY_LABELS",
    "ERRORBAR_COLOUR",
    "LOG_CUT_NOTE",
    "add_legend_entries",
    "band_handle",
    "ci_table",
    "errorbar_handle",
    "figure_of",
    "interval_note",
    "ledger_hours",
    "plot_calibration",
    "plot_emulator_check",
    "plot_ledger",
    "plot_line_panels",
    "plot_lines",
    "plot_morris",
    "plot_outcome",
    "plot_sensitivity",
    "save_figure",
]
