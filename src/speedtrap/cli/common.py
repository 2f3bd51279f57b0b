"""Shared options and output helpers of the ``speedtrap`` command modules.

Bad input (an unknown preset, a model that does not fit) prints one line to stderr and exits
with status 2 (:func:`fail`); so does an output path that cannot be written, checked before a
command runs (:func:`check_output_path`) and again as it writes (:func:`writing`). ``--json`` output
is strict JSON (:func:`print_json`). Every command module imports this one, and it imports none of
them.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import stat
import sys
import tomllib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NoReturn

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from speedtrap import interrupts

if TYPE_CHECKING:  # imported where used, so that `speedtrap --help` starts fast
    from speedtrap.config.scenario import Scenario

JSON_SCHEMA_VERSION = 1
BAD_INPUT_EXIT_CODE = 2
WIDE_OUTPUT_COLUMNS = 240

DEMO_BACKENDS: tuple[str, ...] = ("gpu-batched", "gpu-fast", "wafer-distilled")
DEFAULT_SEED = 0
POLICY_KINDS: tuple[str, ...] = (
    "always",
    "background_slow",
    "best_of_n",
    "by_difficulty",
    "escalate",
    "fast_share",
    "interactive_fast",
    "manual",
)
"""The policy kinds named in ``--set`` help (importing the registry would slow every command's start;
a test checks this list against :func:`speedtrap.config.policy.known_policy_kinds`)."""

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON (schema in this command's help).")]
ExecutorOption = Annotated[
    str, typer.Option("--executor", help="Where runs execute: serial, processes or dask.")
]
MAX_REPLICATIONS = 100_000
"""The most replications ``--replications`` takes (assumption: more is a typing slip — a sweep or a
comparison of that many seeds runs for days — and a number past it ran until stopped)."""
MAX_WORKERS = 1024
"""The most worker processes ``--workers`` takes (assumption: more local processes than this is a
typing slip, not a plan; a larger number overflowed the process pool with a traceback)."""
WorkersOption = Annotated[
    int | None, typer.Option("--workers", min=1, max=MAX_WORKERS, help="Worker processes.")
]
SchedulerOption = Annotated[
    str | None, typer.Option("--scheduler", help="Address of a running Dask scheduler (with dask).")
]
LogFormat = Literal["auto", "claude-code", "codex"]
"""How ``.jsonl`` session logs are read (:data:`speedtrap.sessions.LOG_FORMATS`; a test checks they agree)."""
LogFormatOption = Annotated[
    LogFormat,
    typer.Option(
        "--format",
        help="How .jsonl files are read: auto tells Claude Code transcripts and Codex CLI rollouts apart "
        "by their first line; claude-code or codex reads every .jsonl file as that format.",
    ),
]
SeedOption = Annotated[
    int, typer.Option("--seed", min=0, help="Root seed of the run (same seed, same task stream).")
]


def fail(message: str) -> NoReturn:
    """Print one line to stderr and exit with status 2 (bad input). A character that is not printable
    (a line break, a form feed, another control character the input carried) is written as its
    escape (``\\n``, ``\\x0c``), so the message stays one line. After a Ctrl-C that the code it
    landed in turned into an error (:mod:`speedtrap.interrupts`), the interrupt is raised instead."""
    interrupts.check()
    typer.echo(f"error: {one_line_text(message)}", err=True)
    raise typer.Exit(BAD_INPUT_EXIT_CODE)


def percent(share: float) -> str:
    """A share as ``12.3%``; ``n/a`` for a share without a value (NaN: no output to divide by)."""
    return f"{100 * share:.1f}%" if math.isfinite(share) else "n/a"


def one_line_text(text: str) -> str:
    """``text`` with every character that is not printable (but a space) written as its escape."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def exits_on_interrupt[**P, R](command: Callable[P, R]) -> Callable[P, R]:
    """``command`` ending a Ctrl-C in one line on stderr and exit status 130 (a sweep's own message
    says how many runs are stored and how to resume), instead of typer's blank line."""

    @functools.wraps(command)
    def interruptible(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except KeyboardInterrupt as exc:
            typer.echo(f"interrupted: {exc}" if str(exc) else "interrupted", err=True)
            raise typer.Exit(130) from None

    return interruptible


def one_line(exc: Exception) -> str:
    """A one-line description of a validation or lookup error, with the field paths."""
    if isinstance(exc, ValidationError):
        from speedtrap.config.base import describe_errors

        return describe_errors(exc)
    return str(exc).strip("'\"")


@contextmanager
def bad_input_exits() -> Iterator[None]:
    """Turn validation/lookup errors raised inside the block into :func:`fail`."""
    try:
        yield
    except (ValidationError, ValueError, KeyError) as exc:
        fail(one_line(exc))


# --- output paths ---------------------------------------------------------------------------------


def figure_suffixes() -> tuple[str, ...]:
    """The file extensions matplotlib writes figures in (``.png``, ``.svg``, ``.pdf``, …)."""
    from matplotlib.figure import Figure

    return tuple(f".{name}" for name in sorted(Figure().canvas.get_supported_filetypes()))


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _mode(path: Path) -> int | None:
    """``path``'s mode, or ``None`` when nothing is there (or a parent is not a directory)."""
    try:
        return os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None


def output_problem(path: Path, *, directory: bool = False) -> str | None:
    """What stops this process writing ``path`` (a file; with ``directory``, a directory to write
    files into), as far as can be told without writing it; ``None`` when nothing does. Nothing is
    left behind: no directory is made, writing is tried by creating and removing a probe file in the
    nearest directory that exists, and an existing file is opened for appending (which leaves it as
    it is)."""
    folder = path
    try:
        mode = _mode(path)
        if mode is not None and directory and not stat.S_ISDIR(mode):
            return "not a directory"
        if mode is not None and not directory and stat.S_ISDIR(mode):
            return "is a directory, not a file"
        if mode is None:
            for parent in path.parents:
                parent_mode = _mode(parent)
                if parent_mode is None:
                    continue
                if not stat.S_ISDIR(parent_mode):
                    return f"{parent} is not a directory"
                folder = parent
                break
        if mode is not None and not directory:
            if stat.S_ISREG(mode):  # a device (/dev/null, /dev/full) is left to the write itself
                os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC))
            return None
        probe = folder / f".speedtrap-probe-{os.getpid()}"
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
        os.unlink(probe)
    except OSError as exc:
        where = "" if folder == path else f" in {folder}"
        return f"cannot write{where} ({_reason(exc)})"
    return None


