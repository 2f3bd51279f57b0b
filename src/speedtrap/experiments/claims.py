"""The claims study: each claim of the fast-inference debate as an experiment with a computed verdict.

A claim file ``experiments/claims/<name>.toml`` (:class:`~speedtrap.config.claim.ClaimSpec`) names
the arms compared (values of one scenario path, the baseline first), the levers and uncertainties
sampled (with their sources) and the tests. :func:`run_claim` builds its experiment — the arms ×
the defaults and ``points`` Latin-hypercube samples of the levers and uncertainties, every point on
the same replication seeds — runs it through
:func:`~speedtrap.experiments.runner.run_experiment` (stored as it runs under
``<results_dir>/<name>/``, resumed when run again, on any executor), and judges it
(:func:`speedtrap.analysis.claim_verdicts.judge_claim`: effect sizes with paired 95% intervals, the
verdict by its stated rule, PRIM and CART boxes in words). ``claim.json`` beside the runs records the
result and the wall time.

**The calibrated defaults.** Given a calibrated ensemble (``ensemble``: a frame with a ``member``
column and one column per scenario path, :func:`read_ensemble`; ``speedtrap claims`` passes 10
members of the stored one unless told otherwise), the defaults are the arms run under each member on
the claim's seeds (``<name>-ensemble/``), and each verdict carries the seed and behavioural intervals
of that nested design. Each Latin-hypercube sample s ≥ 1 takes member (s − 1) mod K's values for the
paths the claim does not sample. Member columns naming no field of a claim's scenario are left out for
that claim (noted in its result). Without an ensemble (``--single``) the defaults are sample 0, the
scenario file's own parameter set.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import qmc

from speedtrap.analysis.claim_verdicts import ARM, SAMPLE, ClaimResult, judge_claim
from speedtrap.config.claim import ClaimSpec
from speedtrap.config.experiment import (
    Design,
    Experiment,
    Factor,
    value_label,
)
from speedtrap.config.scenario import Scenario
from speedtrap.experiments.canonical.fast_mode_externality import fleet_outcomes
from speedtrap.experiments.claim_point import resolve_stated, scenario_difference
from speedtrap.experiments.claim_report import QUICK_MARK, format_result
from speedtrap.experiments.executors import Executor
from speedtrap.experiments.files import experiments_dir
from speedtrap.experiments.runner import Model, run_experiment
from speedtrap.experiments.store import ResultStore, engine_tally
from speedtrap.models.workflow import simulate_summary
from speedtrap.provenance import provenance

CLAIMS_SUBDIR = "claims"
"""Where the claim files are, under the experiments directory."""
MODELS: Mapping[str, Model] = {"summary": simulate_summary, "fleet": fleet_outcomes}
"""A claim's ``model``: the run's flat summary, or the per-tier and provider outcomes of a
``fast_share`` fleet (:func:`~speedtrap.experiments.canonical.fast_mode_externality.fleet_outcomes`)."""
RESULT_FILE = "claim.json"
MEMBER = "member"


def claims_dir() -> Path:
    """The directory of the claim files (the package's copy, or a source checkout's)."""
    return experiments_dir() / CLAIMS_SUBDIR


def claim_names() -> list[str]:
    """Every claim file's name, sorted (``c1_…``, ``c2_…``, …)."""
    return sorted(p.stem for p in claims_dir().glob("*.toml"))


def load_claim(name: str | Path) -> ClaimSpec:
    """A claim by name (``experiments/claims/<name>.toml``) or by path, at its stated point with the
    neighbourhood sampled where it states one (:func:`~speedtrap.experiments.claim_point.resolve_stated`)."""
    path = Path(name)
    if path.suffix != ".toml":
        path = claims_dir() / f"{name}.toml"
        if not path.is_file():
            raise ValueError(f"unknown claim {name!r} (claims: {', '.join(claim_names())})")
    return resolve_stated(ClaimSpec.from_toml(path))


def claim_experiment(
    claim: ClaimSpec, *, quick: bool = False, applied: Sequence[Mapping[str, Any]] = ()
) -> tuple[Experiment, int]:
    """The claim's experiment (its quick variant with ``quick``, named ``<name>-quick``) and how many
    Latin-hypercube samples it takes besides the defaults. With ``applied`` (each ensemble member's
    overrides, :func:`applied_members`) the member paths the claim does not sample are factors too: the
    samples are paired with members (:func:`claim_points`)."""
    factors = [
        Factor(path=claim.compare.path, values=claim.compare.values),
        *(f.as_factor() for f in claim.sampled),
        *(t for f in claim.sampled for t in f.tied_factors()),
    ]
    samples = claim.points
    spec = Experiment(
        name=claim.name,
        scenario=claim.scenario,
        factors=factors,
        design=Design(kind="lhs", points=max(1, samples), seed=claim.design_seed),
        replications=claim.replications,
        seed=claim.seed,
        quick=claim.quick,
    )
    if quick:
        spec = spec.quick_variant()
        if claim.quick is not None and claim.quick.points is not None:
            samples = claim.quick.points
    paired = _paired_paths(claim, applied)
    if paired:
        spec = spec.model_copy(update={"factors": [*spec.factors, *_member_factors(paired, applied)]})
    return spec, samples


