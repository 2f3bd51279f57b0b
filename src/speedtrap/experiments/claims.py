"""The claims study: each claim of the fast-inference debate as an experiment with a computed verdict.

A claim file ``experiments/claims/<name>.toml`` (:class:`~speedtrap.config.claim.ClaimSpec`) names
the arms compared (values of one scenario path, the baseline first), the levers and uncertainties
sampled (with their sources) and the tests. :func:`run_claim` builds its experiment — the arms ×
the **defaults** (the base scenario) and ``points`` Latin-hypercube samples of the levers and
uncertainties, every point on the same replication seeds — runs it through
:func:`~speedtrap.experiments.runner.run_experiment` (stored as it runs under
``<results_dir>/<name>/``, resumed when run again, on any executor), and judges it
(:func:`speedtrap.analysis.claim_verdicts.judge_claim`: effect sizes with paired 95% intervals, the
verdict by its stated rule, PRIM and CART boxes in words). ``claim.json`` beside the runs records the
result and the wall time.

**Behavioural uncertainty (the hook).** A calibrated ensemble — a CSV with a ``member`` column and
one column per scenario path (the format of the calibration's ``ensemble.csv``) — is passed as
``ensemble``: the defaults are then run under each member too (``<name>-ensemble/``) and every
verdict carries the members' 2.5–97.5 percentile interval. Without one the slot says so (the stored
ensemble is not the default here yet: the defaults' seed interval is computed on the scenario's own
parameter set, docs/claims.md). Member
columns naming no field of a claim's scenario are left out for that claim (noted in its result).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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
from speedtrap.experiments.executors import Executor
from speedtrap.experiments.files import experiments_dir
from speedtrap.experiments.runner import Model, run_experiment
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
    """A claim by name (``experiments/claims/<name>.toml``) or by path."""
    path = Path(name)
    if path.suffix != ".toml":
        path = claims_dir() / f"{name}.toml"
        if not path.is_file():
            raise ValueError(f"unknown claim {name!r} (claims: {', '.join(claim_names())})")
    return ClaimSpec.from_toml(path)


def claim_experiment(claim: ClaimSpec, *, quick: bool = False) -> tuple[Experiment, int]:
    """The claim's experiment (its quick variant with ``quick``, named ``<name>-quick``) and how many
    Latin-hypercube samples it takes besides the defaults."""
    factors = [
        Factor(path=claim.compare.path, values=claim.compare.values),
        *(f.as_factor() for f in claim.sampled),
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
    return spec, samples


def base_value(scenario: Scenario, path: str) -> Any:
    """The value the base scenario gives ``path`` (its defaults point)."""
    node: Any = scenario.model_dump(mode="python")
    for part in path.split("."):
        node = node[part]
    if node is None or isinstance(node, dict | list):
        raise ValueError(f"{path}: a sampled path needs a plain value in the base scenario, got {node!r}")
    return node


def claim_points(claim: ClaimSpec, spec: Experiment, samples: int) -> pd.DataFrame:
    """The design: sample 0 (the defaults) and ``samples`` Latin-hypercube samples of the levers and
    uncertainties (seeded by ``design_seed``), each crossed with every arm; ``point`` = sample × arms
    + arm."""
    sampled = claim.sampled
    rows: list[dict[str, Any]] = [{f.path: base_value(spec.scenario, f.path) for f in sampled}]
    if sampled and samples:
        unit = qmc.LatinHypercube(len(sampled), rng=np.random.default_rng(claim.design_seed)).random(samples)
        columns = [f.from_unit(unit[:, j]) for j, f in enumerate(sampled)]
        rows += [{f.path: columns[j][i] for j, f in enumerate(sampled)} for i in range(samples)]
    arms = claim.compare.values
    design = [
        {"point": s * len(arms) + a, claim.compare.path: value_label(value), **row}
        for s, row in enumerate(rows)
        for a, value in enumerate(arms)
    ]
    return pd.DataFrame(design)[["point", claim.compare.path, *(f.path for f in sampled)]]


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


def _ensemble_runs(
    claim: ClaimSpec, spec: Experiment, members: pd.DataFrame, run: Callable[..., pd.DataFrame]
) -> tuple[pd.DataFrame, list[str]]:
    """The defaults under every member (each arm, the same seeds): runs with ``sample`` = member
    index, and the member's paths left out, with why (as ``compare`` applies a member:
    :func:`speedtrap.experiments.ensemble.member_overrides`, the claim's compared path kept)."""
    from speedtrap.experiments.ensemble import member_overrides

    applied, left = [], {}
    for row in members.drop(columns=MEMBER).to_dict(orient="records"):
        overrides, out = member_overrides(spec.scenario, row, keep=(claim.compare.path,))
        applied.append(overrides)
        left.update(out)
    paths = sorted(set().union(*applied))
    if not paths:
        raise ValueError("the ensemble names no field of this claim's scenario")
    factors = [
        Factor(path=claim.compare.path, values=claim.compare.values),
        *(Factor(path=p, values=sorted({o[p] for o in applied})) for p in paths),
    ]
    data = spec.model_dump(mode="python", exclude={"quick"})
    data.update(name=f"{spec.name}-ensemble", scenario=spec.scenario, factors=factors)
    data["design"] = {"kind": "lhs", "points": len(members), "seed": 0}
    ensemble_spec = Experiment.model_validate(data)
    arms = claim.compare.values
    points = pd.DataFrame(
        [
            {"point": m * len(arms) + a, claim.compare.path: value_label(value), **{p: o[p] for p in paths}}
            for m, o in enumerate(applied)
            for a, value in enumerate(arms)
        ]
    )
    table = run(ensemble_spec, points)
    return with_sample_and_arm(table, len(arms)), [f"{p} ({why})" for p, why in sorted(left.items())]


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
    spec, samples = claim_experiment(claim, quick=quick)
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

    arms = len(claim.compare.values)
    runs = with_sample_and_arm(run(spec, claim_points(claim, spec, samples)), arms)
    ensemble_runs, notes = None, []
    if ensemble is not None:
        ensemble_runs, skipped = _ensemble_runs(claim, spec, ensemble, run)
        if skipped:
            notes.append(f"ensemble values not applied to this claim's scenario: {', '.join(skipped)}")
    result = judge_claim(claim, runs, ensemble_runs)
    result.notes.extend(notes)
    wall_s = time.monotonic() - start
    write_result(result, Path(results_dir) / spec.name, wall_s=wall_s, quick=quick)
    return ClaimRun(result, runs, spec, samples, wall_s)


