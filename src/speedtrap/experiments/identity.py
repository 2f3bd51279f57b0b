"""What a result store's runs are of, and which stored runs a changed experiment file may reuse.

A store's ``spec.json`` records the experiment spec, the resolved base scenario, the model, the
replication seeds and ``points``: every design point the store holds runs of, each with its number
(the runs' ``point`` column) and its factor values. A stored run belongs to the design point with
those factor values and to the replication with its seed (``run_key``), not to a position in the
file's design, so:

* **full_factorial designs** (``points_fixed`` false): a point is its factor values — numbers
  compared as floats (``2`` and ``2.0`` are one point), tables and lists by their JSON text. The file
  may gain or lose ``values``, ``levels`` or ``choices`` of the same factor paths, reorder them, or
  ask for more or fewer replications: stored points that remain are reused, new ones get the next
  numbers, and points dropped from the file stay on disk, unread.
* **lhs / sobol designs and explicit point tables** (``run_experiment(points=...)``, e.g. a Saltelli
  sample; ``points_fixed`` true) are draws, not chosen values: another sample (more points, another
  sampler seed, other ranges) redraws them, so the point list itself is part of the identity. The
  number of replications may change, and the list may grow or shrink at its end (one list the
  other's start: a calibration's final check grown on a rerun); the longer list is recorded.
* **Always refused**, naming what changed: another base scenario (its ``value`` section aside),
  root seed, outcome list, model, experiment name, design kind or set of factor paths.

Stores written before points were matched by value (``format`` 1: the same layout, points numbered
by their position in the design) are read as they are; their ``spec.json`` is rewritten as format 2
when a sweep next opens them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from speedtrap.config.experiment import Experiment
from speedtrap.experiments.store import PROVENANCE_KEY, STORE_FORMAT, differences, mismatch_error

POINT = "point"
RUN_KEY = ["factor values", "seed"]
"""How a stored run is matched to the experiment (recorded in spec.json as ``run_key``): by its
point's factor values and its replication's seed."""


def model_name(model: Callable[..., Any]) -> str:
    """``module.qualname`` of a model function (or of a callable object's class)."""
    target = model if hasattr(model, "__qualname__") else type(model)
    return f"{target.__module__}.{target.__qualname__}"


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot store {value!r} in spec.json")


def experiment_identity(
    spec: Experiment,
    points: pd.DataFrame,
    seeds: Sequence[int],
    model: Callable[..., Any],
    *,
    fixed: bool | None = None,
) -> dict[str, Any]:
    """What a result store's runs are of (written to its spec.json): the experiment spec (without its
    quick table, which does not change these runs), the resolved base scenario, the design points,
    the replication seeds, the model's name, whether the point list is fixed (``fixed``; default:
    for lhs and sobol designs) and how runs are matched (:data:`RUN_KEY`)."""
    record = {
        "experiment": spec.model_dump(mode="json", exclude={"scenario", "quick"}),  # quick: not these runs
        # value prices the outputs and does not change the runs
        "base_scenario": spec.scenario.model_dump(mode="json", exclude={"value"}),
        "points": points.to_dict(orient="records"),
        "seeds": list(seeds),
        "model": model_name(model),
        "points_fixed": spec.design.kind != "full_factorial" if fixed is None else fixed,
        "run_key": RUN_KEY,
    }
    result: dict[str, Any] = json.loads(json.dumps(record, default=_json_default))
    return result


def _canonical(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, int | float) and not isinstance(value, bool) and float(value) == value:
        return float(value)
    return value


def point_key(values: Mapping[str, Any]) -> str:
    """A design point's identity: its factor values (numbers as floats), as canonical JSON text."""
    return json.dumps({path: _canonical(v) for path, v in values.items() if path != POINT}, sort_keys=True)


@dataclass(frozen=True)
class StoreAdoption:
    """How an experiment meets a store: ``identity`` is what spec.json is to hold (``rewrite``: it
    differs from what spec.json holds now), ``numbers`` the store's number of each design point (in
    the design's row order)."""

    identity: dict[str, Any]
    numbers: list[int]
    rewrite: bool = False


def _upgraded(stored: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """A stored identity without format and provenance, a format-1 one given format 2's fields.

    Format 1 did not record whether its points were an explicit table: its points are taken as fixed
    when its design was sampled or the new points are fixed (it compared its point list exactly).
    """
    record = {k: v for k, v in stored.items() if k not in ("format", PROVENANCE_KEY)}
    if "points_fixed" not in record:
        kind = record.get("experiment", {}).get("design", {}).get("kind", "full_factorial")
        record["points_fixed"] = kind != "full_factorial" or bool(new.get("points_fixed"))
    record.setdefault("run_key", RUN_KEY)
    return record


def _factor_paths(record: Mapping[str, Any]) -> list[str]:
    return sorted(f.get("path", "") for f in record.get("experiment", {}).get("factors", []))


def _unchanging(record: Mapping[str, Any], fixed: bool) -> dict[str, Any]:
    """The part of an identity that reused runs need unchanged (see the module docstring)."""
    experiment = {k: v for k, v in record.get("experiment", {}).items() if k != "replications"}
    if not fixed:
        experiment.pop("factors", None)
        experiment["design"] = {"kind": experiment.get("design", {}).get("kind")}
    part = {
        "experiment": experiment,
        "base_scenario": record.get("base_scenario"),
        "model": record.get("model"),
        "points_fixed": record.get("points_fixed"),
    }
    return part  # explicit points are compared by _changes (one list may extend the other)


def _changes(stored: dict[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What differs between two identities in a way that stored runs cannot be reused across."""
    fixed = bool(stored["points_fixed"] or new["points_fixed"])
    points: list[str] = []
    if fixed:  # explicit points may grow or shrink at the end: one list must begin the other
        old_points, new_points = list(stored.get("points") or []), list(new.get("points") or [])
        m = min(len(old_points), len(new_points))
        points = differences(old_points[:m], new_points[:m], "points")
        if points and len(old_points) != len(new_points):
            points = [f"points ({len(old_points)} → {len(new_points)} entries)"]
    before, after = _unchanging(stored, fixed), _unchanging(new, fixed)
    first, last = ("experiment", "base_scenario"), ("model", "points_fixed")
    changed = [
        *differences({k: before[k] for k in first}, {k: after[k] for k in first}),
        *points,  # in the order the identity lists them
        *differences({k: before[k] for k in last}, {k: after[k] for k in last}),
    ]
    old_paths, new_paths = _factor_paths(stored), _factor_paths(new)
    if not fixed and old_paths != new_paths:
        changed.append(f"factor paths ({', '.join(old_paths) or 'none'} → {', '.join(new_paths) or 'none'})")
    old_seeds, new_seeds = list(stored.get("seeds", [])), list(new.get("seeds", []))
    n = min(len(old_seeds), len(new_seeds))  # more or fewer replications: one list extends the other
    return changed + differences(old_seeds[:n], new_seeds[:n], "seeds")


def adopt(directory: str | Path, stored: Mapping[str, Any] | None, new: dict[str, Any]) -> StoreAdoption:
    """Match experiment identity ``new`` (:func:`experiment_identity`) to the ``stored`` one of the
    store in ``directory`` (``None``: a new store).

    Returns the identity to record — the stored points plus the new ones, the longer seed list and
    the larger number of replications — and each design point's number in the store. Raises
    :class:`~speedtrap.experiments.store.StoreMismatchError` naming what changed when stored runs
    cannot be reused.
    """
    if stored is None:
        return StoreAdoption(new, [int(p[POINT]) for p in new["points"]])
    if int(stored.get("format", 1)) > STORE_FORMAT:
        raise mismatch_error(directory, [f"format ({stored['format']}: written by a newer speedtrap)"])
    old = _upgraded(stored, new)
    changed = _changes(old, new)
    if changed:
        raise mismatch_error(directory, changed)
    seeds = max(list(old.get("seeds", [])), list(new["seeds"]), key=len)
    experiment = {**new["experiment"], "replications": len(seeds)}
    if new["points_fixed"]:
        numbers = [int(p[POINT]) for p in new["points"]]
        points = max(list(old.get("points") or []), list(new["points"]), key=len)  # the longer list
        return _adoption(stored, {**new, "experiment": experiment, "seeds": seeds, "points": points}, numbers)
    registry, numbers = _numbered(old.get("points", []), new["points"])
    return _adoption(stored, {**new, "experiment": experiment, "points": registry, "seeds": seeds}, numbers)


def _numbered(
    stored: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], list[int]]:
    """The stored points plus those of ``rows`` not among them (numbered on), and each row's number."""
    registry = [dict(p) for p in stored]
    number_of: dict[str, int] = {}
    for entry in registry:
        number_of.setdefault(point_key(entry), int(entry[POINT]))
    next_number = max((int(p[POINT]) for p in registry), default=-1) + 1
    numbers: list[int] = []
    for row in rows:
        key = point_key(row)
        if key not in number_of:
            number_of[key] = next_number
            registry.append({**row, POINT: next_number})
            next_number += 1
        numbers.append(number_of[key])
    return registry, numbers


def _adoption(stored: Mapping[str, Any], identity: dict[str, Any], numbers: list[int]) -> StoreAdoption:
    current = {k: v for k, v in stored.items() if k not in ("format", PROVENANCE_KEY)}
    rewrite = stored.get("format") != STORE_FORMAT or current != identity
    return StoreAdoption(identity, numbers, rewrite)
