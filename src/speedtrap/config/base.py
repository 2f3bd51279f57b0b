"""The base class of every speedtrap spec: frozen, validated, passive data.

Numbers are checked once, here, for every field of every spec: a numeric field refuses booleans
and strings (``developers = true`` is not one developer), NaN, infinities, magnitudes above
:data:`MAX_MAGNITUDE` (which would make a run hang or overflow) and subnormal floats (``5e-324``: no
quantity speedtrap models is that small, and dividing by one overflows to infinity). A negative zero
is read as zero, so a bound ``ge=0``/``gt=0`` treats ``-0.0`` as ``0``. A field where infinity means
something ("never") opts in with ``Field(..., allow_inf_nan=True)``; NaN is refused everywhere.

A **duration** (a field whose name ends in ``_s``, or the median of a distribution such a field
holds) is 0 or at least :data:`MIN_DURATION_S`; which durations must not be 0 at all is checked where
the scenario is whole (:mod:`speedtrap.config.scenario`).
"""

from __future__ import annotations

import math
import sys
import types
import typing
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator
from pydantic.types import AllowInfNan

MAX_MAGNITUDE = 1e15
"""Largest magnitude a numeric spec field accepts (fields that allow infinity excepted): beyond
every physical quantity speedtrap models, below where float seconds lose sub-second resolution
and integers overflow int64."""

MIN_DURATION_S = 1e-6
"""Shortest positive duration a spec accepts, seconds (a duration may still be 0 where its field
allows it). One microsecond is below anything speedtrap models (a decode step takes milliseconds,
people act in tenths of a second) and far above the resolution of the simulated clock: at the longest
horizon (3.2e7 s) adjacent float64 times are 3.7e-9 s apart, so every step of at least this length
moves the clock forward. A smaller step could leave the clock where it was and repeat without end."""

_NUMBER_TYPES: tuple[type, ...] = (int, float)


def _leaf_types(annotation: Any) -> set[Any]:
    """The scalar types a field's annotation admits, looking through unions, lists and mappings."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType, typing.Annotated):
        args = typing.get_args(annotation)
        args = args[:1] if origin is typing.Annotated else args
        return set().union(*(_leaf_types(a) for a in args))
    if origin in (list, tuple, set, frozenset):
        return set().union(*(_leaf_types(a) for a in typing.get_args(annotation) if a is not Ellipsis))
    if origin is dict:
        args = typing.get_args(annotation)
        return _leaf_types(args[1]) if len(args) == 2 else {Any}
    return {annotation}


def _check_number(value: Any, *, leaves: set[Any], allow_inf: bool) -> None:
    """Raise ``ValueError`` when ``value`` (or an item of it) is not an acceptable number."""
    if isinstance(value, list | tuple):
        for item in value:
            _check_number(item, leaves=leaves, allow_inf=allow_inf)
        return
    if isinstance(value, dict):
        for item in value.values():
            _check_number(item, leaves=leaves, allow_inf=allow_inf)
        return
    if isinstance(value, bool):
        if bool not in leaves:
            raise ValueError(f"expected a number, got the boolean {str(value).lower()}")
        return
    if isinstance(value, str):
        if str not in leaves:
            raise ValueError(f"expected a number, got the string {value[:40]!r}")
        return
    if isinstance(value, float) and math.isnan(value):
        raise ValueError("expected a number, got nan")
    if isinstance(value, float) and 0.0 < abs(value) < sys.float_info.min:
        raise ValueError(
            f"got the subnormal number {value!r}, too small to compute with: give a magnitude of at least "
            f"{sys.float_info.min:.3g} (or 0 where the field allows it)"
        )
    if isinstance(value, int | float):
        if isinstance(value, float) and math.isinf(value):
            if not allow_inf:
                raise ValueError(f"must be finite, got {value}")
        elif abs(value) > MAX_MAGNITUDE and not allow_inf:
            raise ValueError(f"must be at most {MAX_MAGNITUDE:.0e} in magnitude, got {_shown_number(value)}")


def _shown_number(value: float) -> str:
    """``value`` with three significant digits; an integer too large for a float by its digits."""
    try:
        return f"{value:.3g}"
    except OverflowError:
        return f"an integer of about {int(int(value).bit_length() * math.log10(2)) + 1:,} digits"


_RULES: dict[tuple[type, str], tuple[set[Any], bool] | None] = {}


def _number_rule(cls: type[BaseModel], name: str) -> tuple[set[Any], bool] | None:
    """(scalar types, infinity allowed) of a numeric field, ``None`` for other fields; cached."""
    key = (cls, name)
    if key not in _RULES:
        field = cls.model_fields[name]
        leaves = _leaf_types(field.annotation)
        numeric = bool(leaves & set(_NUMBER_TYPES)) and Any not in leaves
        allow_inf = any(isinstance(m, AllowInfNan) and m.allow_inf_nan for m in field.metadata)
        _RULES[key] = (leaves, allow_inf) if numeric else None
    return _RULES[key]


class Spec(BaseModel):
    """A frozen pydantic model that rejects unknown fields and implausible numbers.

    Specs are data: engines read them, never mutate them. Derived variants are made with
    :meth:`with_overrides`, which goes through validation again.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True, allow_inf_nan=False)

    durations_have_floor: ClassVar[bool] = True
    """Whether this spec's durations are held to :data:`MIN_DURATION_S` (hardware's latencies per
    layer or hop, parts of a decode step and microseconds themselves, are not)."""

    @field_validator("*", mode="before")
    @classmethod
    def _plain_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        if info.field_name is None:  # pragma: no cover - field validators always have a field
            return value
        rule = _number_rule(cls, info.field_name)
        if rule is not None:
            _check_number(value, leaves=rule[0], allow_inf=rule[1])
            if type(value) is float and value == 0.0:
                value = 0.0  # a negative zero is zero
            if cls.durations_have_floor and is_duration(info.field_name):
                check_duration(value)
        elif cls.durations_have_floor and is_duration(info.field_name):
            median = value.get("median") if isinstance(value, dict) else getattr(value, "median", None)
            check_duration(median, "median ")  # a distribution of durations (LogNormal)
        return value

    def with_overrides(self, overrides: dict[str, Any]) -> Self:
        """Return a copy with dotted-path overrides applied and re-validated.

        ``{"price.output_usd_per_mtok": 30.0}`` replaces one nested field; a path through a
        mapping uses the key as a segment. Unknown paths fail validation with the path named.
        """
        data = self.model_dump(mode="python")
        for path, value in overrides.items():
            set_path(data, path, value)
        return type(self).model_validate(data)


