"""The base class of every speedtrap spec: frozen, validated, passive data."""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict


class Spec(BaseModel):
    """A frozen pydantic model that rejects unknown fields.

    Specs are data: engines read them, never mutate them. Derived variants are made with
    :meth:`with_overrides`, which goes through validation again.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)

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
