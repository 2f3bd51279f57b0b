"""The Solara page of ``speedtrap app``: controls in the sidebar, the run's views in the main pane.

Plain Solara components. Mesa's ``SolaraViz`` drives a model by calling ``model.step()`` and reads
a ``DataCollector``; speedtrap's models are event-driven in continuous time and report through
their ledger and tables, so the page advances them in chunks of simulated time instead
(:class:`speedtrap.app.live.LiveComparison`) in a worker thread (``solara.lab.task``), and the
views redraw after every chunk while the controls stay live.

State lives in reactive variables, one set per browser session (Solara's virtual kernels).
"""

from __future__ import annotations

import dataclasses
import html
import json
import time
from dataclasses import dataclass
from typing import Any

import pandas as pd
import solara
import solara.lab

from speedtrap.app.break_even import analytic_case, break_even_curve, break_even_figure
from speedtrap.app.economics import arm_values, economics_lines, replicate, runs_of, value_source
from speedtrap.app.export import Export, export_settings, file_name
from speedtrap.app.figures import (
    cumulative_figure,
    finding,
    ledger_figure,
    ledger_table,
    pool_figure,
    pool_frame,
    timeline_figure,
)
from speedtrap.app.latency import latency_html
from speedtrap.app.live import LiveComparison, Snapshot, view_of
from speedtrap.app.settings import (
    NO_BACKEND,
    POLICY_CHOICES,
    UPLOADED,
    Settings,
    backend_choices,
    build_arms,
    bundled_scenarios,
    dev_hour_value,
    load_base,
    settings_for,
    user_set_paths,
)
from speedtrap.config.ledger import LEDGER_CATEGORIES
from speedtrap.config.presets import BACKEND_PRESETS
from speedtrap.config.scenario import NO_AI, Scenario
from speedtrap.config.value import Value
from speedtrap.plots import CATEGORY_LABELS

__all__ = ["Page"]


def _initial_settings() -> Settings:
    base = Settings()
    try:
        return settings_for(load_base(base), base)
    except ValueError:
        return dataclasses.replace(base, scenario="built-in defaults")


REDRAW_EVERY_S = 1.0
"""Wall seconds between redraws of the views while a run advances."""

settings = solara.reactive(_initial_settings())
field_errors: solara.Reactive[dict[str, str]] = solara.reactive({})
live: solara.Reactive[LiveComparison | None] = solara.reactive(None)
snapshot: solara.Reactive[Snapshot | None] = solara.reactive(None)
arm_shown: solara.Reactive[str | None] = solara.reactive(None)
show_map = solara.reactive(False)


@dataclass(frozen=True)
class Replicated:
    """The arms run over more seeds for the economics (:func:`speedtrap.app.economics.replicate`)."""

    runs: pd.DataFrame
    seed: int
    replications: int
    value: Value
    workday_s: float
    behaviour: str = ""
    """Which parameter sets ran, in words."""


replicated: solara.Reactive[Replicated | None] = solara.reactive(None)
replicate_progress: solara.Reactive[tuple[int, int] | None] = solara.reactive(None)
"""(runs done, runs) of the replication under way."""


def update(**changes: Any) -> None:
    """Change some controls; clear the messages of the controls changed."""
    settings.value = dataclasses.replace(settings.value, **changes)
    keys = set(changes) | {"sliders"}
    field_errors.value = {k: v for k, v in field_errors.value.items() if k not in keys}


def start() -> bool:
    """Build the arms from the controls and a fresh comparison; False (with messages) if invalid."""
    arms = build_arms(settings.value)
    field_errors.value = arms.errors
    if not arms.ok:
        return False
    live.value = LiveComparison(arms.scenarios, arms.seed)
    snapshot.value = None
    replicated.value = None
    if arm_shown.value not in arms.scenarios:
        arm_shown.value = next(iter(arms.scenarios))
    return True