RATE_SUFFIXES = ("_gb_s", "_tb_s", "_tflop_s", "_tok_s")
"""Name endings of rates (per second), which end in ``_s`` without being durations."""


def is_duration(name: str) -> bool:
    """Whether the field ``name`` holds a duration in seconds (its name ends in ``_s``, not a rate's)."""
    return name.endswith("_s") and not name.endswith(RATE_SUFFIXES)


def check_duration(value: Any, what: str = "") -> None:
    """Raise ``ValueError`` when ``value`` (a duration in seconds, or items of one) is positive and
    below :data:`MIN_DURATION_S`; ``what`` names the part of the field (``"median "``)."""
    if isinstance(value, list | tuple):
        for item in value:
            check_duration(item, what)
    elif isinstance(value, dict):
        for item in value.values():
            check_duration(item, what)
    elif isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < MIN_DURATION_S:
        raise ValueError(
            f"{what}must be 0 or at least {MIN_DURATION_S:g} s (a shorter step may not move the "
            f"simulated clock), got {value!r} s"
        )


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Set ``data[a][b][c] = value`` for ``path == "a.b.c"``, creating mappings as needed.

    Raises ``KeyError`` naming the path when a segment crosses a non-mapping value.
    """
    parts = path.split(".")
    node: Any = data
    for i, part in enumerate(parts[:-1]):
        if node.get(part) is None:
            node[part] = {}
        node = node[part]
        if not isinstance(node, dict):
            raise KeyError(f"{'.'.join(parts[: i + 1])} is not a table; cannot set {path}")
    node[parts[-1]] = value


def describe_errors(exc: ValidationError) -> str:
    """A validation error as one line: ``field.path: message; ...`` (pydantic's "Value error, "
    prefix dropped)."""
    parts = []
    for error in exc.errors():
        path = ".".join(str(p) for p in error["loc"])
        msg = error["msg"].removeprefix("Value error, ")
        parts.append(f"{path}: {msg}" if path else msg)
    return "; ".join(parts)
