"""Reading a user's TOML file: every failure is one line that names the file."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from speedtrap.config import Scenario
from speedtrap.config.experiment import Experiment
from speedtrap.config.toml_file import (
    MAX_NESTING,
    TomlFileError,
    file_problem,
    nesting_depth,
    parse_toml,
    read_toml,
    shown_path,
)


def test_a_file_that_is_not_utf8_is_named_with_the_byte_and_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes('developers = 1\nname = "café"\n'.encode("latin-1"))
    with pytest.raises(TomlFileError, match=r"latin1\.toml: not UTF-8 text \(byte 0xe9 on line 2\)"):
        read_toml(path)


def test_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbfdevelopers = 3\n")
    assert read_toml(path) == {"developers": 3}
    assert Scenario.from_toml(path).developers == 3


@pytest.mark.parametrize("levels", [MAX_NESTING + 1, 5_000])
def test_absurd_nesting_is_refused_without_recursion_errors(tmp_path: Path, levels: int) -> None:
    path = tmp_path / "deep.toml"
    path.write_text("a = " + "[" * levels + "]" * levels + "\n", encoding="utf-8")
    with pytest.raises(TomlFileError, match=r"deep\.toml: nested deeper than"):
        read_toml(path)


def test_nesting_depth_counts_tables_and_arrays() -> None:
    assert nesting_depth(1) == 0
    assert nesting_depth({"a": [1, {"b": [[]]}]}) == 5
    assert parse_toml("a = [[1]]", source="x") == {"a": [[1]]}


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "missing.toml", r"missing\.toml: no such file"),
        (lambda d: d, r": is a directory, not a TOML file"),
        (
            lambda d: (d / "junk.toml", (d / "junk.toml").write_text("junk\n"))[0],
            r"junk\.toml: not valid TOML",
        ),
    ],
)
def test_unreadable_files_name_themselves(tmp_path: Path, make, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TomlFileError, match=message):
        read_toml(make(tmp_path))


def test_scenario_and_experiment_files_go_through_the_reader(tmp_path: Path) -> None:
    bad = tmp_path / "s.toml"
    bad.write_bytes(b'name = "\xe9"\n')
    with pytest.raises(TomlFileError, match=r"s\.toml: not UTF-8"):
        Scenario.from_toml(bad)
    experiment = tmp_path / "e.toml"
    experiment.write_text('name = "e"\nscenario = "s.toml"\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"scenario file .*s\.toml: not UTF-8"):
        Experiment.from_toml(experiment)


@pytest.mark.parametrize("form", ["{key} = 1", "[{key}]\nx = 1", "[[{key}]]\nx = 1", "x = {{ {key} = 1 }}"])
def test_a_key_of_too_many_dotted_parts_is_refused_before_parsing(form: str) -> None:
    """tomllib's time and memory grow with the square of a dotted key's parts: 100,000 parts is
    refused at once, as nesting too deep, instead of parsing for minutes in gigabytes."""
    key = ".".join(["deep"] * 100_000)
    with pytest.raises(TomlFileError, match=f"deep.toml: nested deeper than {MAX_NESTING} levels"):
        parse_toml(form.format(key=key), source="deep.toml")
    quoted = ".".join(['"deep"'] * (MAX_NESTING + 1))
    with pytest.raises(TomlFileError, match="nested deeper"):
        parse_toml(f"{quoted} = 1", source="deep.toml")


def test_dots_in_values_and_short_keys_are_fine() -> None:
    text = 'a = "x.y.z"\nb = 1.5\n[tables.one]\nc.d = 2\n'
    assert parse_toml(text, source="ok.toml") == {
        "a": "x.y.z",
        "b": 1.5,
        "tables": {"one": {"c": {"d": 2}}},
    }


def test_what_is_not_a_regular_file_is_named_without_reading_it(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)  # reading it would wait for a writer for ever
    for path, kind in [
        (fifo, "a named pipe (FIFO)"),
        (tmp_path, "a directory"),
        (Path("/dev/zero"), "a device"),
    ]:
        with pytest.raises(
            TomlFileError, match=rf"^{re.escape(str(path))}: is {re.escape(kind)}, not a TOML file$"
        ):
            read_toml(path)
    assert file_problem(tmp_path / "x" / "y.toml", "scenario file") == "no such scenario file"
    assert file_problem(tmp_path, "experiment file") == "is a directory, not an experiment file"


def test_a_path_too_long_for_the_system_is_one_short_line(tmp_path: Path) -> None:
    path = tmp_path / ("x" * 5000 + ".toml")
    with pytest.raises(TomlFileError, match=r"cannot read it \(File name too long\)") as error:
        read_toml(path)
    assert "5," in str(error.value) and len(str(error.value)) < 300  # shortened, its length said
    assert shown_path("a/b.toml") == "a/b.toml"


def test_an_integer_of_thousands_of_digits_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "digits.toml"
    path.write_text("developers = " + "1" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(TomlFileError, match=r"digits\.toml: a number with too many digits"):
        read_toml(path)


def test_the_long_key_check_finds_keys_where_keys_start() -> None:
    for text in [
        "a." * 40 + "b = 1",
        "[" + ".".join(["x"] * 40) + "]",
        "t = {y = 1, " + "a." * 40 + "b = 1}",
    ]:
        with pytest.raises(TomlFileError, match="nested deeper than"):
            parse_toml(text, source="s")
    assert parse_toml('name = "' + "a." * 40 + '"', source="s")  # dots inside a string are no key