@solara.lab.task(prefer_threaded=True)
def run_to_end() -> None:
    """Advance the current comparison chunk by chunk to its horizon. The views are redrawn with a
    chunk's snapshot when :data:`REDRAW_EVERY_S` of wall time has passed since the last redraw
    ended (after the first chunk at once, and at the end), so that a fast run is not slowed down by
    drawing every chunk; the progress bar and the status line move every chunk."""
    comparison = live.value
    last = time.monotonic()
    while comparison is not None and not comparison.done:
        if not run_to_end.is_current():
            return
        snap = comparison.step()
        if not run_to_end.is_current():
            return
        run_to_end.progress = 100 * snap.progress  # a redraw of the bar and the status line
        if snap.done or snapshot.value is None or time.monotonic() - last >= REDRAW_EVERY_S:
            snapshot.value = snap
            last = time.monotonic()


@solara.lab.task(prefer_threaded=True)
def step_once() -> None:
    """Advance the current comparison by one chunk and redraw."""
    comparison = live.value
    if comparison is not None and not comparison.done:
        snapshot.value = comparison.step()


@solara.lab.task(prefer_threaded=True)
def replicate_runs(
    scenarios: dict[str, Scenario],
    seed: int,
    replications: int,
    members: list[dict[str, float]] | None = None,
    keep: list[str] | None = None,
) -> None:
    """Run the arms ``replications`` times for the economics (under ``members`` of the calibrated
    ensemble, the paths in ``keep`` left at the controls' values), in a worker thread."""

    def done(runs: int, total: int) -> None:
        if replicate_runs.is_current():
            replicate_progress.value = (runs, total)
            replicate_runs.progress = 100 * runs / total

    kept = {arm: keep or [] for arm in scenarios}
    runs = replicate(scenarios, seed, replications, members=members, keep=kept, on_run=done)
    if replicate_runs.is_current():
        first = next(iter(scenarios.values()))
        if members and "member" in runs.columns:
            k = runs["member"].nunique()
            behaviour = f"{k} members of the calibrated ensemble × {replications // k} seeds each" + (
                f"; kept at your values: {', '.join(keep)}" if keep else ""
            )
        else:
            behaviour = "the scenario's own parameter set"
        replicated.value = Replicated(runs, seed, replications, first.value, first.workday_s, behaviour)


def on_run() -> None:
    if start():
        run_to_end()


def on_replicate() -> None:
    """Replicate the current controls' arms over the chosen number of seeds (the live run stays)."""
    arms = build_arms(settings.value)
    field_errors.value = arms.errors
    if arms.ok and arms.seed is not None:
        from speedtrap.experiments.ensemble import choose_members, default_ensemble

        n = settings.value.replications
        members = default_ensemble() if settings.value.ensemble else None
        keep = user_set_paths(settings.value, load_base(settings.value)) if members else []
        index, r = choose_members(len(members), n) if members else ([-1], n)
        runs = len(index) * r
        replicated.value = None
        replicate_progress.value = (0, len(arms.scenarios) * runs)
        replicate_runs(arms.scenarios, arms.seed, n, members, keep)


def on_step() -> None:
    """One chunk of the current run (a new run from the controls when there is none or it is done;
    Reset or Run start anew with changed controls)."""
    if (live.value is None or live.value.done) and not start():
        return
    step_once()


def on_reset() -> None:
    for task in (run_to_end, step_once, replicate_runs):
        if task.pending:
            task.cancel()
    live.value = None
    snapshot.value = None
    replicated.value = None
    replicate_progress.value = None
    field_errors.value = {}


def on_scenario(name: str) -> None:
    candidate = dataclasses.replace(settings.value, scenario=name)
    try:
        settings.value = settings_for(load_base(candidate), candidate)
        field_errors.value = {k: v for k, v in field_errors.value.items() if k != "scenario"}
    except ValueError as exc:
        settings.value = candidate
        field_errors.value = {**field_errors.value, "scenario": str(exc)}