def check_output_path(
    path: Path, option: str, *, suffixes: Sequence[str] | None = None, directory: bool = False
) -> None:
    """:func:`fail` naming ``option`` and ``path`` unless ``path`` can be written (:func:`output_problem`)
    and, given ``suffixes``, ends in one of them: called before a command runs, so that nothing
    computed is lost to a path that cannot take it."""
    if suffixes is not None and path.suffix.lower() not in suffixes:
        given = f"unknown extension {path.suffix!r}" if path.suffix else "no extension"
        fail(f"{option} {path}: {given} (matplotlib writes {', '.join(suffixes)})")
    problem = output_problem(path, directory=directory)
    if problem is not None:
        fail(f"{option} {path}: {problem}")


@contextmanager
def writing(path: Path, option: str) -> Iterator[None]:
    """Turn an ``OSError`` raised while the block writes ``path`` (``option``'s file or directory) into
    one line naming them and what went wrong (a full disk, a directory made read-only while the
    command ran), exit status 2. A file the failed write left behind (``path``, if it was not there
    before, or the file named by the error, if it is empty) is removed: no empty or partial output."""
    try:
        existed = _mode(path) is not None
    except OSError:  # cannot tell: nothing is removed
        existed = True
    try:
        yield
    except OSError as exc:
        name = os.fsdecode(exc.filename) if exc.filename is not None else ""
        _remove_left_behind(path, existed, Path(name) if name else None)
        where = f" {name}" if name and Path(name) != path else ""
        fail(f"{option} {path}: cannot write{where} ({_reason(exc)})")


def _remove_left_behind(path: Path, existed: bool, named: Path | None) -> None:
    """Remove what a failed write left: ``path`` when it is a file that was not there before the
    write, and ``named`` (the file an error names) when it is an empty file."""
    with contextlib.suppress(OSError):
        if not existed and stat.S_ISREG(os.lstat(path).st_mode):
            path.unlink()
    with contextlib.suppress(OSError):
        if named is not None and named != path:
            info = os.lstat(named)
            if stat.S_ISREG(info.st_mode) and info.st_size == 0:
                named.unlink()


