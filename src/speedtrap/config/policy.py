"""Routing-policy specs: the data half of a policy, selected by its ``kind``.

Each policy lives in one file of :mod:`speedtrap.policies`, which declares a subclass of
:class:`PolicySpec` with a ``kind: Literal[...]`` field and a ``build`` method returning the runnable
policy; subclassing registers it. A scenario names the policy by ``kind`` and this registry picks the
class. The dependency runs one way: the policies import these specs, never the reverse (this module
only loads the built-in policies' package by name, :data:`BUILTIN_POLICIES_MODULE`, so that their
kinds are registered before a scenario is read); :func:`speedtrap.policies.build_policy` turns a spec
into a policy.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field, model_validator

from speedtrap.config.base import Spec

if TYPE_CHECKING:
    from speedtrap.config.backend import Backend

BUILTIN_POLICIES_MODULE = "speedtrap.policies"


class RouteSpec(Spec):
    """A backend and, optionally, one of its tiers (``None``: the backend's default tier).

    In a scenario file a bare string is the backend name: ``"gpu-batched"``.
    """

    backend: str = Field(min_length=1)
    tier: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, data: Any) -> Any:
        return {"backend": data} if isinstance(data, str) else data


class PolicySpec(Spec):
    """Base of every routing-policy spec; subclasses register themselves under their ``kind``."""

    registry: ClassVar[dict[str, type[PolicySpec]]] = {}

    kind: str = Field(min_length=1, description="Which policy; selects the class through the registry.")

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        kind = cls.model_fields["kind"].default
        if not isinstance(kind, str):
            raise TypeError(f"{cls.__name__} must give its 'kind' field a string default")
        PolicySpec.registry[kind] = cls

    def references(self, backends: Mapping[str, Backend]) -> dict[str, tuple[str, str | None]]:
        """The (backend, tier or None) pairs this spec names, keyed by the field that names them."""
        raise NotImplementedError

    def check(self, backends: Mapping[str, Backend], difficulties: list[str]) -> None:
        """Raise ``ValueError`` naming the field when a referenced backend or tier does not exist
        (subclasses add their own checks, e.g. that every difficulty is routed)."""
        for field, (backend, tier) in self.references(backends).items():
            if backend not in backends:
                known = ", ".join(sorted(backends)) or "none"
                # a tier field whose backend comes from the spec's own ``backend`` field names that one
                named = "backend" if getattr(self, "backend", None) == backend else field
                raise ValueError(f"policy.{named}: unknown backend {backend!r} (known: {known})")
            tiers = [t.name for t in backends[backend].tiers]
            if tier is not None and tier not in tiers:
                raise ValueError(
                    f"policy.{field}: backend {backend!r} has no tier {tier!r} (known: {', '.join(tiers)})"
                )


def policy_spec_class(kind: str) -> type[PolicySpec]:
    """The registered spec class for ``kind`` (loading the built-in policies on first use).

    Raises ``KeyError`` listing the known kinds when ``kind`` is not registered.
    """
    if kind not in PolicySpec.registry:
        importlib.import_module(BUILTIN_POLICIES_MODULE)
    try:
        return PolicySpec.registry[kind]
    except KeyError:
        known = ", ".join(sorted(PolicySpec.registry))
        raise KeyError(f"unknown policy kind {kind!r} (known: {known})") from None


def known_policy_kinds() -> list[str]:
    """Every registered policy kind, sorted (built-ins included)."""
    importlib.import_module(BUILTIN_POLICIES_MODULE)
    return sorted(PolicySpec.registry)