def on_upload(file: Any) -> None:
    text = bytes(file["data"]).decode("utf-8", errors="replace")
    candidate = dataclasses.replace(settings.value, scenario=UPLOADED, uploaded_toml=text)
    try:
        settings.value = settings_for(load_base(candidate), candidate)
        field_errors.value = {k: v for k, v in field_errors.value.items() if k != "scenario"}
    except ValueError as exc:
        settings.value = candidate
        field_errors.value = {**field_errors.value, "scenario": f"{file['name']}: {exc}"}


def FieldError(key: str) -> None:
    """The message of control ``key``, if any, right under it."""
    message = field_errors.value.get(key)
    if message:
        solara.Error(message, dense=True, classes=[f"st-error-{key.replace('_', '-')}"])


@solara.component
def Slider(label: str, key: str, lo: float, hi: float, step: float, *, integer: bool = False) -> None:
    value = getattr(settings.value, key)
    label = f"{label}: {value:g}"
    with solara.Column(classes=[f"st-slider-{key.replace('_', '-')}"], gap="0px"):
        if integer:
            solara.SliderInt(
                label,
                value=int(value),
                min=int(lo),
                max=int(hi),
                step=int(step),
                on_value=lambda v: update(**{key: int(v)}),
            )
        else:
            solara.SliderFloat(
                label,
                value=float(value),
                min=lo,
                max=hi,
                step=step,
                on_value=lambda v: update(**{key: float(v)}),
            )


def TextField(label: str, key: str, css_class: str) -> None:
    """A text input bound to the settings field ``key`` (validated on the next run)."""
    solara.InputText(
        label,
        value=getattr(settings.value, key),
        on_value=lambda v: update(**{key: v}),
        error=field_errors.value.get(key, False),
        classes=[css_class],
    )


def _value_of(s: Settings) -> Value | None:
    """The chosen scenario's value section (None if it does not load)."""
    try:
        return load_base(s).value
    except ValueError:
        return None


def _backends_of(s: Settings) -> list[str]:
    """The backend choices of the chosen scenario (presets and manual if it does not load)."""
    try:
        return backend_choices(load_base(s))
    except ValueError:
        return [*BACKEND_PRESETS, NO_AI]


@solara.component
def Controls() -> None:
    s = settings.value
    busy = run_to_end.pending or step_once.pending
    choices = [*bundled_scenarios(), UPLOADED]
    backends = solara.use_memo(lambda: _backends_of(s), dependencies=[s.scenario, s.uploaded_toml])
    value = solara.use_memo(lambda: _value_of(s), dependencies=[s.scenario, s.uploaded_toml])
    solara.Select("Scenario", values=choices, value=s.scenario, on_value=on_scenario)
    solara.FileDrop(label="…or drop a scenario file (.toml) here", on_file=on_upload, lazy=False)
    FieldError("scenario")
    solara.Select("Backend A", values=backends, value=s.backend_a, on_value=lambda v: update(backend_a=v))
    FieldError("backend_a")
    solara.Select(
        "Backend B (same seed)",
        values=[*backends, NO_BACKEND],
        value=s.backend_b,
        on_value=lambda v: update(backend_b=v),
    )
    FieldError("backend_b")
    solara.Select(
        "Routing policy", values=list(POLICY_CHOICES), value=s.policy, on_value=lambda v: update(policy=v)
    )
    FieldError("policy")
    target = s.backend_b if s.backend_b != NO_BACKEND else s.backend_a
    Slider("Developers", "developers", 1, 50, 1, integer=True)
    Slider(f"Decode speed-up of {target} (×)", "decode_speedup", 0.5, 15.0, 0.5)
    Slider(f"Failure multiplier of {target} (×)", "failure_multiplier", 0.5, 3.0, 0.1)
    Slider("Review detection (probability)", "review_detection", 0.0, 1.0, 0.05)
    Slider("Patience, median (s)", "patience_s", 5.0, 600.0, 5.0)
    Slider("Parallel agent sessions", "parallel_sessions", 1, 4, 1, integer=True)
    Slider("Fast-tier share (policy fast_share)", "fast_share", 0.0, 1.0, 0.05)
    FieldError("sliders")
    TextField("Horizon (hours)", "horizon_h", "st-horizon")
    TextField("Seed", "seed", "st-seed")
    TextField("Developer cost (US$ per developer-hour)", "usd_per_dev_hour", "st-usd-per-dev-hour")
    if value is not None:
        solara.Text(
            f"Scenario: {value_source(value)}.", style={"font-size": "11px"}, classes=["st-value-source"]
        )
    Slider("Replications for the economics (seeds)", "replications", 2, 20, 1, integer=True)
    with solara.Row():
        solara.Button("Run", on_click=on_run, color="primary", disabled=busy, classes=["st-run"])
        solara.Button("Step", on_click=on_step, disabled=busy, classes=["st-step"])
        solara.Button("Reset", on_click=on_reset, classes=["st-reset"])


