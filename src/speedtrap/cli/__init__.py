"""The ``speedtrap`` command: the typer application, its commands registered in the order
``speedtrap --help`` lists them.

Each command group lives in its own module as plain functions (:mod:`~speedtrap.cli.run`,
:mod:`~speedtrap.cli.compare`, :mod:`~speedtrap.cli.demo`, :mod:`~speedtrap.cli.sweep`,
:mod:`~speedtrap.cli.claims`, :mod:`~speedtrap.cli.serving`,
:mod:`~speedtrap.cli.validate`, :mod:`~speedtrap.cli.sessions`, :mod:`~speedtrap.cli.browser`); they
share the options and output helpers of :mod:`~speedtrap.cli.common` and never import this module,
which registers them on :data:`app`. Bad input (an unknown preset, a model that does not fit)
prints one line to stderr and exits with status 2; ``--json`` output follows a versioned schema
documented in each command's help.
"""

from __future__ import annotations

import io
import os
import sys
import warnings
from typing import Annotated, Any

import typer

from speedtrap import interrupts
from speedtrap.cli import browser, claims, compare, demo, run, serving, sessions, sweep, validate
from speedtrap.cli.common import (
    POLICY_KINDS,
    count_progress,
    exits_on_interrupt,
    headline_scenario_path,
    load_scenario,
    parse_set,
)
from speedtrap.cli.help import HelpTyper

__all__ = [
    "POLICY_KINDS",
    "app",
    "count_progress",
    "headline_scenario_path",
    "load_scenario",
    "main",
    "parse_set",
]

app = HelpTyper(
    name="speedtrap",
    help="Simulate developers working with LLM coding agents: is fast inference worth it?",
    no_args_is_help=True,
    add_completion=False,
)


def _print_version(show: bool) -> None:
    if show:
        from speedtrap import __version__
        from speedtrap.build import build_description

        typer.echo(f"speedtrap {__version__} ({build_description()})")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print the version and the serving pool's build (compiled or pure Python), and exit.",
        ),
    ] = False,
) -> None:
    """Simulate developers working with LLM coding agents: is fast inference worth it?"""


def __getattr__(name: str) -> Any:
    """``HEADLINE_SCENARIO`` (:func:`headline_scenario_path`), found when first asked for: finding
    it imports the experiments package, which ``speedtrap --help`` need not."""
    if name == "HEADLINE_SCENARIO":
        return headline_scenario_path()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --- the commands, in the order `speedtrap --help` lists them (groups after commands) -----------

app.command()(exits_on_interrupt(serving.backends))
app.command()(exits_on_interrupt(serving.pareto))
app.command()(exits_on_interrupt(run.run))
app.command()(exits_on_interrupt(sweep.sweep))
app.command()(exits_on_interrupt(sweep.experiment))
app.command()(exits_on_interrupt(claims.claims))
app.command()(exits_on_interrupt(compare.compare))
app.command()(exits_on_interrupt(demo.demo))
app.command()(exits_on_interrupt(sessions.fit))
app.command("app")(browser.app_command)

validate_app = HelpTyper(help="Check the simulator against published measurements.", no_args_is_help=True)
validate_app.command("workflow")(exits_on_interrupt(validate.validate_workflow_command))
validate_app.command("serving")(exits_on_interrupt(validate.validate_serving_command))
app.add_typer(validate_app, name="validate")


# --- entry point ------------------------------------------------------------------------------


def _one_line_warning(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> str:
    return f"warning: {message}\n"


def _plain_output() -> None:
    """Make output that cannot fail on the user's environment: a character the output encoding lacks
    (``PYTHONIOENCODING=ascii``, a C locale) is written as ``?`` instead of ending the command in a
    traceback, and figures are drawn by matplotlib's file backend, agg, whatever ``MPLBACKEND`` says
    (the command line only writes figures to files; an unknown backend name made importing matplotlib
    fail)."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="replace")
    os.environ["MPLBACKEND"] = "agg"


def main() -> None:
    """Console-script entry point (``speedtrap``): output that does not fail on an encoding or a
    plotting backend (:func:`_plain_output`); warnings (e.g. a quarantined result file) are
    shown as one line each, and a Ctrl-C outside a command (while typer builds the command line or
    parses it; a command says it was interrupted itself) ends in one line and exit status 130, as does
    an error that a Ctrl-C became in other libraries' code, or a command that ran to its end because
    such code swallowed the Ctrl-C (:mod:`speedtrap.interrupts`)."""
    warnings.formatwarning = _one_line_warning
    _plain_output()
    try:
        app()
    except KeyboardInterrupt:  # before typer's own handling starts
        typer.echo("interrupted while starting", err=True)
        raise SystemExit(INTERRUPTED_EXIT_CODE) from None
    except SystemExit as exc:
        if exc.code == INTERRUPTED_EXIT_CODE and _silent_interrupt(exc):
            typer.echo("interrupted", err=True)
        if exc.code in (0, None) and interrupts.interrupted():  # other code swallowed it; the work ended
            typer.echo("interrupted after the command had finished", err=True)
            raise SystemExit(INTERRUPTED_EXIT_CODE) from None
        raise
    except Exception:  # a Ctrl-C that the code it landed in turned into another error
        if not interrupts.interrupted():
            raise
        typer.echo("interrupted", err=True)
        raise SystemExit(INTERRUPTED_EXIT_CODE) from None


INTERRUPTED_EXIT_CODE = 130
"""Exit status after a Ctrl-C (128 + SIGINT), as shells report it."""


def _silent_interrupt(exc: SystemExit) -> bool:
    """Whether typer turned a Ctrl-C into exit status 130 without a word: its exit's cause is the
    KeyboardInterrupt (a command's own exit after saying so is raised from None)."""
    context = exc.__context__
    return context is not None and isinstance(context.__cause__, KeyboardInterrupt)
