"""What every figure shares: the legend entries that say what intervals are (level, number of
runs, paired or not), their colours, the figure an axes belongs to, and saving as PNG and SVG.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.container import Container, ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from speedtrap.analysis.statistics import MIN_REPLICATIONS_FOR_CI

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
