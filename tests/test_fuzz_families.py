"""Fuzzing the command line's bad-input families: file encodings, nesting depth, filesystem targets,
results stores, signals at startup and absurd magnitudes on every numeric option (tests/fuzz_cases.py
says what a wrong outcome is). The default suite draws a few cases of each family; ``-m slow`` draws
3,000 and writes the outcomes counted by family to results/fuzz/families.json."""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from fuzz_cases import (
    BORDERLINE,
    HUGE_INTEGERS,
    MUST_REFUSE,
    NUMERIC_OPTIONS,
    ROOT,
    TRACE_WINDOWS,
    Case,
    Hang,
    Numeric,
    deeply_nested,
    encoded,
    invoke,
    judge,
    named_error,
    output_problems,
    write_inputs,
)
from read_only import ReadOnly

OUTCOMES: Counter[tuple[str, str]] = Counter()
REPORT = ROOT / "results" / "fuzz" / "families.json"
SETTINGS: dict[str, Any] = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
}
DEFAULT = settings(max_examples=6, derandomize=True, **SETTINGS)


SCALE = float(os.environ.get("SPEEDTRAP_FUZZ_SCALE", "1"))
"""A share of the slow run's cases (e.g. 0.1 for a quicker look); 1 for the full 3,000."""


def slow(examples: int) -> Any:
    return settings(max_examples=max(1, round(examples * SCALE)), derandomize=False, **SETTINGS)


@pytest.fixture(scope="module", autouse=True)
def report() -> Iterator[None]:
    yield
    if OUTCOMES:
        REPORT.parent.mkdir(parents=True, exist_ok=True)
        families: dict[str, dict[str, int]] = {}
        for (family, outcome), n in sorted(OUTCOMES.items()):
            families.setdefault(family, {})[outcome] = n
        REPORT.write_text(json.dumps({"cases": sum(OUTCOMES.values()), "families": families}, indent=1))


def fresh(tmp_path: Path) -> Path:
    """A new directory for one case (hypothesis reuses the test's tmp_path)."""
    return Path(tempfile.mkdtemp(dir=tmp_path))


def fill(argv: tuple[str, ...] | list[str], inputs: dict[str, Path], out: Path) -> list[str]:
    return [a.format(out=out, **{k: str(v) for k, v in inputs.items()}) for a in argv]


COLLECT = os.environ.get("SPEEDTRAP_FUZZ_COLLECT") == "1"
"""Set: a wrong outcome is counted and written to results/fuzz/wrong.txt instead of failing the
test (to see every wrong outcome of a run, not the first)."""


def record(exc: AssertionError, family: str) -> None:
    """A wrong outcome: fail, or with SPEEDTRAP_FUZZ_COLLECT=1 count it and write it down."""
    if not COLLECT:
        raise exc
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    with (REPORT.parent / "wrong.txt").open("a", encoding="utf-8") as f:
        f.write(f"{exc}\n---\n")
    OUTCOMES[(family, "wrong")] += 1


def check(case: Case) -> None:
    try:
        with tempfile.TemporaryDirectory() as scratch, pytest.MonkeyPatch.context() as patch:
            patch.chdir(scratch)  # what a relative or empty path writes lands there, and goes
            result = invoke(case.argv)
        outcome = judge(case, result)
    except AssertionError as exc:
        record(exc, case.family)
        return
    except Hang as exc:
        record(AssertionError(f"{case.family}: speedtrap {' '.join(case.argv)}: {exc}"), case.family)
        return
    OUTCOMES[(case.family, outcome)] += 1


# --- absurd magnitudes on every numeric option --------------------------------------------------


def _numbers() -> st.SearchStrategy[str]:
    return st.one_of(
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.integers(-(2**80), 2**80).map(str),
        st.floats(min_value=1e-320, max_value=1e-100).map(repr),
    )


def _must_refuse(option: Numeric, value: str) -> bool:
    """Whether ``option`` must refuse ``value``: not a number, non-finite, negative, beyond 1e15 (a
    seed may be any integer of 0 or more) or, for a count, a fraction."""
    try:
        number = float(value) if not value.lstrip("-").isdigit() else int(value)
    except ValueError:
        return True
    if (isinstance(number, float) and not math.isfinite(number)) or number < 0:
        return True
    if isinstance(number, float) and not number.is_integer() and option.integer:
        return True  # (an integral float such as 2.0 may be read as the integer)
    return not option.seed and abs(number) > 1e15