def json_safe(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by ``None`` (JSON ``null``), recursively:
    standard JSON has no NaN or Infinity, and strict parsers refuse them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def print_json(payload: Any) -> None:
    """Print ``payload`` as indented, strict JSON on stdout (NaN and infinities become ``null``)."""
    typer.echo(json.dumps(json_safe(payload), indent=2, allow_nan=False))


def json_number(value: Any) -> Any:
    """``value``, or ``None`` for a NaN float (a JSON record's missing number)."""
    return None if isinstance(value, float) and math.isnan(value) else value


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Print a rich table; floats are shown with four significant digits (whole numbers from 1000).
    Every text is shown as written: rich would read a bracketed phrase ("[the members' central 95%]")
    as markup and drop it, so the title, headers and cells are escaped."""
    from rich.markup import escape

    table = Table(title=escape(title))
    for i, column in enumerate(columns):
        table.add_column(escape(column), overflow="fold", no_wrap=i == 0)  # the first column names the row
    for row in rows:
        table.add_row(*(escape(_cell(value)) for value in row))
    console = Console()
    if not console.is_terminal:
        console = Console(width=WIDE_OUTPUT_COLUMNS)  # piped output: do not fold the columns
    console.print(table)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return shown(value, ",.0f" if abs(value) >= 1000 else ".4g")
    return str(value)


def shown(value: float, spec: str) -> str:
    """``value`` formatted with ``spec`` for a table or a sentence: "n/a" where it has no value
    (NaN) and "unbounded" where it is infinite, never "nan" or "inf"."""
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "unbounded" if value > 0 else "-unbounded"
    return format(value, spec)


def count_of(amount: float, noun: str) -> str:
    """``amount`` and ``noun``, plural unless ``amount`` is 1: "1 developer-day", "2.5 developer-days"."""
    return f"{amount:g} {noun}{'' if amount == 1 else 's'}"


def headline_scenario_path() -> Path:
    """The headline scenario file (experiments/scenarios/headline.toml, or the wheel's copy)."""
    from speedtrap.experiments.files import experiments_dir

    return experiments_dir() / "scenarios" / "headline.toml"


class Assignment(str):
    """A ``path.to.field=value`` text that remembers the option it came from (``--set``, or ``--arm
    LABEL``), so that an error names that option."""

    option: str = "--set"


def given_with(text: str, option: str) -> Assignment:
    """``text`` as an :class:`Assignment` given with ``option`` (e.g. ``"--arm fast"``)."""
    made = Assignment(text)
    made.option = option
    return made


def option_of(text: str) -> str:
    """The option a ``path=value`` text came from: its :class:`Assignment` option, else ``--set``."""
    return text.option if isinstance(text, Assignment) else "--set"


SHOWN_ASSIGNMENT_CHARS = 120
"""Longest ``path=value`` an error message repeats whole; a longer one is cut with "…"."""


def shown_assignment(text: str) -> str:
    """``text`` (a ``path=value``) for an error message, cut after :data:`SHOWN_ASSIGNMENT_CHARS`."""
    if len(text) <= SHOWN_ASSIGNMENT_CHARS:
        return text
    return f"{text[:SHOWN_ASSIGNMENT_CHARS]}… ({len(text):,} characters)"


def parse_set(assignment: str) -> tuple[str, Any]:
    """``path.to.field=value`` → (path, value); the value is read as TOML (numbers, booleans,
    strings, arrays, inline tables), falling back to the raw text as a string; a bare ``null`` unsets
    an optional field (None), which TOML cannot write. Refused, with the option named
    (:func:`option_of`): no ``=``, a line break (TOML would read the first line and drop the rest), a
    path or a value nested deeper than :data:`~speedtrap.config.toml_file.MAX_NESTING` levels, and an
    integer of more digits than Python converts."""
    from speedtrap.config.toml_file import MAX_NESTING, nesting_depth

    option = option_of(assignment)
    shown = shown_assignment(assignment)
    path, sep, text = assignment.partition("=")
    path = path.strip()
    if not sep or not path:
        raise ValueError(f"{option} {shown!r}: expected path.to.field=value")
    if "\n" in assignment or "\r" in assignment:
        raise ValueError(
            f"{option} {shown!r}: a line break in it; give one path=value per {option.split()[0]}"
        )
    if path.count(".") >= MAX_NESTING:
        raise ValueError(f"{option} {shown}: a path of more than {MAX_NESTING} parts names no field")
    if text.strip() == "null":
        return path, None
    too_deep = f"{option} {shown}: {path}: nested deeper than {MAX_NESTING} levels of arrays or tables"
    try:
        value = tomllib.loads(f"v = {text.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = text.strip()
    except RecursionError:
        raise ValueError(too_deep) from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise ValueError(f"{option} {shown}: {path}: a number with too many digits ({exc})") from None
    if nesting_depth(value) > MAX_NESTING:
        raise ValueError(too_deep)
    return path, value


def load_scenario(path: Path | None, *, backend: str | None = None, sets: Sequence[str] = ()) -> Scenario:
    """The scenario of ``path`` (default: the specs' defaults), served by ``backend`` if given, with
    ``--set`` overrides applied last; every step re-validates, errors name the field."""
    from speedtrap.config.scenario import Scenario
    from speedtrap.config.toml_file import file_problem, read_toml, shown_path

    if path is None:
        scenario = Scenario(name="default")
    else:
        problem = file_problem(path, "scenario file")
        if problem is not None:
            raise ValueError(f"{shown_path(path)}: {problem}")
        data = read_toml(path)
        if not data:
            raise ValueError(f"{path}: empty scenario file (omit the file to run the built-in defaults)")
        if "factors" in data or "design" in data:
            raise ValueError(f"{path}: this is an experiment file; run it with `speedtrap sweep {path}`")
        try:
            scenario = Scenario.model_validate(data)
        except ValidationError as exc:  # the fields' errors, named with the file they are in
            raise ValueError(f"{shown_path(path)}: {one_line(exc)}") from None
    if backend is not None:
        scenario = scenario.with_backend(backend)
    batch: list[tuple[str, str, Any]] = []  # consecutive --set fields, applied (and validated) together
    for assignment in [*sets, None]:
        field, value = parse_set(assignment) if assignment is not None else ("", None)
        if assignment is not None and field != "policy.kind":
            batch.append((assignment, field, value))
            continue
        scenario = _apply_sets(scenario, batch)
        batch = []
        if assignment is not None:
            try:
                scenario = with_policy_kind(scenario, str(value))
            except (ValidationError, KeyError) as exc:
                raise ValueError(
                    f"{option_of(assignment)} {shown_assignment(assignment)}: {one_line(exc)}"
                ) from None
    return scenario


def _apply_sets(scenario: Scenario, batch: Sequence[tuple[str, str, Any]]) -> Scenario:
    """``scenario`` with a run of ``--set`` fields applied at once (so two fields that must change
    together can); an error names the first assignment from which the run's prefix fails."""
    try:
        return scenario.with_overrides({field: value for _, field, value in batch}) if batch else scenario
    except (ValidationError, KeyError) as exc:
        failing, error = batch[-1][0], exc
        for i in range(len(batch)):
            try:
                scenario.with_overrides({field: value for _, field, value in batch[: i + 1]})
            except (ValidationError, KeyError) as prefix_exc:
                failing, error = batch[i][0], prefix_exc
                break
        raise ValueError(f"{option_of(failing)} {shown_assignment(failing)}: {one_line(error)}") from None


def with_policy_kind(scenario: Scenario, kind: str) -> Scenario:
    """``scenario`` under policy ``kind``, its table rebuilt: fields the new kind shares with the old
    policy are kept, and a route the new kind needs goes to the old policy's backend (else the
    scenario's first backend); later ``--set policy.…`` refine it."""
    from speedtrap.config.policy import policy_spec_class

    try:
        fields = policy_spec_class(kind).model_fields
    except KeyError as exc:
        raise ValueError(f"policy.kind: {exc.args[0]}") from None
    old = scenario.policy.model_dump(mode="python")
    main = old.get("backend") or next(iter(scenario.backends))
    policy: dict[str, Any] = {"kind": kind}
    policy.update({k: v for k, v in old.items() if k in fields and k != "kind"})
    for name, field in fields.items():
        if name in policy or not field.is_required():
            continue
        policy[name] = main if name == "backend" else {"backend": main}  # a route: first, then
    if "routes" in fields and not policy.get("routes") and policy.get("default") is None:
        policy["default"] = {"backend": main}  # by_difficulty: every class on the old backend
    data = scenario.model_dump(mode="python")
    data["policy"] = policy
    return type(scenario).model_validate(data)


def stderr_is_terminal() -> bool:
    """Whether standard error is a terminal (progress lines are written only there)."""
    return sys.stderr.isatty()


def run_progress(scenario: Scenario, enabled: bool = True) -> Callable[[float], None] | None:
    """A callback for ``simulate(progress=...)`` that keeps one line on standard error up to date
    ("simulated 40% of 200 developer-days"); ``None`` when disabled or standard error is not a
    terminal (a file, a pipe, a test runner)."""
    if not (enabled and stderr_is_terminal()):
        return None
    total = count_of(scenario.developer_days, "developer-day")

    def report(fraction: float) -> None:
        typer.echo(f"\rsimulated {fraction:.0%} of {total}", err=True, nl=fraction >= 1.0)

    return report


def count_progress(label: str, enabled: bool = True) -> Callable[..., None] | None:
    """A callback ``(done, total, note="")`` that keeps one line on standard error up to date
    ("``label`` 3/5", then " (note)" if given; padded with spaces to the longest line so far, so a
    shorter note leaves nothing of a longer one), ending it after the last; ``None`` when disabled
    or standard error is not a terminal."""
    if not (enabled and stderr_is_terminal()):
        return None

    width = 0  # the longest line so far: a shorter one is padded to cover what it leaves behind

    def report(done: int, total: int, note: str = "") -> None:
        nonlocal width
        line = f"{label} {done}/{total}" + (f" ({note})" if note else "")
        width = max(width, len(line))
        typer.echo("\r" + line.ljust(width), err=True, nl=done >= total)

    return report