def _export_of(s: Settings) -> Export | str:
    try:
        return export_settings(s)
    except ValueError as exc:
        return str(exc)


@solara.component
def ExportPanel() -> None:
    """These settings as one scenario file per arm (``speedtrap run FILE --seed S`` reproduces the
    arm's run) and as the equivalent command lines: in the main pane, where opening it pushes the
    views down (in the sidebar, its long lines widened the drawer over the views)."""
    s = settings.value
    export = solara.use_memo(lambda: _export_of(s), dependencies=[s])
    with solara.Details("Export these settings (scenario TOML, command line)"):
        if isinstance(export, str):
            solara.Text(f"Nothing to export: {export}.", classes=["st-export-error"])
            return
        for name, text in export.files.items():
            solara.FileDownload(
                text,
                filename=file_name(name),
                label=f"{file_name(name)} (arm {name})",
                mime_type="application/toml",
            )
        lines = [f"# {name}, seed {export.seed}\n{command}" for name, command in export.commands.items()]
        if export.compare is not None:
            lines.append(f"# both arms over {s.replications} seeds, with the economics\n{export.compare}")
        # plain HTML, not Markdown: Solara's Markdown fetches KaTeX from a CDN, which an offline
        # machine cannot reach (a 404 in the page)
        solara.HTML(
            tag="pre",
            unsafe_innerHTML=html.escape("\n".join(lines)),
            style={"font-size": "11px", "white-space": "pre-wrap"},
            classes=["st-export-commands"],
        )


def _ledger_html(snap: Snapshot) -> str:
    table = ledger_table(snap.results)
    arms = list(table.columns)
    head = "".join(f"<th>{name}</th>" for name in arms)
    rows = []
    for key in [*LEDGER_CATEGORIES, "tasks_per_dev_day", "usd_per_dev_day"]:
        label = CATEGORY_LABELS.get(
            key,
            {"tasks_per_dev_day": "tasks per developer-day", "usd_per_dev_day": "$ per developer-day"}.get(
                key, key
            ),
        )
        cells = "".join(
            f'<td class="st-value st-{"ab"[i]}-{key.replace("_", "-")}" style="text-align:right">'
            f"{table.loc[key, name]:.3f}</td>"
            for i, name in enumerate(arms)
        )
        rows.append(f"<tr><td>{label}</td>{cells}</tr>")
    return (
        "<style>.st-ledger td, .st-ledger th, .st-pool td, .st-pool th {padding: 1px 8px}</style>"
        '<table class="st-ledger" style="border-collapse:collapse;font-size:13px">'
        f"<tr><th>hours per developer-day</th>{head}</tr>{''.join(rows)}</table>"
    )


def _pool_html(snap: Snapshot) -> str:
    pool = pd.concat([pool_frame(r) for r in snap.results.values()], ignore_index=True)
    rows = "".join(
        f"<tr><td>{r.backend}</td><td>{r.mean_queue:.2f}</td><td>{r.mean_streams_per_replica:.2f}</td>"
        f"<td>{r.tok_s_per_stream:.0f}</td></tr>"
        for r in pool.itertuples()
    )
    return (
        '<table class="st-pool" style="font-size:13px;margin-top:8px"><tr><th>serving pool</th>'
        "<th>mean queue</th><th>streams per replica</th><th>tok/s per stream</th></tr>"
        f"{rows}</table>"
    )