@st.composite
def magnitude_cases(draw: Any, inputs: dict[str, Path], out: Path) -> Case:
    option = draw(st.sampled_from(NUMERIC_OPTIONS))
    pools = [st.sampled_from(MUST_REFUSE), st.sampled_from(HUGE_INTEGERS)]
    if option.runs_cheaply:
        pools.append(st.sampled_from(BORDERLINE))
        if option.argv[0] in ("pareto", "backends", "run"):
            pools.append(_numbers())
    value = draw(st.one_of(*pools))
    refuse = _must_refuse(option, value)
    if not option.runs_cheaply and not refuse:
        value = draw(st.sampled_from(MUST_REFUSE))  # a run too long for a fuzz case
        refuse = True
    argv = [*fill(option.argv, inputs, out), option.option, value]
    return Case("magnitudes", argv, [option.option], may_succeed=not refuse, echoed=_echoes(value))


def _echoes(value: str) -> set[str]:
    """How an output may repeat ``value`` (an integral float such as 5.0 as the integer 5)."""
    echoes = {value.lstrip("+-")}
    try:
        number = float(value)
    except ValueError:
        return echoes
    if number.is_integer():
        echoes.add(str(abs(int(number))))
    return echoes


@st.composite
def trace_window_cases(draw: Any, inputs: dict[str, Path], out: Path) -> Case:
    window = draw(st.sampled_from(TRACE_WINDOWS))
    argv = ["run", str(inputs["scenario"]), "--trace", str(out / "t.json"), "--trace-window", window]
    return Case("magnitudes", argv, ["--trace-window"], may_succeed=False)


# --- file encodings and nesting depth ------------------------------------------------------------

ROLES: dict[str, tuple[str, tuple[str, ...]]] = {
    "run": ("scenario", ("run", "{scenario}")),
    "compare": ("scenario", ("compare", "{scenario}", "--backend", "gpu-batched", "--backend", "gpu-fast",
                             "--replications", "2")),
    "pareto": ("spec", ("pareto", "--spec", "{spec}")),
    "sweep": ("experiment", ("sweep", "{experiment}", "--results-dir", "{out}")),
    "sweep-scenario": ("scenario", ("sweep", "{experiment}", "--results-dir", "{out}")),
    "fit": ("sessions", ("fit", "{sessions}", "--out", "{out}/fitted.toml")),
    "replay": ("sessions", ("run", "{scenario}", "--replay", "{sessions}")),
}  # fmt: skip


@st.composite
def file_cases(draw: Any, inputs: dict[str, Path], out: Path, family: str) -> Case:
    role = draw(st.sampled_from(sorted(ROLES)))
    kind, argv = ROLES[role]
    path = inputs[kind]
    text = path.read_text(encoding="utf-8")
    if family == "encodings":
        path.write_bytes(encoded(draw, text))
    else:
        deep = deeply_nested(draw, path.suffix)
        path.write_text(deep + text if draw(st.booleans()) else text + "\n" + deep, encoding="utf-8")
    return Case(family, fill(argv, inputs, out), [path.name, "deepkey"], may_succeed=True)


# --- filesystem targets --------------------------------------------------------------------------

TARGET_OPTIONS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "run-trace": (("run", "{scenario}", "--trace"), "file", "--trace"),
    "run-export": (("run", "{scenario}", "--export"), "dir", "--export"),
    "compare-figure": (("compare", "{scenario}", "--backend", "gpu-batched", "--backend", "gpu-fast",
                        "--replications", "2", "--figure"), "stem", "--figure"),
    "compare-latency-csv": (("compare", "{scenario}", "--backend", "gpu-batched", "--backend", "gpu-fast",
                             "--replications", "2", "--latency-csv"), "file", "--latency-csv"),
    "fit-out": (("fit", "{sessions}", "--out"), "file", "--out"),
    "fit-figures": (("fit", "{sessions}", "--out", "{out}/fitted.toml", "--figures"), "figure", "--figures"),
    "sweep-results": (("sweep", "{experiment}", "--results-dir"), "dir", "--results-dir"),
    "demo-out": (("demo", "--quick", "--out"), "dir-refused", "--out"),
    "validate-figure": (("validate", "serving", "--figure"), "figure-refused", "--figure"),
}  # fmt: skip
TARGETS = ("directory", "file", "under-file", "read-only", "dev-full", "long-name", "long-parent",
           "unknown-extension", "missing-parents", "empty", "proc")  # fmt: skip