def _member_factors(paths: Sequence[str], applied: Sequence[Mapping[str, Any]]) -> list[Factor]:
    """A factor per member path, its values those the members take."""
    return [Factor(path=p, values=sorted({o[p] for o in applied})) for p in paths]


def _paired_paths(claim: ClaimSpec, applied: Sequence[Mapping[str, Any]]) -> list[str]:
    """The member paths a sample takes from its paired member: those neither compared nor sampled."""
    own = {claim.compare.path, *(p for f in claim.sampled for p in (f.path, *f.also))}
    return sorted(set().union(*applied) - own) if applied else []


def base_value(scenario: Scenario, path: str) -> Any:
    """The value the base scenario gives ``path`` (its defaults point)."""
    node: Any = scenario.model_dump(mode="python")
    for part in path.split("."):
        node = node[part]
    if node is None or isinstance(node, dict | list):
        raise ValueError(f"{path}: a sampled path needs a plain value in the base scenario, got {node!r}")
    return node


def claim_points(
    claim: ClaimSpec, spec: Experiment, samples: int, applied: Sequence[Mapping[str, Any]] = ()
) -> pd.DataFrame:
    """The design: sample 0 (the defaults: the scenario file's own parameter set) and ``samples``
    Latin-hypercube samples of the levers and uncertainties (seeded by ``design_seed``), each crossed
    with every arm; ``point`` = sample × arms + arm. With ``applied`` (the members' overrides) the
    defaults are the members' own experiment (:func:`claim_tables`), so there is no sample 0, and
    sample s ≥ 1 takes member (s − 1) mod K's values for every member path the claim does not sample:
    the samples spread over the calibrated behaviour rather than sit on the file's one set."""
    sampled = claim.sampled
    paired = _paired_paths(claim, applied)
    rows: dict[int, dict[str, Any]] = {}
    if not applied:
        rows[0] = {p: base_value(spec.scenario, p) for f in sampled for p in (f.path, *f.also)}
    if sampled and samples:
        unit = qmc.LatinHypercube(len(sampled), rng=np.random.default_rng(claim.design_seed)).random(samples)
        columns = [f.from_unit(unit[:, j]) for j, f in enumerate(sampled)]
        for i in range(samples):
            rows[i + 1] = {p: columns[j][i] for j, f in enumerate(sampled) for p in (f.path, *f.also)}
            rows[i + 1].update({p: applied[i % len(applied)][p] for p in paired})
    arms = claim.compare.values
    design = [
        {"point": s * len(arms) + a, claim.compare.path: value_label(value), **row}
        for s, row in rows.items()
        for a, value in enumerate(arms)
    ]
    tied = [p for f in sampled for p in f.also]
    return pd.DataFrame(design)[["point", claim.compare.path, *(f.path for f in sampled), *tied, *paired]]


