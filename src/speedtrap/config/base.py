"""The base class of every speedtrap spec: frozen, validated, passive data.

Numbers are checked once, here, for every field of every spec: a numeric field refuses booleans
and strings (``developers = true`` is not one developer), NaN, infinities and magnitudes above
:data:`MAX_MAGNITUDE` (which would make a run hang or overflow). A field where infinity means
something ("never") opts in with ``Field(..., allow_inf_nan=True)``; NaN is refused everywhere.
"""

from __future__ import annotations

import math
import types
import typing
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator
from pydantic.types import AllowInfNan

MAX_MAGNITUDE = 1e15
"""Largest magnitude a numeric spec field accepts (fields that allow infinity excepted): beyond
every physical quantity speedtrap models, below where float seconds lose sub-second resolution
and integers overflow int64."""

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
    if isinstance(value, int | float):
        if math.isinf(value):
            if not allow_inf:
                raise ValueError(f"must be finite, got {value}")
        elif abs(value) > MAX_MAGNITUDE and not allow_inf:
            raise ValueError(f"must be at most {MAX_MAGNITUDE:.0e} in magnitude, got {value:.3g}")


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

    @field_validator("*", mode="before")
    @classmethod
    def _plain_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        if info.field_name is None:  # pragma: no cover - field validators always have a field
            return value
        rule = _number_rule(cls, info.field_name)
        if rule is not None:
            _check_number(value, leaves=rule[0], allow_inf=rule[1])
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
