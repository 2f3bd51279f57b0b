"""The canonical experiments: each is an experiment file ``experiments/<name>.toml`` (the design)
and a module here (its model function and its analysis: tables, seaborn figures, a finding; a
caveat that every interval of the finding shares is said once, first).

``python experiments/<name>.py [--quick]`` and ``speedtrap experiment <name> [--quick]`` both call
:func:`run_canonical`, which runs (or resumes) the experiment through the engine, writes the runs
and ``spec.json`` to ``results/<name>/`` (quick: ``results/<name>-quick/``), then the analysis
writes its CSV tables and PNG + SVG figures beside them and returns a plain-language finding.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import typer

from speedtrap.analysis.statistics import caveat_once
from speedtrap.config.experiment import Experiment
from speedtrap.experiments.executors import EXECUTOR_KINDS
from speedtrap.experiments.files import experiments_dir
from speedtrap.experiments.runner import run_experiment
from speedtrap.experiments.store import ANOTHER_DIRECTORY, ResultStore, StoreError

EXPERIMENTS_DIR = experiments_dir()
"""The experiment files: the installed package's copy, or ``experiments/`` of a source checkout
(:func:`speedtrap.experiments.files.experiments_dir`)."""

CANONICAL: tuple[str, ...] = ("headline", "break_even", "fast_mode_externality")
"""The canonical experiments, in the order the README presents them."""


@dataclass(frozen=True)
class Report:
    """What an experiment's analysis produced: a finding in words and the files it wrote."""

    finding: str
    files: list[Path] = field(default_factory=list)


def experiment_file(name: str) -> Path:
    """``experiments/<name>.toml`` of a canonical experiment; ``ValueError`` for other names."""
    if name not in CANONICAL:
        raise ValueError(f"unknown experiment {name!r} (canonical: {', '.join(CANONICAL)})")
    return EXPERIMENTS_DIR / f"{name}.toml"


def load_spec(name: str, *, quick: bool = False) -> Experiment:
    """The experiment spec of ``name`` (its quick variant with ``quick``)."""
    spec = Experiment.from_toml(experiment_file(name))
    return spec.quick_variant() if quick else spec


def run_canonical(
    name: str,
    *,
    quick: bool = False,
    executor: str = "serial",
    workers: int | None = None,
    scheduler: str | None = None,
    results_dir: str | Path = "results",
    progress: bool = True,
) -> Report:
    """Run (or resume) canonical experiment ``name`` and analyse it into ``results_dir/<spec name>/``.

    A results directory that cannot take the tables and figures (a complete store on a read-only
    disk is still read) raises :class:`~speedtrap.experiments.store.StoreError` in one line naming
    it, before the analysis; so does a failure while they are written (a full disk)."""
    spec = load_spec(name, quick=quick)
    module = importlib.import_module(f"speedtrap.experiments.canonical.{name}")
    table = run_experiment(
        spec,
        executor=executor,
        workers=workers,
        scheduler=scheduler,
        results_dir=results_dir,
        progress=progress,
        model=module.MODEL,
    )
    out = Path(results_dir) / spec.name
    reason = ResultStore(out).unwritable()
    if reason is not None:
        raise _unwritable(out, reason)
    try:
        report: Report = module.analyze(table, spec, out)
    except OSError as exc:
        where = f" ({os.fsdecode(exc.filename)})" if exc.filename is not None else ""
        raise _unwritable(out, f"{exc.strerror or type(exc).__name__}{where}") from None
    return Report(caveat_once(report.finding, spec.replications), report.files)


def _unwritable(out: Path, reason: str) -> StoreError:
    return StoreError(
        f"{out}: cannot write the experiment's tables and figures there ({reason}): make it writable "
        f"{ANOTHER_DIRECTORY}"
    )


def run_and_report(
    name: str,
    *,
    quick: bool,
    executor: str,
    workers: int | None,
    scheduler: str | None,
    results_dir: Path,
) -> Report:
    """Run canonical experiment ``name`` (:func:`run_canonical`) after checking the executor's name,
    and print its finding and the files it wrote: what ``speedtrap experiment NAME`` and
    ``python experiments/NAME.py`` do. Bad input raises ``ValueError``; a missing extra ``ImportError``."""
    if executor not in EXECUTOR_KINDS:
        known = ", ".join(EXECUTOR_KINDS)
        raise ValueError(f"--executor: unknown executor {executor!r} (known: {known})")
    report = run_canonical(
        name, quick=quick, executor=executor, workers=workers, scheduler=scheduler, results_dir=results_dir
    )
    typer.echo(report.finding)
    typer.echo("Wrote " + ", ".join(str(p) for p in report.files))
    return report


def main(name: str, argv: Sequence[str] | None = None) -> int:
    """Command-line entry of ``experiments/<name>.py`` (the options of ``speedtrap experiment``);
    returns the exit status: 0, or 2 with a one-line error for bad input."""
    app = typer.Typer(add_completion=False)

    @app.command(help=f"Run the {name} experiment (experiments/{name}.toml) and write results/{name}/.")
    def run(
        quick: Annotated[bool, typer.Option("--quick", help="The small CI-sized variant.")] = False,
        executor: Annotated[
            str, typer.Option("--executor", help="Where runs execute: serial, processes or dask.")
        ] = "serial",
        workers: Annotated[
            int | None, typer.Option("--workers", min=1, help="Worker processes (processes, local dask).")
        ] = None,
        scheduler: Annotated[
            str | None, typer.Option("--scheduler", help="Dask scheduler address (default: a local cluster).")
        ] = None,
        results_dir: Annotated[
            Path, typer.Option("--results-dir", help="Where results/<name>/ is written.")
        ] = Path("results"),
    ) -> None:
        try:
            run_and_report(
                name,
                quick=quick,
                executor=executor,
                workers=workers,
                scheduler=scheduler,
                results_dir=results_dir,
            )
        except (ValueError, ImportError) as exc:  # bad input, a store of another spec, a missing extra
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None

    try:
        app(args=list(argv) if argv is not None else None, prog_name=f"experiments/{name}.py")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0


__all__ = [
    "CANONICAL",
    "EXPERIMENTS_DIR",
    "Report",
    "experiment_file",
    "load_spec",
    "main",
    "run_and_report",
    "run_canonical",
]