def stored_runs(claim: ClaimSpec, *, quick: bool, results_dir: str | Path) -> pd.DataFrame:
    """The claim's stored runs (with ``sample`` and ``arm``), running nothing: ``ValueError`` when
    some are missing."""
    spec, samples = claim_experiment(claim, quick=quick)
    points = claim_points(claim, spec, samples)
    table = run_experiment(
        spec, points=points, model=MODELS[claim.model], results_dir=results_dir, progress=False, max_runs=0
    )
    expected = len(points) * spec.replications
    if len(table) != expected:
        raise ValueError(f"{spec.name}: {len(table)} of {expected} runs stored; run the claim first")
    return with_sample_and_arm(table, len(claim.compare.values))


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


def result_payload(result: ClaimResult, *, wall_s: float, quick: bool) -> dict[str, Any]:
    """What ``claim.json`` holds: the result, the wall time, how to remake it, provenance."""
    command = "speedtrap claims" + (" --quick" if quick else "") + f" --only {result.name}"
    payload = result.as_dict() | {"wall_s": wall_s, "quick": quick, "command": command}
    payload["provenance"] = provenance()
    return dict(_json_safe(payload))


def write_result(result: ClaimResult, directory: Path, *, wall_s: float, quick: bool) -> Path:
    """Write ``claim.json`` into the claim's results directory."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / RESULT_FILE
    payload = result_payload(result, wall_s=wall_s, quick=quick)
    path.write_text(json.dumps(payload, indent=2, allow_nan=False) + "\n")
    return path


def _interval(mean: float, low: float, high: float) -> str:
    if np.isnan(mean):
        return "n/a"
    if np.isnan(low):
        return f"{mean:.3g} (no interval)"
    return f"{mean:.3g} [{low:.3g}, {high:.3g}]"


def format_result(result: ClaimResult, *, wall_s: float | None = None) -> list[str]:
    """The claim's verdict and its parts as lines of text."""
    lines = [f"{result.name}: {result.verdict.upper()} — {result.statement}"]
    if len(result.arm_verdicts) > 1:
        lines.append("  by arm: " + "; ".join(f"{a}: {v}" for a, v in result.arm_verdicts.items()))
    for part in result.parts:
        d = part.defaults
        lines.append(f"  {part.arm} · {part.test}: {part.verdict} (at the defaults: {part.at_defaults})")
        seed = _interval(d.mean, d.ci_low, d.ci_high) + (f"; {d.caveat}" if d.caveat else "")
        lines.append(f"    effect at the defaults, 95% seed interval over {d.n} seeds: {seed}")
        b = part.behavioural
        behavioural = (
            _interval(b["mean"], b["low"], b["high"]) + f" over {b['members']} members"
            if b.get("available")
            else b["note"]
        )
        lines.append(f"    behavioural uncertainty: {behavioural}")
        if part.samples:
            lines.append(f"    holds in {part.holds_share:.0%} of {part.samples} sampled assumptions")
        if part.flip_words:
            lines.append(f"    PRIM: {part.flip_words}")
        if part.cart_words:
            agree = f" (agreement with PRIM {part.agreement:.2f})" if part.agreement is not None else ""
            lines.append(f"    CART: {part.cart_words}{agree}")
    for rep in result.reported:
        d = rep.difference
        lines.append(
            f"  reported: {rep.outcome}, {rep.arm} − baseline {_interval(d.mean, d.ci_low, d.ci_high)}"
            f" (baseline {rep.baseline_mean:.3g})"
        )
    lines.extend(f"  note: {note}" for note in result.notes)
    if wall_s is not None:
        lines.append(f"  {result.runs} runs, wall time {wall_s:.1f} s")
    return lines


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
    "RESULT_FILE",
    "ClaimRun",
    "base_value",
    "claim_experiment",
    "claim_names",
    "claim_points",
    "claims_dir",
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