def with_sample_and_arm(table: pd.DataFrame, arms: int) -> pd.DataFrame:
    """The runs with ``sample`` (point // arms) and ``arm`` (point % arms) columns."""
    return table.assign(**{SAMPLE: table["point"] // arms, ARM: table["point"] % arms})


def read_ensemble(path: str | Path) -> pd.DataFrame:
    """A calibrated ensemble as a frame (``member`` 0, 1, … and one column per parameter path), read
    and checked as every command reads one (:func:`speedtrap.experiments.ensemble.load_ensemble`
    against the behaviour parameters table: known paths, values in their ranges); ``ValueError`` or
    ``FileNotFoundError`` naming the file otherwise."""
    from speedtrap.experiments.ensemble import load_ensemble
    from speedtrap.validation.parameters import load_parameters

    members = load_ensemble(path, parameters=load_parameters())
    frame = pd.DataFrame(members)
    frame.insert(0, MEMBER, range(len(members)))
    return frame


def select_members(ensemble: pd.DataFrame, count: int | None) -> pd.DataFrame:
    """``count`` members of ``ensemble`` (a :func:`read_ensemble` frame), evenly spaced through the
    file as ``compare`` chooses them (:func:`speedtrap.experiments.ensemble.choose_members`), renumbered
    0, 1, …; ``None``: every member. ``ValueError`` when the file has fewer than ``count`` members."""
    from speedtrap.experiments.ensemble import choose_members

    if count is None:
        return ensemble
    if count < 1 or count > len(ensemble):
        raise ValueError(f"--members {count}: the ensemble has {len(ensemble)} members")
    index, _ = choose_members(len(ensemble), 2 * count)
    chosen = ensemble.iloc[index].reset_index(drop=True)
    chosen[MEMBER] = range(len(chosen))
    return chosen


def applied_members(
    claim: ClaimSpec, scenario: Scenario, members: pd.DataFrame
) -> tuple[list[dict[str, Any]], list[str]]:
    """Each member's overrides of ``scenario`` (as ``compare`` applies a member:
    :func:`speedtrap.experiments.ensemble.member_overrides`, the claim's compared path kept) and the
    member paths left out, with why."""
    from speedtrap.experiments.ensemble import member_overrides

    applied, left = [], {}
    for row in members.drop(columns=MEMBER).to_dict(orient="records"):
        overrides, out = member_overrides(scenario, row, keep=(claim.compare.path,))
        applied.append(overrides)
        left.update(out)
    if not set().union(*applied):
        raise ValueError("the ensemble names no field of this claim's scenario")
    return applied, [f"{p} ({why})" for p, why in sorted(left.items())]


def _ensemble_experiment(
    claim: ClaimSpec, spec: Experiment, applied: Sequence[Mapping[str, Any]]
) -> tuple[Experiment, pd.DataFrame]:
    """The defaults under every member (each arm, the claim's seeds): ``<name>-ensemble`` and its
    points, point = member × arms + arm."""
    paths = sorted(set().union(*applied))
    factors = [Factor(path=claim.compare.path, values=claim.compare.values), *_member_factors(paths, applied)]
    data = spec.model_dump(mode="python", exclude={"quick"})
    data.update(name=f"{spec.name}-ensemble", scenario=spec.scenario, factors=factors)
    data["design"] = {"kind": "lhs", "points": len(applied), "seed": 0}
    arms = claim.compare.values
    points = pd.DataFrame(
        [
            {"point": m * len(arms) + a, claim.compare.path: value_label(value), **{p: o[p] for p in paths}}
            for m, o in enumerate(applied)
            for a, value in enumerate(arms)
        ]
    )
    return Experiment.model_validate(data), points


Run = Callable[[Experiment, pd.DataFrame], pd.DataFrame]


def claim_tables(
    claim: ClaimSpec, *, quick: bool, members: pd.DataFrame | None, run: Run
) -> tuple[pd.DataFrame, pd.DataFrame | None, Experiment, int, list[str]]:
    """The claim's runs (with ``sample`` and ``arm``), the defaults' runs under each member
    (``sample`` numbering the members; ``None`` without ``members``), the experiment, its samples
    besides the defaults, and notes — each experiment through ``run`` (which runs or only reads)."""
    base, _ = claim_experiment(claim, quick=quick)
    applied, notes = applied_members(claim, base.scenario, members) if members is not None else ([], [])
    spec, samples = claim_experiment(claim, quick=quick, applied=applied)
    arms = len(claim.compare.values)
    runs = with_sample_and_arm(run(spec, claim_points(claim, spec, samples, applied)), arms)
    ensemble_runs = None
    if applied:
        ensemble_runs = with_sample_and_arm(run(*_ensemble_experiment(claim, spec, applied)), arms)
    if notes:
        notes = [f"ensemble values not applied to this claim's scenario: {', '.join(notes)}"]
    return runs, ensemble_runs, spec, samples, notes


@dataclass(frozen=True)
class ClaimRun:
    """A judged claim: its result, runs, experiment, samples besides the defaults and wall time (s)."""

    result: ClaimResult
    runs: pd.DataFrame
    spec: Experiment
    samples: int
    wall_s: float


def run_claim(
    claim: ClaimSpec,
    *,
    quick: bool = False,
    executor: str | Executor = "serial",
    workers: int | None = None,
    scheduler: str | None = None,
    results_dir: str | Path = "results",
    progress: bool = False,
    ensemble: pd.DataFrame | None = None,
) -> ClaimRun:
    """Run (or resume) the claim's experiment, judge it and write ``claim.json`` (module docstring)."""
    start = time.monotonic()
    model = MODELS[claim.model]

    def run(experiment: Experiment, points: pd.DataFrame) -> pd.DataFrame:
        return run_experiment(
            experiment,
            points=points,
            model=model,
            executor=executor,
            workers=workers,
            scheduler=scheduler,
            results_dir=results_dir,
            progress=progress,
        )

    runs, ensemble_runs, spec, samples, notes = claim_tables(claim, quick=quick, members=ensemble, run=run)
    result = describe_setting(judge_claim(claim, runs, ensemble_runs), claim, spec, quick=quick)
    result.notes.extend(notes)
    wall_s = time.monotonic() - start
    engines = engine_tally(ResultStore(Path(results_dir) / spec.name).read())  # the stored runs' engines
    write_result(result, Path(results_dir) / spec.name, wall_s=wall_s, quick=quick, engines=engines)
    return ClaimRun(result, runs, spec, samples, wall_s)


def describe_setting(result: ClaimResult, claim: ClaimSpec, spec: Experiment, *, quick: bool) -> ClaimResult:
    """``result`` with whether it is quick, the scenario run against the headline one, and the stated
    point (:mod:`speedtrap.experiments.claim_point`)."""
    difference = scenario_difference(spec.scenario)
    scenario = {
        "name": spec.scenario.name,
        "headline": not difference,
        "why": claim.scenario_why,
        "difference_from_headline": difference,
    }
    stated = None
    if claim.stated is not None:
        stated = {
            "label": claim.stated.label,
            "values": [
                {
                    "path": v.path,
                    "label": v.label,
                    "value": v.value,
                    "over": v.over,
                    "scenario_value": v.scenario_value,
                    "neighbourhood": [v.value / v.spread, v.value * v.spread],
                    "source": v.source,
                }
                for v in claim.stated.values
            ],
        }
    return replace(result, quick=quick, scenario=scenario, stated=stated)


def stored_runs(
    claim: ClaimSpec, *, quick: bool, results_dir: str | Path, ensemble: pd.DataFrame | None = None
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The claim's stored runs and its defaults' runs under the members of ``ensemble`` (as
    :func:`claim_tables` gives them), running nothing: ``ValueError`` when some are missing."""

    def read(spec: Experiment, points: pd.DataFrame) -> pd.DataFrame:
        table = run_experiment(
            spec,
            points=points,
            model=MODELS[claim.model],
            results_dir=results_dir,
            progress=False,
            max_runs=0,
        )
        expected = len(points) * spec.replications
        if len(table) != expected:
            raise ValueError(f"{spec.name}: {len(table)} of {expected} runs stored; run the claim first")
        return table

    runs, ensemble_runs, *_ = claim_tables(claim, quick=quick, members=ensemble, run=read)
    return runs, ensemble_runs


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.generic):
        return _json_safe(value.item())
    return value


def result_payload(
    result: ClaimResult, *, wall_s: float, quick: bool, engines: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """What ``claim.json`` holds: the result, the wall time, how to remake it, provenance (with
    ``engines``, how many runs each engine ran, :func:`~speedtrap.experiments.store.engine_tally`)."""
    command = "speedtrap claims" + (" --quick" if quick else "") + f" --only {result.name}"
    payload = result.as_dict() | {"wall_s": wall_s, "quick": quick, "command": command}
    if engines is not None:
        payload["engines"] = dict(engines)
    payload["provenance"] = provenance(engines)
    return dict(_json_safe(payload))


def write_result(
    result: ClaimResult,
    directory: Path,
    *,
    wall_s: float,
    quick: bool,
    engines: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``claim.json`` into the claim's results directory. ``wall_s`` is this invocation's wall
    time; ``wall_s_total`` adds it to the total the file held before (its ``wall_s`` where it holds no
    total), so a study resumed over several invocations, or judged again from its stored runs,
    keeps the wall time its runs took."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / RESULT_FILE
    before = 0.0
    if path.is_file():
        try:
            old = json.loads(path.read_text())
            before = float(old.get("wall_s_total", old.get("wall_s")) or 0.0)
        except (ValueError, TypeError, AttributeError):
            before = 0.0  # an unreadable earlier result: its time is not known
    payload = result_payload(result, wall_s=wall_s, quick=quick, engines=engines)
    payload["wall_s_total"] = before + wall_s
    path.write_text(json.dumps(payload, indent=2, allow_nan=False) + "\n")
    return path


def run_claims(names: Sequence[str] | None = None, **options: Any) -> tuple[list[ClaimRun], float]:
    """Run every claim (or those named) with :func:`run_claim`'s ``options``; the runs and the total
    wall time in seconds."""
    start = time.monotonic()
    claims = [load_claim(n) for n in (names or claim_names())]
    done = [run_claim(claim, **options) for claim in claims]
    return done, time.monotonic() - start


__all__ = [
    "CLAIMS_SUBDIR",
    "MODELS",
    "QUICK_MARK",
    "RESULT_FILE",
    "ClaimRun",
    "base_value",
    "claim_experiment",
    "claim_names",
    "claim_points",
    "claims_dir",
    "describe_setting",
    "format_result",
    "load_claim",
    "read_ensemble",
    "result_payload",
    "run_claim",
    "run_claims",
    "select_members",
    "stored_runs",
    "with_sample_and_arm",
    "write_result",
]