WRITABLE = {
    "file": {"file", "unknown-extension", "missing-parents"},
    "figure": {"file", "missing-parents"},
    "stem": {"file", "missing-parents", "unknown-extension"},
    "dir": {"directory", "missing-parents", "empty", "unknown-extension"},  # typer reads "" as "."
}
"""Targets an option of each kind may write (the others must be refused): a file, a figure whose
extension says its format, a stem (``compare --figure``: STEM.png and STEM.svg, whatever the
extension given) or a directory (any name)."""
REFUSED_UP_FRONT = {
    "dir-refused": ("file", "under-file", "read-only", "dev-full", "long-name", "long-parent"),
    "figure-refused": (
        "directory",
        "under-file",
        "read-only",
        "long-name",
        "long-parent",
        "unknown-extension",
    ),
}
"""The targets drawn for the options of commands too long for a fuzz case (demo, validate serving):
those refused before anything runs (a writable target would run the command; /dev/full fails only
when written, after the run)."""
NOT_DRAWN = {"stem": ("dev-full",)}
"""Targets not drawn for an option kind: ``compare --figure /dev/full`` would write /dev/full.png."""


NAME_CHARACTERS = "abcxyzABC0189_-. éü漢+=,@"
"""Characters of the drawn file names (any a Linux file name may hold but the separator)."""


def _name(draw: Any) -> str:
    name = draw(st.text(alphabet=NAME_CHARACTERS, min_size=1, max_size=24))
    return "n" + name.strip()  # not ".", "..", hidden or blank


def _target(draw: Any, kind: str, out: Path, option_kind: str) -> tuple[str, Path | None]:
    """(the path, a directory to make read-only or None)."""
    figure = option_kind.startswith("figure")
    suffix = draw(st.sampled_from([".png", ".svg", ".pdf"] if figure else [".json", ".toml", ".out"]))
    stem = _name(draw)
    existing_file = out / f"existing-{stem}{suffix}"
    existing_file.write_text("x")
    parents = [_name(draw) for _ in range(draw(st.integers(1, 4)))]
    long = draw(st.integers(256, 600))
    return {
        "directory": (str(out), None),
        "file": (str(existing_file), None),
        "under-file": (str(existing_file.joinpath(*parents[1:], f"{stem}{suffix}")), None),
        "read-only": (str(out / "frozen" / f"{stem}{suffix}"), out / "frozen"),
        "dev-full": ("/dev/full", None),
        "long-name": (str(out / ("x" * long + suffix)), None),
        "long-parent": (str(out / ("d" * long) / f"{stem}{suffix}"), None),
        "unknown-extension": (
            str(out / (stem + draw(st.sampled_from([".xyz", ".pngx", ".tar.gz", ".png.bak", ".j"])))),
            None,
        ),
        "missing-parents": (str(out.joinpath(*parents, f"{stem}{suffix}")), None),
        "empty": ("", None),
        "proc": ("/proc/version", None),
    }[kind]


@st.composite
def target_cases(draw: Any, inputs: dict[str, Path], out: Path) -> tuple[Case, Path | None]:
    name = draw(st.sampled_from(sorted(TARGET_OPTIONS)))
    argv, option_kind, option = TARGET_OPTIONS[name]
    targets = REFUSED_UP_FRONT.get(option_kind, TARGETS)
    kind = draw(st.sampled_from([t for t in targets if t not in NOT_DRAWN.get(option_kind, ())]))
    path, frozen = _target(draw, kind, out, option_kind)
    if frozen is not None:
        frozen.mkdir()
    ok = kind in WRITABLE.get(option_kind, set())
    names = [option, *([Path(path).name[:40], str(Path(path).parent)] if path else [])]
    return Case("filesystem", [*fill(argv, inputs, out), path], names, may_succeed=ok), frozen


# --- results stores -------------------------------------------------------------------------------

