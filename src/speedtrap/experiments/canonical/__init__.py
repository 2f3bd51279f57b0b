"""The canonical experiments: each is an experiment file ``experiments/<name>.toml`` (the design)
and a module here (its model function and its analysis: tables, seaborn figures, a finding; a
caveat that every interval of the finding shares is said once, first).

``python experiments/<name>.py [--quick]`` and ``speedtrap experiment <name> [--quick]`` both call
:func:`run_canonical`, which runs (or resumes) the experiment through the engine, writes the runs
and ``spec.json`` to ``results/<name>/`` (quick: ``results/<name>-quick/``), then the analysis
writes its CSV tables and PNG + SVG figures beside them and returns a plain-language finding.
Every experiment also writes ``latency.csv``: per design point (and, where the runs keep them per
tier, per tier) the mean over its runs of each run's p50, p90 and p99 of time to first token, time
between tokens and end to end (seconds; :func:`speedtrap.analysis.latency.latency_table`).

**Under the calibrated ensemble** (the default, as for ``compare``; ``--ensemble FILE`` another,
``--single`` the scenario file's own parameter set): the experiment's replications N become K = N // 2
members of the ensemble × r = N // K seeds (:func:`speedtrap.experiments.ensemble.choose_members`).
Each member runs as its own experiment — the scenario with the member's values (the experiment's
factors kept), its own seeds (root seed ``seed + 1 + member``), stored in
``results/<name>-members/member-<i>/`` — and the analysis reads all of them as one table with a
``member`` column (replications numbered ``k·r + j``). Its tables and figures then pool the K × r
runs, so their intervals carry seed noise and behaviour together (the finding says so first); each
module's :data:`contrasts` are split into the two intervals of :mod:`speedtrap.analysis.intervals`
in ``behaviour.csv``, and the finding ends with them.
"""

from __future__ import annotations

import importlib
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
import typer

from speedtrap.analysis.latency import latency_table
from speedtrap.analysis.statistics import caveat_once
from speedtrap.config.experiment import Experiment
from speedtrap.experiments.executors import EXECUTOR_KINDS, make_executor
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


@dataclass(frozen=True)
class Contrast:
    """A difference the finding reports, split into seed and behavioural intervals under an ensemble:
    each level of the table's column ``factor`` minus the ``baseline`` level, on ``outcomes``."""

    factor: str | tuple[str, ...]
    """A column of the table, or several: their values joined (``a × b``) name a level."""
    baseline: object
    """A level of ``factor`` (a tuple of values for several columns)."""
    outcomes: tuple[str, ...]
    label: str = ""
    """How the finding names the baseline (default: the baseline level itself)."""
    said: tuple[object, ...] | None = None
    """The levels whose differences the finding says (``behaviour.csv`` holds all); None: all."""


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
    ensemble: str | Path | None = None,
    single: bool = False,
) -> Report:
    """Run (or resume) canonical experiment ``name`` and analyse it into ``results_dir/<spec name>/``,
    under the stored calibrated ensemble (``ensemble``: another file; ``single``: the scenario's own
    parameter set; see the module docstring).

    A results directory that cannot take the tables and figures (a complete store on a read-only
    disk is still read) raises :class:`~speedtrap.experiments.store.StoreError` in one line naming
    it, before the analysis; so does a failure while they are written (a full disk)."""
    spec, table, lines = canonical_runs(
        name,
        quick=quick,
        executor=executor,
        workers=workers,
        scheduler=scheduler,
        results_dir=results_dir,
        progress=progress,
        ensemble=ensemble,
        single=single,
    )
    module = importlib.import_module(f"speedtrap.experiments.canonical.{name}")
    out = Path(results_dir) / spec.name
    reason = ResultStore(out).unwritable()
    if reason is not None:
        raise _unwritable(out, reason)
    try:
        report: Report = module.analyze(table, spec, out)
        files = list(report.files)
        latency = latency_table(table, spec.factor_paths)
        if latency is not None:  # per design point (and tier): the mean of each run's percentiles
            files.append(out / "latency.csv")
            latency.to_csv(files[-1], index=False)
        if "member" in table.columns:
            behaviour = behaviour_table(table, module.contrasts(table, spec))
            files.append(out / "behaviour.csv")
            behaviour.to_csv(files[-1], index=False)
            if table["member"].nunique() > 1:
                lines.append(
                    "The tables, figures and intervals below pool every member's runs: their 95% "
                    "intervals carry seed noise and behaviour together; the last lines split the two."
                )
            split = ["Seed and behavioural intervals (behaviour.csv):", *behaviour_lines(behaviour)]
            finding_text = "\n".join([report.finding, *split])
        else:
            finding_text = report.finding
    except OSError as exc:
        where = f" ({os.fsdecode(exc.filename)})" if exc.filename is not None else ""
        raise _unwritable(out, f"{exc.strerror or type(exc).__name__}{where}") from None
    runs = int(table.groupby("point")["replication"].nunique().min()) if len(table) else spec.replications
    return Report("\n".join([*lines, caveat_once(finding_text, runs)]), files)


