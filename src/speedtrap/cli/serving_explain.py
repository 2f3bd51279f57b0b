"""``speedtrap pareto --explain``: why a fast tier is fast, mechanism by mechanism
(:mod:`speedtrap.serving.explain`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from speedtrap.cli.common import JSON_SCHEMA_VERSION, print_json, print_table

if TYPE_CHECKING:
    from speedtrap.config.backend import Backend

_TERMS: list[tuple[str, str]] = [
    ("weights read", "weights_s"),
    ("experts read", "experts_s"),
    ("KV cache read", "kv_s"),
    ("compute (decode)", "compute_s"),
    ("prompts in the step", "prompts_s"),
    ("expert all-to-all", "exchange_s"),
    ("collective transfers", "collectives_s"),
    ("collective latency", "collective_latency_s"),
    ("per-layer latency", "layer_latency_s"),
    ("per-step overhead", "step_overhead_s"),
    ("step", "step_s"),
]


def standard_counterpart(name: str) -> str:
    """The backend preset a fast preset is compared with: the same fleet at its standard tier."""
    from speedtrap.config.presets import BACKEND_PRESETS

    fast = BACKEND_PRESETS[name]
    for other, backend in BACKEND_PRESETS.items():
        same_fleet = backend.hardware == fast.hardware and backend.llm == fast.llm and other != name
        standard = backend.tier().name == "standard"  # not another premium or a discounted tier
        if same_fleet and standard and backend.tier().priority < fast.tier().priority:
            return other
    raise ValueError(f"backend {name} has no standard-tier preset on the same fleet to compare with")


def predicted_speeds(
    backends: list[Backend], shape: dict[str, Any], stack: str | None
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Each backend's predicted tok/s per stream and per chip (its typical batch, under ``shape``'s
    rule) with their 95% prediction intervals, and the intervals' description (one hardware: the
    presets compared share it)."""
    from speedtrap.cli.serving_intervals import describe, interval_record, unit_intervals
    from speedtrap.serving.pareto import steady_load
    from speedtrap.serving.replica import ReplicaPhysics

    speeds: dict[str, dict[str, Any]] = {}
    units = unit_intervals(backends[0].hardware.name, stack)
    for backend in backends:
        physics = ReplicaPhysics.from_backend(backend)
        load = steady_load(
            physics,
            backend.typical_batch,
            context_tokens=backend.typical_context_tokens,
            isl=shape["isl"],
            osl=shape["osl"],
            cached_tokens=shape["cached_tokens"],
        )
        record: dict[str, Any] = {}
        for column, value in (
            ("tok_s_per_user", load.tok_s_per_user),
            ("tok_s_per_chip", load.tok_s_per_chip),
        ):
            record[column] = value
            record[f"{column}_interval"] = interval_record(units[column], value)
        speeds[backend.name] = record
    return speeds, describe(units)


