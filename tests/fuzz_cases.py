"""The bad-input families the command-line fuzz draws from (tests/test_fuzz_families.py): inputs
as files (encodings, nesting depth), output paths (filesystem targets), results stores, signals,
and absurd magnitudes on every numeric option, and the judge of an outcome.

A wrong outcome is a traceback, a hang, a non-finite or absurd number in the output, an error that
names neither the option, the field nor the file, or nonsense accepted (a value that must be refused
but ran). Every other outcome is fine: a clean refusal (exit 2, or 1 for a failed run, the last line
of standard error an ``error:`` line or Click's usage box naming what was wrong) or a run whose
output is sane.
"""

from __future__ import annotations

import re
import shutil
import signal
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
SESSIONS_CSV = ROOT / "examples" / "sessions" / "trace.csv"
PARETO_SPEC = ROOT / "docs" / "pareto_spec_example.toml"
CASE_LIMIT_S = 90
"""A case that takes longer than this hangs (the slowest valid cases, a tiny compare or sweep under
load, take seconds)."""

TINY_SCENARIO = 'name = "tiny"\ndevelopers = 1\nhorizon_s = 600.0\n'
"""One developer for ten minutes: a run in well under a second."""
TINY_EXPERIMENT = """name = "fz"
scenario = "tiny.toml"
replications = 2
seed = 1

[design]
kind = "full_factorial"

[[factors]]
path = "backend"
values = ["gpu-batched", "gpu-fast"]
"""
"""Two backends × two replications of the tiny scenario."""