@solara.component
def BreakEvenMap() -> None:
    s = settings.value
    unmodified = build_arms(dataclasses.replace(s, decode_speedup=1.0, failure_multiplier=1.0))
    case = analytic_case(unmodified.scenarios) if unmodified.ok else "fix the controls first"
    key = case if isinstance(case, str) else [case[0].model_dump_json(), case[1], case[2]]

    def compute() -> pd.DataFrame | None:
        return None if isinstance(case, str) else break_even_curve(*case)

    curve = solara.lab.use_task(compute, dependencies=[key])
    if isinstance(case, str):
        solara.Info(f"No break-even map: {case}.")
        return
    _, baseline, fast = case
    names = list(unmodified.scenarios)
    marker = (
        s.decode_speedup,
        fast.quality.failure_multiplier * s.failure_multiplier / baseline.quality.failure_multiplier,
    )
    if curve.pending:
        solara.ProgressLinear(True)
        solara.Text(
            "computing the break-even curve for this scenario (about 20 evaluations of the mean-value "
            "model: seconds on an idle machine, then cached)…"
        )
    figure = break_even_figure(
        curve.value if curve.finished else None, marker, baseline=names[0], fast=names[-1]
    )
    solara.FigureMatplotlib(figure, format="png")
    solara.HTML(
        tag="p",
        unsafe_innerHTML="Analytic mean-value model on this scenario put under its rules "
        "(<code>speedtrap.analysis.mean_value.ANALYTIC_RULES</code>: tasks sized by difficulty, a fixed "
        "flow threshold instead of patience, one session at a time): one developer, no contention. "
        "The curve changes with the scenario and the backends; the star moves with the what-if sliders.",
    )


@solara.component
def Figure(make: Any, key: object) -> None:
    """A matplotlib figure drawn once per ``key`` (``make()`` builds it)."""
    figure = solara.use_memo(make, dependencies=[key])
    solara.FigureMatplotlib(figure, dependencies=[key], format="png")


@solara.component
def Views() -> None:
    running = run_to_end.pending or step_once.pending
    view = view_of(live.value, snapshot.value, running=running)
    # Always the same elements above the figures, so that their memos survive re-renders.
    solara.ProgressLinear(view.bar, classes=["st-progress"])
    if view.state == "idle":
        solara.Info(view.status, classes=["st-hint"])
        return
    solara.Text(
        view.status + (f" — the run stopped: {run_to_end.exception}" if run_to_end.error else ""),
        classes=["st-status", f"st-{view.state}"],
    )
    if view.snapshot is not None:
        Results(view.snapshot)


@solara.component
def Results(snap: Snapshot) -> None:
    """The views of one snapshot (figures and tables made once per snapshot)."""
    key = id(snap)
    words = solara.use_memo(lambda: finding(snap.results), dependencies=[key])
    table = solara.use_memo(lambda: _ledger_html(snap), dependencies=[key])
    pool = solara.use_memo(lambda: _pool_html(snap) + latency_html(snap.results), dependencies=[key])
    solara.HTML(tag="p", unsafe_innerHTML=f"<b>Finding.</b> {words}", classes=["st-finding"])
    with solara.Columns([3, 2], classes=["st-results"]):
        with solara.Column():
            Figure(lambda: ledger_figure(snap.results), key)
            Figure(lambda: cumulative_figure(snap.results), key)
        with solara.Column():
            solara.HTML(tag="div", unsafe_innerHTML=table)
            solara.HTML(tag="div", unsafe_innerHTML=pool)
    Economics(snap)
    arms = list(snap.results)
    shown = arm_shown.value if arm_shown.value in arms else arms[0]
    if len(arms) > 1:
        solara.ToggleButtonsSingle(value=shown, values=arms, on_value=arm_shown.set)
    result = snap.results[shown]
    with solara.Row(justify="space-between"):
        solara.Text(f"Per developer and serving pool on {shown}", classes=["st-shown"])
        solara.FileDownload(
            lambda: json.dumps(result.to_trace(), separators=(",", ":"), allow_nan=False),
            filename=f"speedtrap-{shown}-trace.json",
            label="Download as a Perfetto trace",
            mime_type="application/json",
        )
    Figure(lambda: timeline_figure(result, shown), (key, shown))
    Figure(lambda: pool_figure(result, shown), (key, shown))