def canonical_runs(
    name: str,
    *,
    quick: bool = False,
    executor: str = "serial",
    workers: int | None = None,
    scheduler: str | None = None,
    results_dir: str | Path = "results",
    progress: bool = True,
    ensemble: str | Path | None = None,
    single: bool = False,
) -> tuple[Experiment, pd.DataFrame, list[str]]:
    """The runs of canonical experiment ``name`` (run or resumed; under the stored ensemble unless
    ``ensemble``/``single`` say otherwise): its spec, the runs table (with a ``member`` column under
    an ensemble) and the lines that say which parameter sets ran — what :func:`run_canonical` analyses
    and what the notebooks read."""
    from speedtrap.experiments.ensemble import resolve_ensemble

    spec = load_spec(name, quick=quick)
    module = importlib.import_module(f"speedtrap.experiments.canonical.{name}")
    choice = resolve_ensemble(ensemble, single=single)
    made = make_executor(executor, workers, scheduler)
    with made:
        if choice.members:
            table, lines = _member_runs(spec, module.MODEL, choice, made, Path(results_dir), progress)
        else:
            table = run_experiment(
                spec, executor=made, results_dir=results_dir, progress=progress, model=module.MODEL
            )
            lines = [choice.note]
    return spec, table, lines


MEMBER_ROOT_OFFSET = 1
"""Member ``i`` of the ensemble runs with root seed ``seed + MEMBER_ROOT_OFFSET + i``: its own seeds
(the nested design of :mod:`speedtrap.analysis.intervals`), the same whatever the other members."""


def _member_runs(
    spec: Experiment, model: Any, choice: Any, executor: Any, results_dir: Path, progress: bool
) -> tuple[pd.DataFrame, list[str]]:
    """Every chosen member's runs of ``spec`` (see the module docstring) as one table with a
    ``member`` column, and the lines that say what ran."""
    from speedtrap.experiments.ensemble import choose_members, member_overrides, plan_lines

    index, r = choose_members(len(choice.members), spec.replications)
    frames: list[pd.DataFrame] = []
    applied: set[str] = set()
    left: dict[str, str] = {}
    for k, i in enumerate(index):
        overrides, out = member_overrides(spec.scenario, choice.members[i], keep=spec.factor_paths)
        applied.update(overrides)
        left.update(out)
        member_spec = spec.model_copy(
            update={
                "name": f"member-{i}",
                "scenario": spec.scenario.with_overrides(overrides),
                "replications": r,
                "seed": spec.seed + MEMBER_ROOT_OFFSET + i,
            }
        )
        table = run_experiment(
            member_spec,
            executor=executor,
            results_dir=results_dir / f"{spec.name}-members",
            progress=progress,
            model=model,
        )
        attrs = dict(table.attrs)
        frames.append(table.assign(member=i, replication=k * r + table["replication"]))
    table = pd.concat(frames, ignore_index=True).sort_values(["point", "replication"], ignore_index=True)
    table.attrs = attrs
    first = (
        f"{choice.note}: {len(index)} of them × {r} seeds each ({len(index) * r} runs per design point; "
        f"stored in {results_dir / (spec.name + '-members')}/)"
    )
    lines = plan_lines(first, len(index), applied, left, fewer="4 or more replications give two members")
    return table, lines