def explain_command(
    name: str, *, isl: int | None, osl: int | None, cached: int, json_out: bool, stack: str | None = None
) -> None:
    """Print (or ``--json``) each mechanism's share of ``name``'s faster steps and both steps' terms,
    and both presets' predicted speeds with their prediction intervals."""
    from dataclasses import asdict

    from speedtrap.config.presets import backend_preset
    from speedtrap.serving.explain import explain_fast_mode, step_terms, token_time_s

    fast = backend_preset(name)
    standard = backend_preset(standard_counterpart(name))
    shape: dict[str, Any] = {"isl": isl, "osl": osl, "cached_tokens": float(cached)}
    shares = explain_fast_mode(fast, standard, **shape)
    terms = [step_terms(standard, **shape), step_terms(fast, **shape)]
    speedup = shares[0].token_s_before / shares[-1].token_s_after
    rule = (
        "decode-only steps at the typical context"
        if isl is None
        else f"steady load, {isl:,} in / {osl:,} out"
    )
    speeds, intervals = predicted_speeds([standard, fast], shape, stack)
    if json_out:
        print_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "fast": fast.name,
                "standard": standard.name,
                "rule": rule,
                "speedup": speedup,
                "mechanisms": [asdict(s) for s in shares],
                "steps": {standard.name: asdict(terms[0]), fast.name: asdict(terms[1])},
                "speeds": speeds,
                "prediction_intervals": intervals,
            }
        )
        return
    print_table(
        f"{fast.name} vs {standard.name}: {speedup:.2f}× per stream ({rule}); "
        "share of the change in time per token",
        ["mechanism", "s/token before", "s/token after", "share", "note"],
        [
            (
                s.mechanism,
                f"{s.token_s_before:.4g}",
                f"{s.token_s_after:.4g}",
                f"{100 * s.share:.0f}%",
                s.note,
            )
            for s in shares
        ],
    )
    print_table(
        "The terms of one plain step (ms, without drafting); memory terms overlap compute: "
        "the step takes the longer of the two, plus the rest",
        [
            "term",
            f"{standard.name} ({terms[0].batch:g} streams)",
            f"{fast.name} ({terms[1].batch:g} streams)",
        ],
        [
            (label, f"{1e3 * getattr(terms[0], key):.3f}", f"{1e3 * getattr(terms[1], key):.3f}")
            for label, key in _TERMS
        ],
    )
    typer.echo(drafting_line(fast, standard, shape))
    print_speeds(speeds, intervals, rule)
    if fast.speculative is None:
        from speedtrap.config.backend import SpeculativeDecoding

        draft = SpeculativeDecoding()
        with_draft = token_time_s(fast.model_copy(update={"speculative": draft}), **shape)
        typer.echo(
            f"What if {fast.name} also drafted (speculative decoding, assumed α={draft.acceptance_rate}, "
            f"γ={draft.draft_tokens}, draft cost {draft.draft_cost}): "
            f"{shares[0].token_s_before / with_draft:.2f}× per stream instead."
        )


def drafting_line(fast: Backend, standard: Backend, shape: dict[str, Any]) -> str:
    """What of the two speeds rests on drafting: every other term of the presets' steps is fitted
    (``speedtrap validate serving``) or from a datasheet; speculative decoding's acceptance is assumed."""
    draft = fast.speculative or standard.speculative
    if draft is None:
        return (
            "Every term of both steps is fitted to published serving measurements or read from a "
            "datasheet; neither tier drafts tokens."
        )
    from speedtrap.serving.explain import token_time_s

    plain = [b.model_copy(update={"speculative": None}) for b in (standard, fast)]
    drafted = [1.0 / token_time_s(b, **shape) for b in (standard, fast)]
    fitted = [1.0 / token_time_s(b, **shape) for b in plain]
    return (
        f"Fitted terms only (no drafting): {standard.name} {fitted[0]:.1f}, "
        f"{fast.name} {fitted[1]:.1f} tok/s "
        f"per stream ({fitted[1] / fitted[0]:.2f}×); with the assumed drafting "
        f"(α={draft.acceptance_rate}): {drafted[0]:.1f} and "
        f"{drafted[1]:.1f} ({drafted[1] / drafted[0]:.2f}×). The ratio rests on the fitted terms, "
        "the absolute speeds on the assumed acceptance rate."
    )


def print_speeds(speeds: dict[str, dict[str, Any]], intervals: dict[str, Any], rule: str) -> None:
    """The presets' predicted speeds with their 95% prediction intervals, and what the intervals rest on."""

    def cell(record: dict[str, Any], column: str) -> str:
        ends = record[f"{column}_interval"]
        return f"{record[column]:.4g} ({ends['low']:.4g}–{ends['high']:.4g})"

    print_table(
        f"Predicted speeds ({rule}) with 95% prediction intervals for the measured speed",
        ["backend", "tok/s per stream (95% PI)", "tok/s per GPU (95% PI)"],
        [(name, cell(r, "tok_s_per_user"), cell(r, "tok_s_per_chip")) for name, r in speeds.items()],
    )
    for column, label in (("tok_s_per_user", "per stream"), ("tok_s_per_chip", "per GPU")):
        d = intervals[column]
        rough = "; rough: fewer than 10 residuals" if d["rough"] else ""
        typer.echo(
            f"Interval {label}: ×{d['factor_low']:.2f} to ×{d['factor_high']:.2f} of the prediction, "
            f"from the 2.5% and 97.5% quantiles ({d['log_error_q025']:+.3f}, {d['log_error_q975']:+.3f}) of "
            f"ln(predicted/measured) over {d['residuals']} held-out residuals of {d['scope']} "
            f"(speedtrap validate serving, leave one configuration group out){rough}."
        )