def _economics_html(title: str, lines: list[str], css: str) -> str:
    items = "".join(f"<li>{line}</li>" for line in lines)
    return (
        f'<div class="{css}" style="font-size:13px"><b>{title}</b><ul style="margin:2px 0">{items}</ul></div>'
    )


@solara.component
def Economics(snap: Snapshot) -> None:
    """Net value per developer-day of B against A at the developer cost typed in the sidebar: from
    the live run (one seed, no interval) and, on demand, over more seeds with a 95% CI."""
    arms = list(snap.results)
    first = snap.results[arms[0]].scenario
    comparison = live.value
    seed = comparison.seed if comparison is not None and comparison.seed is not None else 0
    runs = solara.use_memo(lambda: runs_of(snap.results, seed), dependencies=[id(snap)])
    with solara.Column(gap="2px", classes=["st-economics"]):
        if len(arms) < 2:
            solara.Text("Economics: choose a backend B to price it against A.")
            return
        try:
            value = dev_hour_value(settings.value, first.value)
        except ValueError as exc:
            solara.Text(f"Economics: {exc}.")
            return
        usd = value.usd_per_dev_hour
        lines = economics_lines(arm_values(runs, value, first.workday_s), arms[0], usd)
        solara.HTML(
            tag="div",
            unsafe_innerHTML=_economics_html(
                f"Economics of this run (seed {seed}{'' if snap.done else ', so far'})",
                lines,
                "st-economics-live",
            ),
        )
        n = settings.value.replications
        with solara.Row():
            solara.Button(
                f"Replicate {n} runs per arm",
                on_click=on_replicate,
                disabled=replicate_runs.pending,
                classes=["st-replicate"],
            )
            solara.Checkbox(
                label="over the calibrated ensemble (seed and behavioural intervals)",
                value=settings.value.ensemble,
                on_value=lambda v: update(ensemble=bool(v)),
            )
            counts = replicate_progress.value
            if replicate_runs.pending and counts is not None:
                solara.ProgressLinear(100 * counts[0] / counts[1] if counts[0] else True)
                solara.Text(f"{counts[0]} of {counts[1]} runs done", classes=["st-replicate-progress"])
        done = replicated.value
        if done is not None:
            priced = dev_hour_value(settings.value, done.value)  # the same field: valid, as above
            lines = economics_lines(
                arm_values(done.runs, priced, done.workday_s), str(done.runs["arm"].iloc[0]), usd
            )
            title = (
                f"Economics over {done.replications} runs per arm, paired by seed: {done.behaviour} "
                f"(spawned from seed {done.seed}, as speedtrap compare --seed {done.seed} --replications "
                f"{done.replications}{'' if settings.value.ensemble else ' --single'})"
            )
            solara.HTML(tag="div", unsafe_innerHTML=_economics_html(title, lines, "st-economics-replicated"))


@solara.component
def Page() -> None:
    solara.Title("speedtrap")
    with solara.Sidebar():
        Controls()
    with solara.Column(style={"padding": "8px"}):
        solara.HTML(tag="h2", unsafe_innerHTML="speedtrap: where developers' time goes with a coding agent")
        solara.HTML(
            tag="p",
            unsafe_innerHTML="Two backends, the same developers and tasks (one seed): waiting versus fixing, "
            "tasks and dollars.",
        )
        ExportPanel()
        Views()
        solara.Switch(label="Show the analytic break-even map", value=show_map)
        if show_map.value:
            BreakEvenMap()