DAMAGES = ("truncated-spec", "latin-1-spec", "spec-directory", "deep-spec", "spec-list", "spec-wrong-types",
           "empty-spec", "runs-file", "journal-bytes", "journal-latin-1", "journal-cut", "part-cut",
           "part-directory", "part-empty", "quarantine-file", "store-file", "read-only",
           "read-only-partial")  # fmt: skip


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished store of the tiny experiment (inputs/ and results/fz/)."""
    top = tmp_path_factory.mktemp("store")
    inputs = write_inputs(top / "inputs")
    done = CliRunner().invoke(
        app_module().app, ["sweep", str(inputs["experiment"]), "--results-dir", str(top)]
    )
    assert done.exit_code == 0, done.output
    return top


def app_module() -> Any:
    import speedtrap.cli

    return speedtrap.cli


@st.composite
def store_cases(draw: Any, stored: Path, out: Path) -> tuple[Case, Path | None]:
    shutil.copytree(stored, out, dirs_exist_ok=True)
    store = out / "fz"
    spec, runs = store / "spec.json", store / "runs"
    damage = draw(st.sampled_from(DAMAGES))
    parts = sorted(runs.glob("part-*.parquet"))
    frozen = None
    text = spec.read_text(encoding="utf-8")
    if damage == "truncated-spec":
        spec.write_text(text[: draw(st.integers(0, len(text) - 1))], encoding="utf-8")
    elif damage == "latin-1-spec":
        spec.write_bytes(text.replace('"', '"é', 1).encode("latin-1"))
    elif damage == "spec-directory":
        spec.unlink()
        spec.mkdir()
    elif damage == "deep-spec":
        spec.write_text("[" * 100000 + "]" * 100000)
    elif damage == "spec-list":
        spec.write_text("[]")
    elif damage == "spec-wrong-types":
        spec.write_text(json.dumps({key: 5 for key in json.loads(text)}))
    elif damage == "empty-spec":
        spec.write_text("")
    elif damage == "runs-file":
        shutil.rmtree(runs)
        runs.write_text("x")
    elif damage.startswith("journal"):
        line = json.dumps({"point": 0, "seed": 1}).encode()
        junk = {
            "journal-bytes": bytes(range(128, 256)),
            "journal-latin-1": "é".encode("latin-1"),
            "journal-cut": line[:7],
        }
        (runs / "journal-1.jsonl").write_bytes(line + b"\n" + junk[damage] + b"\n")
    elif damage == "part-cut":
        parts[0].write_bytes(parts[0].read_bytes()[: draw(st.integers(0, parts[0].stat().st_size - 1))])
    elif damage == "part-directory":
        parts[0].unlink()
        parts[0].mkdir()
    elif damage == "part-empty":
        parts[0].write_bytes(b"")
    elif damage == "quarantine-file":
        (runs / "quarantine").write_text("x")
    elif damage == "store-file":
        shutil.rmtree(store)
        store.write_text("x")
    else:
        if damage == "read-only-partial":
            parts[0].unlink()
        frozen = store
    argv = ["sweep", str(out / "inputs" / "exp.toml"), "--results-dir", str(out)]
    names = [str(store), "spec.json", "runs", "journal", "part"]
    return Case("stores", argv, names, may_succeed=True), frozen


# --- the tests -------------------------------------------------------------------------------------


def run_case(case: Case, frozen: Path | None) -> None:
    if frozen is None:
        check(case)
        return
    with pytest.MonkeyPatch.context() as patch:
        read_only = ReadOnly(patch)
        read_only.freeze(frozen)
        try:
            check(case)
        finally:
            read_only.thaw()


def magnitudes(tmp_path: Path, data: Any) -> None:
    out = fresh(tmp_path)
    inputs = write_inputs(out / "inputs")
    strategy = st.one_of(magnitude_cases(inputs, out / "o"), trace_window_cases(inputs, out / "o"))
    (out / "o").mkdir()
    check(data.draw(strategy))


def files(tmp_path: Path, data: Any, family: str) -> None:
    out = fresh(tmp_path)
    inputs = write_inputs(out / "inputs")
    check(data.draw(file_cases(inputs, out / "o", family)))


def targets(tmp_path: Path, data: Any) -> None:
    out = fresh(tmp_path)
    inputs = write_inputs(out / "inputs")
    run_case(*data.draw(target_cases(inputs, out)))


def stores(tmp_path: Path, stored: Path, data: Any) -> None:
    run_case(*data.draw(store_cases(stored, fresh(tmp_path))))


@DEFAULT
@given(data=st.data())
def test_absurd_magnitudes_on_every_numeric_option(tmp_path: Path, data: Any) -> None:
    magnitudes(tmp_path, data)


@DEFAULT
@given(data=st.data())
def test_files_in_other_encodings(tmp_path: Path, data: Any) -> None:
    files(tmp_path, data, "encodings")


@DEFAULT
@given(data=st.data())
def test_files_nested_deep(tmp_path: Path, data: Any) -> None:
    files(tmp_path, data, "nesting")


@DEFAULT
@given(data=st.data())
def test_output_paths_that_cannot_be_written(tmp_path: Path, data: Any) -> None:
    targets(tmp_path, data)


@DEFAULT
@given(data=st.data())
def test_damaged_results_stores(tmp_path: Path, stored: Path, data: Any) -> None:
    stores(tmp_path, stored, data)


# --- signals at startup and while running ----------------------------------------------------------

SIGNAL_COMMANDS: dict[str, tuple[str, ...]] = {
    "run": ("run", "{scenario}"),
    "sweep": ("sweep", "{experiment}", "--results-dir", "{out}"),
    "sweep-processes": ("sweep", "{experiment}", "--results-dir", "{out}", "--executor", "processes",
                        "--workers", "2"),
    "compare": ("compare", "{scenario}", "--backend", "gpu-batched", "--backend", "gpu-fast",
                "--replications", "2"),
    "pareto": ("pareto", "--model", "llama-3.1-8b", "--hardware", "h100-sxm"),
    "backends": ("backends",),
    "fit": ("fit", "{sessions}", "--out", "{out}/fitted.toml"),
}  # fmt: skip
SIGNAL_LIMIT_S = 30
"""A command still running this long after Ctrl-C hangs."""


def signals(tmp_path: Path, data: Any) -> None:
    """Ctrl-C (SIGINT to the command's process group, as a terminal sends it) after a random delay
    from 0 to 3 s, startup included: the command finishes (exit 0, sane output) or stops with exit
    status 130 and a line saying it was interrupted, within SIGNAL_LIMIT_S and without a traceback."""
    out = fresh(tmp_path)
    inputs = write_inputs(out / "inputs")
    name = data.draw(st.sampled_from(sorted(SIGNAL_COMMANDS)))
    delay = data.draw(st.floats(0.0, 3.0))
    argv = fill(SIGNAL_COMMANDS[name], inputs, out)
    described = f"signals: SIGINT after {delay:.2f} s to speedtrap {' '.join(argv)}"
    process = subprocess.Popen(
        [sys.executable, "-m", "speedtrap", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    time.sleep(delay)
    with contextlib.suppress(ProcessLookupError):  # unless it had finished
        os.killpg(process.pid, signal.SIGINT)
    try:
        stdout, stderr = process.communicate(timeout=SIGNAL_LIMIT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        record(AssertionError(f"{described}: still running {SIGNAL_LIMIT_S} s after Ctrl-C"), "signals")
        return
    try:
        if "Fatal Python error" in stderr and (
            "Python runtime state: core initialized" in stderr or "init_import_site" in stderr
        ):
            outcome = "killed while Python started"  # the interpreter's own start (site), before speedtrap
        elif process.returncode == -signal.SIGINT and not stderr:
            # outside the command (Python starting, before its handler is in place, or exiting
            # after the output): SIGINT's default, which a shell reports as 130
            outcome = "killed outside the command"
        elif process.returncode == 0:
            assert "Traceback" not in stderr, f"{described}: traceback\n{stderr[-800:]}"
            problems = output_problems(stdout, set())
            assert not problems, f"{described}: {problems[:5]}"
            outcome = "ran"
        else:
            assert "Traceback" not in stderr, f"{described}: traceback\n{stderr[-800:]}"
            # -SIGINT after the line: Python ends a process that was interrupted by killing itself
            # with SIGINT, which a shell reports as 130 too
            assert process.returncode in (130, -signal.SIGINT), f"{described}: exit {process.returncode}"
            assert "interrupt" in named_error(stderr), f"{described}: no line saying so\n{stderr[-800:]}"
            outcome = "interrupted"
    except AssertionError as exc:
        record(exc, "signals")
        return
    OUTCOMES[("signals", outcome)] += 1


@DEFAULT
@given(data=st.data())
def test_ctrl_c_at_startup_and_while_running(tmp_path: Path, data: Any) -> None:
    signals(tmp_path, data)


# --- the slow run: 3,000 cases -----------------------------------------------------------------------


@pytest.mark.slow
@slow(1100)
@given(data=st.data())
def test_many_absurd_magnitudes(tmp_path: Path, data: Any) -> None:
    magnitudes(tmp_path, data)


@pytest.mark.slow
@slow(450)
@given(data=st.data())
def test_many_encodings(tmp_path: Path, data: Any) -> None:
    files(tmp_path, data, "encodings")


@pytest.mark.slow
@slow(400)
@given(data=st.data())
def test_many_nestings(tmp_path: Path, data: Any) -> None:
    files(tmp_path, data, "nesting")


@pytest.mark.slow
@slow(700)
@given(data=st.data())
def test_many_output_paths(tmp_path: Path, data: Any) -> None:
    targets(tmp_path, data)


@pytest.mark.slow
@slow(450)
@given(data=st.data())
def test_many_damaged_stores(tmp_path: Path, stored: Path, data: Any) -> None:
    stores(tmp_path, stored, data)


@pytest.mark.slow
@slow(100)
@given(data=st.data())
def test_many_ctrl_cs(tmp_path: Path, data: Any) -> None:
    signals(tmp_path, data)
