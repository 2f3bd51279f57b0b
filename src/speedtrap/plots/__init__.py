"""seaborn figures shared by the command line, the experiment scripts and the notebooks.

Each function draws on a given matplotlib ``Axes`` (or a new figure) and returns it; nothing is
shown or saved implicitly — :func:`save_figure` writes PNG and SVG side by side. One module per
figure family: ``common`` (interval notes, legend entries, saving), ``ledger`` (where a
developer-day goes), ``differences`` (paired differences of arms and their economics), ``sweeps``
(outcomes across backends and design points, display tables), ``sensitivity`` (Sobol', Morris,
emulator check), ``calibration`` and ``history_matching`` (the history-matching waves; imported from
its module); this package gathers the others'
public names.
"""

from speedtrap.plots.calibration import plot_calibration
from speedtrap.plots.common import (
    BAND_COLOUR,
    ERRORBAR_COLOUR,
    add_legend_entries,
    band_handle,
    errorbar_handle,
    figure_of,
    interval_note,
    save_figure,
)
from speedtrap.plots.differences import plot_differences
from speedtrap.plots.ledger import CATEGORY_COLOURS, CATEGORY_LABELS, ledger_hours, plot_ledger
from speedtrap.plots.sensitivity import plot_emulator_check, plot_morris, plot_sensitivity
from speedtrap.plots.sweeps import LOG_CUT_NOTE, ci_table, plot_line_panels, plot_lines, plot_outcome

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
    "plot_differences",
    "plot_emulator_check",
    "plot_ledger",
    "plot_line_panels",
    "plot_lines",
    "plot_morris",
    "plot_outcome",
    "plot_sensitivity",
    "save_figure",
]