def write_inputs(directory: Path) -> dict[str, Path]:
    """Valid input files of each kind in ``directory``: scenario, experiment, pareto spec, sessions."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tiny.toml").write_text(TINY_SCENARIO, encoding="utf-8")
    (directory / "exp.toml").write_text(TINY_EXPERIMENT, encoding="utf-8")
    shutil.copy(PARETO_SPEC, directory / "spec.toml")
    lines = SESSIONS_CSV.read_text(encoding="utf-8").splitlines()[:40]
    (directory / "sessions.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {
        "scenario": directory / "tiny.toml",
        "experiment": directory / "exp.toml",
        "spec": directory / "spec.toml",
        "sessions": directory / "sessions.csv",
    }


# --- absurd magnitudes --------------------------------------------------------------------------

MUST_REFUSE = ("inf", "-inf", "nan", "1e300", "-1e300", "-1", "-0.5", "abc", "", "1e", "0x10")
"""Values no numeric option may accept."""
HUGE_INTEGERS = ("99999999999999999999", "9223372036854775808", "18446744073709551617", "1" + "0" * 40)
"""Integers past 2^63: refused by every option but a seed."""
BORDERLINE = ("0", "1e-300", "1.5", "0.0", "1", "2")
"""Values an option may accept or refuse; accepted, the output must be sane."""

PARETO = ["pareto", "--model", "llama-3.1-8b", "--hardware", "h100-sxm"]
FRACTIONAL = {"--weight-bytes", "--expert-bytes", "--kv-bytes", "--price-out"}
"""The numeric options that take fractions; the others count."""


@dataclass(frozen=True)
class Numeric:
    """A numeric option: the command line that reaches it (``{scenario}`` … name the input files,
    ``{out}`` an empty directory), whether a seed (huge integers are fine), and whether a run that
    accepts a borderline value is cheap enough to let run (otherwise only values it must refuse)."""

    argv: tuple[str, ...]
    option: str
    seed: bool = False
    runs_cheaply: bool = True

    @property
    def integer(self) -> bool:
        """Whether the option counts (takes whole numbers)."""
        return self.option not in FRACTIONAL


NUMERIC_OPTIONS: tuple[Numeric, ...] = (
    Numeric(("backends",), "--uncached-tokens"),
    *(
        Numeric(tuple(PARETO), option)
        for option in (
            "--context", "--isl", "--osl", "--cached", "--chips", "--batch", "--weight-bytes",
            "--expert-bytes", "--kv-bytes", "--experts", "--experts-per-token", "--price-out",
        )
    ),
    Numeric(("run", "{scenario}"), "--seed", seed=True),
    Numeric(("sweep", "{experiment}", "--results-dir", "{out}"), "--replications"),
    Numeric(("sweep", "{experiment}", "--results-dir", "{out}", "--executor", "processes"), "--workers"),
    Numeric(("experiment", "headline", "--quick", "--results-dir", "{out}"), "--workers", runs_cheaply=False),
    Numeric(("claims", "--quick", "--results-dir", "{out}"), "--workers", runs_cheaply=False),
    Numeric(("compare", "{scenario}", "--backend", "gpu-batched", "--backend", "gpu-fast"), "--replications"),
    Numeric(
        ("compare", "{scenario}", "--backend", "gpu-batched", "--backend", "gpu-fast", "--replications", "2"),
        "--seed",
        seed=True,
    ),
    Numeric(("demo", "--out", "{out}"), "--seed", seed=True, runs_cheaply=False),
    Numeric(("validate", "workflow", "--quick"), "--replications", runs_cheaply=False),
    Numeric(("validate", "workflow", "--quick"), "--seed", seed=True, runs_cheaply=False),
    Numeric(("app", "--no-browser"), "--port", runs_cheaply=False),
)  # fmt: skip

TRACE_WINDOWS = (
    "inf:1",
    "nan:5",
    "5:nan",
    "5:1",
    "-1:5",
    "1e300:1e301",
    "0:0",
    "a:b",
    "-inf:5",
    "1e-300:0",
    "5",
)
"""``run --trace-window START:END`` values that must be refused (an empty side is documented: from
0, or to the end)."""


# --- files in other encodings and nested deep ----------------------------------------------------


def encoded(draw: Any, text: str) -> bytes:
    """``text`` as a file that is not UTF-8 (or is, with a byte-order mark): another encoding, or
    bytes that no UTF-8 text holds, at a drawn place."""
    kind = draw(
        st.sampled_from(
            ["latin-1", "cp1252", "utf-16", "utf-16-le", "bom", "high", "nul", "overlong", "surrogate", "cut"]
        )
    )
    lines = text.splitlines(keepends=True)
    at = draw(st.integers(0, len(lines)))
    if kind in ("latin-1", "cp1252"):
        insert = "# café “quoted”\n" if kind == "cp1252" else "# café\n"
        return "".join([*lines[:at], insert, *lines[at:]]).encode(kind)
    if kind in ("utf-16", "utf-16-le"):
        return text.encode(kind)
    if kind == "bom":
        return b"\xef\xbb\xbf" + text.encode()
    data = text.encode()
    offset = draw(st.integers(0, len(data)))
    junk = {
        "high": bytes(draw(st.lists(st.integers(0x80, 0xFF), min_size=1, max_size=4))),
        "nul": b"\x00",
        "overlong": b"\xc0\xaf",
        "surrogate": b"\xed\xa0\x80",
        "cut": "é".encode()[:1],
    }[kind]
    return data[:offset] + junk + data[offset:]


def deeply_nested(draw: Any, suffix: str) -> str:
    """A line nested to a drawn depth, as the file kind ``suffix`` nests: arrays, inline tables,
    dotted keys, table headers and arrays of tables of ``deepkey``."""
    depth = draw(st.sampled_from([10, 100, 500, 999, 1000, 1001, 2000, 5000, 20000, 100000]))
    if suffix in (".csv", ".jsonl"):
        return "[" * depth + "]" * depth + "\n"
    kind = draw(st.sampled_from(["array", "inline", "dotted", "header", "array-of-tables"]))
    key = ".".join(["deepkey"] * depth)
    return {
        "array": "deepkey = " + "[" * depth + "]" * depth + "\n",
        "inline": "deepkey = " + "{ deepkey = " * depth + "1" + " }" * depth + "\n",
        "dotted": f"{key} = 1\n",
        "header": f"[{key}]\nx = 1\n",
        "array-of-tables": f"[[{key}]]\nx = 1\n",
    }[kind]


# --- judging an outcome -------------------------------------------------------------------------


class Hang(BaseException):
    """A case ran past :data:`CASE_LIMIT_S` (a BaseException, so that no handler of the command
    line mistakes it for an error of its own)."""


@contextmanager
def time_limit(seconds: int = CASE_LIMIT_S, error: type[BaseException] = Hang) -> Iterator[None]:
    """Raise ``error`` in the block when it runs past ``seconds`` (SIGALRM; the previous handler is
    put back)."""

    def expired(*_: object) -> None:
        raise error(f"the case ran longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")
NON_FINITE = re.compile(r"(?<![\w-])[-+]?(?:nan|inf|infinity)(?![\w-])", re.IGNORECASE)
ABSURD_ABOVE = 1e15
"""A number in an output larger than this (in magnitude) is absurd: nothing speedtrap reports —
seconds, tokens, dollars, counts — comes near it for any sensible input."""
ABSURD_BELOW = 1e-12
"""A non-zero number in an output smaller than this (in magnitude) is absurd, likewise."""


def output_problems(text: str, echoed: set[str]) -> list[str]:
    """Non-finite or absurd numbers in a command's output (``echoed``: numbers the case itself gave,
    such as a seed, which the output may repeat)."""
    problems = [f"non-finite {m.group(0)!r}" for m in NON_FINITE.finditer(text)]
    for match in NUMBER.finditer(text):
        token = match.group(0)
        if token.lstrip("+-") in echoed:
            continue
        value = abs(float(token))
        if value > ABSURD_ABOVE or 0 < value < ABSURD_BELOW:
            problems.append(f"absurd {token}")
    return problems


@dataclass
class Case:
    """One generated case: the command line, what an error must name (any one of them), whether it
    may run (else it must be refused) and a family label."""

    family: str
    argv: list[str]
    names: list[str]
    may_succeed: bool
    echoed: set[str] = field(default_factory=set)
    prepare: Callable[[], Any] | None = None


def judge(case: Case, result: Any) -> str:
    """The outcome's name, or an AssertionError describing a wrong outcome."""
    described = f"{case.family}: speedtrap {' '.join(case.argv)}"
    exception = result.exception
    if exception is not None and not isinstance(exception, SystemExit):
        raise AssertionError(f"{described}: traceback {exception!r}")
    output = result.output
    assert "Traceback (most recent call last)" not in output, f"{described}: traceback in the output"
    if result.exit_code == 0:
        assert case.may_succeed, f"{described}: nonsense accepted (exit 0)\n{output[-600:]}"
        problems = output_problems(result.stdout, case.echoed)
        assert not problems, f"{described}: {problems[:5]}\n{result.stdout[-600:]}"
        return "ran"
    assert result.exit_code in (1, 2), f"{described}: exit {result.exit_code}\n{output[-600:]}"
    message = named_error(result.stderr)
    assert message, f"{described}: exit {result.exit_code} with no error line\n{result.stderr[-600:]}"
    lowered = message.lower()
    names = [*case.names, *(n.lstrip("-").replace("-", "_") for n in case.names if n.startswith("--"))]
    assert any(name.lower() in lowered for name in names if name), (
        f"{described}: the error names none of {case.names}: {message!r}"
    )
    return "refused"


def named_error(stderr: str) -> str:
    """The error a command stopped with: its last ``error:`` line, or the text of Click's usage box."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return ""
    if lines[-1].startswith("error:") or lines[-1].startswith("interrupted"):
        return lines[-1]
    if "Usage:" in stderr or "│" in stderr:  # Click's usage error box: its text, borders removed
        return " ".join(line.strip("│╭╮╰╯─ ") for line in lines)
    return ""


def invoke(argv: list[str]) -> Any:
    from speedtrap.cli import app

    with time_limit(), warnings.catch_warnings():
        warnings.simplefilter("default")  # as the command line shows them, not as test errors
        return CliRunner().invoke(app, argv)


def hold_the_interpreter(folder: str) -> int:
    """A process sweep's task that notes its worker's pid in ``folder`` and then computes in C for
    hours without giving other threads the interpreter (``sum`` over a range never checks for a
    thread switch): only the kernel can end it promptly (tests/test_fuzz_leftovers.py)."""
    import os

    Path(folder, f"worker-{os.getpid()}").touch()
    return sum(range(10**14))