def behaviour_table(table: pd.DataFrame, contrasts: Sequence[Contrast]) -> pd.DataFrame:
    """Each contrast's differences with both intervals
    (:func:`speedtrap.analysis.intervals.two_interval_differences`, paired on member and seed), with
    a ``baseline`` column naming what they are measured from."""
    from speedtrap.analysis.intervals import two_interval_differences

    frames = []
    for c in contrasts:
        runs, factor, baseline = table, c.factor, c.baseline
        if isinstance(factor, tuple):  # several columns: one level per combination of their values
            runs = table.assign(level=[_level(row) for row in table[list(factor)].to_numpy()])
            factor, baseline = "level", _level(baseline)
        if baseline not in set(runs[factor]):
            continue
        diff = two_interval_differences(runs, factor, baseline, list(c.outcomes))
        said = [_level(v) if isinstance(v, tuple) else v for v in c.said] if c.said is not None else None
        diff = diff.assign(
            baseline=c.label or str(c.baseline), said=diff["arm"].isin(said) if said is not None else True
        )
        frames.append(diff)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _level(values: Any) -> str:
    return " × ".join(f"{float(v):g}" for v in values)


def behaviour_lines(behaviour: pd.DataFrame) -> list[str]:
    """One line per difference of :func:`behaviour_table` that the finding says (``said``): its mean
    with the seed and behavioural 95% intervals and which dominates."""
    lines = []
    for row in behaviour.to_dict("records"):
        if not row.get("said", True) or not math.isfinite(row["mean"]):  # e.g. a group with nobody in it
            continue
        behavioural = (
            f"behavioural interval {row['behaviour_low']:+.4g} to {row['behaviour_high']:+.4g}; "
            if math.isfinite(row["behaviour_low"])
            else ""
        )
        lines.append(
            f"  {row['arm']} against {row['baseline']}, {row['outcome']}: {row['mean']:+.4g} "
            f"(seed interval {row['ci_low']:+.4g} to {row['ci_high']:+.4g}; {behavioural}{row['dominance']})"
        )
    return lines


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
    ensemble: Path | None = None,
    single: bool = False,
) -> Report:
    """Run canonical experiment ``name`` (:func:`run_canonical`) after checking the executor's name,
    and print its finding and the files it wrote: what ``speedtrap experiment NAME`` and
    ``python experiments/NAME.py`` do. Bad input raises ``ValueError``; a missing extra ``ImportError``."""
    if executor not in EXECUTOR_KINDS:
        known = ", ".join(EXECUTOR_KINDS)
        raise ValueError(f"--executor: unknown executor {executor!r} (known: {known})")
    report = run_canonical(
        name,
        quick=quick,
        executor=executor,
        workers=workers,
        scheduler=scheduler,
        results_dir=results_dir,
        ensemble=ensemble,
        single=single,
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
        ensemble: Annotated[
            Path | None,
            typer.Option("--ensemble", help="Run under this calibrated ensemble instead of the stored one."),
        ] = None,
        single: Annotated[
            bool,
            typer.Option("--single", help="The scenario file's own parameter set: no behavioural interval."),
        ] = False,
    ) -> None:
        try:
            run_and_report(
                name,
                quick=quick,
                executor=executor,
                workers=workers,
                scheduler=scheduler,
                results_dir=results_dir,
                ensemble=ensemble,
                single=single,
            )
        except (ValueError, ImportError, FileNotFoundError) as exc:  # bad input, another spec's store, …
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
    "Contrast",
    "Report",
    "behaviour_lines",
    "behaviour_table",
    "canonical_runs",
    "experiment_file",
    "load_spec",
    "main",
    "run_and_report",
    "run_canonical",
]
