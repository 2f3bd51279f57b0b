"""The result store: one directory per experiment, written incrementally, safe to interrupt.

Layout of ``<directory>``::

    spec.json                 what the runs are of: the experiment spec, the resolved base scenario,
                              the numbered design points with their factor values, the replication
                              seeds, the outcome names, the model (see speedtrap.experiments.identity);
                              and its provenance (package version, git commit, Python and libraries)
    runs/part-00001.parquet   finished runs, one small file per batch: point (a number of spec.json's
                              points), replication, seed, one float64 column per outcome and, where
                              the model names it, the engine that ran the run (``engine``: "typed
                              core" or "mesa"; ``engine_reason``: why not the typed core, or null)
    runs/part-00002.parquet   ...
    runs/journal-<pid>.jsonl  runs finished since the last part file, one JSON line each, written
                              as each run finishes (so a killed sweep loses no finished run)
    runs/quarantine/          part files and journals that could not be read, moved aside
    lock                      while a sweep writes the store: its pid (see speedtrap.experiments.lock)

Each part file is written to a temporary name and renamed into place, so a crash mid-write leaves
at most a stray ``*.tmp`` file (ignored) and never damages runs already stored. A journal's last
line may be cut short by a kill; such a line is ignored (that run is computed again), and opening
the store folds journals left behind into a part file. A part file that cannot be read (truncated,
corrupted on disk) is moved to ``runs/quarantine/`` with a :class:`CorruptPartWarning`, and its
runs are computed again; a journal with damaged lines (not UTF-8, not a run) is copied there whole
with one :class:`DamagedJournalWarning` and keeps only its readable runs. A store refuses runs of
anything but the spec it was made for: opening it with a different identity raises
:class:`StoreMismatchError` naming what changed.

A store that cannot be used as it is raises a :class:`StoreError` (a ``ValueError``) in one line
naming the path and what to do: a path of the wrong kind (a file where a directory belongs, a
directory as ``spec.json``), a damaged ``spec.json``, a name too long for the file system, a
directory that cannot be written when runs remain to compute (checked before any run, see
:meth:`ResultStore.writing`), and another sweep writing it (:class:`StoreLockedError`, naming its
pid: one sweep at a time writes a store). A store that cannot be written but holds every run asked
for is read as it is.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from speedtrap.experiments.lock import FileLock, LockHeldError

STORE_FORMAT = 2
"""Version of the store layout, recorded in spec.json. 2: runs are matched to design points by the
points' factor values and to replications by seed (``run_key``), so ``points`` lists every point
stored, numbered; 1: ``points`` was the design, numbered by position."""
ENGINE_COLUMNS = ("engine", "engine_reason")
"""String columns of a stored run naming the engine that ran it (not outcomes;
:func:`engine_tally`)."""
PROVENANCE_KEY = "provenance"
"""Key of spec.json recording what wrote the store (package version, git commit, Python and library
versions); not part of the identity a reopened store is checked against."""

KEY_COLUMNS = ("point", "replication", "seed")
PART_PATTERN = re.compile(r"^part-(\d{5,})\.parquet$")
JOURNAL_PATTERN = re.compile(r"^journal-(\d+)\.jsonl$")
QUARANTINE = "quarantine"
LOCK = "lock"
"""The lock file in a store's directory, held (with the holder's pid in it) while a sweep writes it."""
ANOTHER_DIRECTORY = "or choose another results directory"
NOT_WRITABLE = (errno.EACCES, errno.EPERM, errno.EROFS)
"""Errors that mean "this process may not write there" (as opposed to "that path is wrong")."""


class StoreError(ValueError):
    """A results directory that cannot be used as it is; the message is one line naming the path."""


class StoreMismatchError(StoreError):
    """The store holds runs of a different experiment spec than the one being run."""


class StoreLockedError(StoreError):
    """Another process (named by its pid) is writing the store."""


class CorruptPartWarning(UserWarning):
    """A part file could not be read; it was moved to ``runs/quarantine/`` and its runs will be redone."""


class DamagedJournalWarning(UserWarning):
    """A journal had damaged lines; it was copied to ``runs/quarantine/`` and their runs will be redone."""


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def path_error(path: Path, exc: OSError) -> StoreError:
    """A one-line :class:`StoreError` for an ``OSError`` met at ``path``."""
    if exc.errno == errno.ENAMETOOLONG:
        longest = max((len(os.fsencode(part)) for part in path.parts), default=0)
        return StoreError(
            f"{path}: name too long for the file system (a name of {longest} bytes; most allow 255): "
            "give the experiment a shorter name"
        )
    if exc.errno == errno.ENOTDIR:
        return StoreError(f"{path}: a file on that path is not a directory; move it away {ANOTHER_DIRECTORY}")
    return StoreError(f"{path}: {_reason(exc)}")


def _kind(path: Path) -> str:
    """``"missing"``, ``"dir"``, ``"file"`` or ``"other"``; a path that cannot be looked at raises
    :class:`StoreError`."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    except OSError as exc:
        raise path_error(path, exc) from None
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def _journal_run(line: bytes) -> dict[str, Any] | None:
    """The run journalled in ``line``, or ``None`` if the line is not one (not UTF-8 JSON of a run)."""
    try:
        run = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(run, dict):
        return None
    keys_ok = all(type(run.get(k)) is int for k in KEY_COLUMNS)
    values_ok = all(  # numbers, and the names of the engine that ran it
        v is None or type(v) in (int, float) or (type(v) is str and k in ENGINE_COLUMNS)
        for k, v in run.items()
    )
    return run if keys_ok and values_ok else None


def differences(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Dotted paths at which two JSON values differ (tables key by key, equally long lists item by item)."""
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return [f"{prefix} ({len(old)} → {len(new)} entries)"]
        return [
            p
            for i, (a, b) in enumerate(zip(old, new, strict=True))
            for p in differences(a, b, f"{prefix}.{i}")
        ]
    if isinstance(old, dict) and isinstance(new, dict):
        paths: list[str] = []
        for key in [*old, *(k for k in new if k not in old)]:
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in old or key not in new:
                paths.append(path)
            else:
                paths.extend(differences(old[key], new[key], path))
        return paths
    return [] if old == new else [prefix or "(everything)"]


def mismatch_error(directory: Path | str, changed: list[str]) -> StoreMismatchError:
    """The error for a store in ``directory`` that holds runs of another spec (``changed``: what differs)."""
    shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
    return StoreMismatchError(
        f"{directory} holds results of a different experiment spec (changed: {shown}); "
        "give the experiment a new name, or delete that directory to start over"
    )


class ResultStore:
    """The runs of one experiment in ``directory`` (see the module docstring for the layout).

    Nothing is written until :meth:`open` is called.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    @property
    def spec_path(self) -> Path:
        return self.directory / "spec.json"

    @property
    def runs_dir(self) -> Path:
        return self.directory / "runs"

    def identity(self) -> dict[str, Any] | None:
        """The contents of spec.json, or ``None`` if the store has not been opened yet.

        Raises :class:`StoreError` naming spec.json and what to do when it cannot be read or is
        damaged (cut short, not UTF-8, not a JSON object, nested too deep).
        """
        try:
            data = self.spec_path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except IsADirectoryError:
            raise self._spec_is_not_a_file() from None
        except OSError as exc:
            raise path_error(self.spec_path, exc) from None
        try:
            record = json.loads(data.decode("utf-8"))
            problem = None if isinstance(record, dict) else f"a JSON {type(record).__name__}, not an object"
        except UnicodeDecodeError:
            problem = "not UTF-8 text"
        except json.JSONDecodeError as exc:
            problem = f"not valid JSON: {exc}"
        except RecursionError:
            problem = "JSON nested too deep to read"
        if problem is not None:
            raise StoreError(
                f"{self.spec_path} is damaged ({problem}); without it the stored runs cannot be matched "
                f"to design points: move {self.directory} away to start over, {ANOTHER_DIRECTORY}"
            )
        result: dict[str, Any] = record
        return result

    def _spec_is_not_a_file(self) -> StoreError:
        return StoreError(
            f"{self.spec_path} is a directory, not the store's spec file; move it away {ANOTHER_DIRECTORY}"
        )

    def check(self) -> None:
        """Raise :class:`StoreError` naming the path unless each path of the store is of the right
        kind or absent: the directory (and the nearest of its parents that exists) a directory,
        ``runs`` a directory and ``spec.json`` a readable JSON object."""
        for path in [self.directory, *self.directory.parents]:
            kind = _kind(path)
            if kind == "missing":
                continue
            if kind != "dir":
                raise StoreError(
                    f"{path}: not a directory (the results go to {self.directory}/); "
                    f"move it away {ANOTHER_DIRECTORY}"
                )
            break
        if _kind(self.runs_dir) not in ("missing", "dir"):
            raise StoreError(
                f"{self.runs_dir}: not a directory (the store keeps its runs there); "
                f"move it away {ANOTHER_DIRECTORY}"
            )
        if _kind(self.spec_path) == "dir":
            raise self._spec_is_not_a_file()
        self.identity()

    def unwritable(self) -> str | None:
        """Why this process cannot write the store (``None``: it can), creating its directory if
        need be and trying a file in it and in ``runs/``. Raises :class:`StoreError` for other
        failures (a name too long, a file in the way)."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if exc.errno in NOT_WRITABLE:
                return _reason(exc)
            raise path_error(self.directory, exc) from None
        runs = self.runs_dir
        for folder in (self.directory, runs) if _kind(runs) == "dir" else (self.directory,):
            probe = folder / f".probe-{os.getpid()}.tmp"
            try:
                os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644))
                os.unlink(probe)
            except OSError as exc:
                if exc.errno in NOT_WRITABLE:
                    return _reason(exc) if folder == self.directory else f"{_reason(exc)} in {folder}"
                raise path_error(probe, exc) from None
        return None

    def unwritable_error(self, reason: str, pending: int) -> StoreError:
        """The error for a store that cannot be written (``reason``) while ``pending`` runs remain."""
        return StoreError(
            f"{self.directory}: cannot write the results there ({reason}); {pending} runs remain to "
            f"compute: make it writable {ANOTHER_DIRECTORY}"
        )

    @contextmanager
    def writing(self) -> Iterator[str | None]:
        """Hold the store for writing: check its paths (:meth:`check`), then take its lock for the
        ``with`` block and yield ``None``; or yield why it cannot be written (a read-only
        directory: what is stored can still be read). Raises :class:`StoreError` for a path of the
        wrong kind and :class:`StoreLockedError`, naming the holder's pid, while another process
        holds the store."""
        self.check()
        reason = self.unwritable()
        if reason is not None:
            yield reason
            return
        lock = FileLock(self.directory / LOCK)
        try:
            lock.acquire()
        except LockHeldError as held:
            holder = f"pid {held.pid}" if held.pid is not None else "pid not yet written"
            raise StoreLockedError(
                f"{self.directory} is in use by another sweep ({holder}); wait for it to finish, "
                f"{ANOTHER_DIRECTORY}"
            ) from None
        except OSError as exc:
            raise path_error(lock.path, exc) from None
        try:
            yield None
        finally:
            lock.release()

    def open(self, identity: dict[str, Any]) -> None:
        """Create the store for ``identity`` (JSON-able), or check that it already holds it.

        Raises :class:`StoreMismatchError` naming the changed fields when the directory holds the
        runs of a different identity.
        """
        record = {"format": STORE_FORMAT, **json.loads(json.dumps(identity))}
        existing = self.identity()
        if existing is not None:
            existing = {k: v for k, v in existing.items() if k != PROVENANCE_KEY}  # not part of the identity
            if existing != record:
                raise mismatch_error(self.directory, differences(existing, record))
            self._fold_journals()
            return
        try:
            self.runs_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise path_error(self.runs_dir, exc) from None
        from speedtrap.provenance import provenance

        record[PROVENANCE_KEY] = provenance()
        self._write_atomic(self.spec_path, json.dumps(record, indent=2).encode("utf-8"))

    def extend_identity(self, identity: dict[str, Any]) -> None:
        """Replace spec.json by ``identity`` (keeping its provenance): for a change that keeps every
        stored run valid, such as more replications on the same seeds or new design points."""
        existing = self.identity() or {}
        record = {"format": STORE_FORMAT, **json.loads(json.dumps(identity))}
        if PROVENANCE_KEY in existing:
            record[PROVENANCE_KEY] = existing[PROVENANCE_KEY]
        self._write_atomic(self.spec_path, json.dumps(record, indent=2).encode("utf-8"))

    @property
    def journal_path(self) -> Path:
        """This process's journal: runs finished since its last part file."""
        return self.runs_dir / f"journal-{os.getpid()}.jsonl"

    def _listing(self) -> list[Path]:
        """The entries of ``runs/`` (none when it is missing or not a directory)."""
        if _kind(self.runs_dir) != "dir":
            return []
        try:
            return list(self.runs_dir.iterdir())
        except OSError as exc:
            raise path_error(self.runs_dir, exc) from None

    def _journals(self) -> list[Path]:
        return sorted(p for p in self._listing() if JOURNAL_PATTERN.match(p.name))

    def record(self, run: Mapping[str, Any]) -> None:
        """Journal one finished run at once (a JSON line); :meth:`append` later stores it in a part."""
        line = json.dumps(dict(run)) + "\n"
        try:
            kept: int | None = self.journal_path.stat().st_size
        except FileNotFoundError:
            kept = None  # no journal yet
        except OSError as exc:
            raise path_error(self.journal_path, exc) from None
        try:
            with self.journal_path.open("a", encoding="utf-8") as f:
                f.write(line)
        except OSError as exc:
            _undo_append(self.journal_path, kept)
            raise path_error(self.journal_path, exc) from None

    def _journal_runs(self) -> list[dict[str, Any]]:
        return [run for path in self._journals() for run in self._read_journal(path)]

    def _read_journal(self, path: Path) -> list[dict[str, Any]]:
        """The runs of one journal. Its last line, if cut short by a kill, is left out quietly (that
        run is redone); other damaged lines are left out too, and the journal is quarantined with
        one :class:`DamagedJournalWarning`: copied whole to ``runs/quarantine/``, and rewritten with
        its readable runs only."""
        try:
            data = path.read_bytes()
        except FileNotFoundError:  # folded into a part by another process meanwhile
            return []
        except OSError as exc:
            warnings.warn(
                f"{path} could not be read ({_reason(exc)}); its runs will be computed again",
                DamagedJournalWarning,
                stacklevel=4,
            )
            return []
        *lines, last = data.split(b"\n")  # last: b"" after a final newline, else a line cut short
        runs = [run for line in lines if (run := _journal_run(line)) is not None]
        damaged = sum(1 for line in lines if line.strip()) - len(runs)
        if last and (run := _journal_run(last)) is not None:
            runs.append(run)
        if damaged:
            self._quarantine_journal(path, data, runs, damaged)
        return runs

    def _quarantine_journal(self, path: Path, data: bytes, runs: list[dict[str, Any]], damaged: int) -> None:
        folder = self.runs_dir / QUARANTINE
        target = folder / path.name
        n = 1
        while target.exists():
            target, n = folder / f"{path.stem}.{n}{path.suffix}", n + 1
        try:
            folder.mkdir(exist_ok=True)
            self._write_atomic(target, data)
            self._write_atomic(path, b"".join(json.dumps(run).encode() + b"\n" for run in runs))
            done = f"the journal was copied to {target} and keeps its {len(runs)} readable runs"
        except (OSError, StoreError) as exc:
            done = f"the journal could not be copied to {target} ({exc})"
        lines = "line" if damaged == 1 else "lines"
        warnings.warn(
            f"{path}: {damaged} damaged {lines} (not UTF-8 JSON of a run) skipped; {done}; "
            "the damaged runs will be computed again",
            DamagedJournalWarning,
            stacklevel=4,
        )

    def _fold_journals(self) -> None:
        """Store the runs of journals left behind (a killed sweep) in a part file, then drop them."""
        journals = self._journals()
        runs = self._journal_runs()
        if runs:
            self._write_part(pd.DataFrame(runs))
        for path in journals:
            path.unlink(missing_ok=True)

    def _write_atomic(self, path: Path, data: bytes) -> None:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            with tmp.open("wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            _discard(tmp)
            raise path_error(path, exc) from None

    def _parts(self) -> list[tuple[int, Path]]:
        return sorted((int(m.group(1)), p) for p in self._listing() if (m := PART_PATTERN.match(p.name)))

    def part_paths(self) -> list[Path]:
        """The stored part files, in the order they were written."""
        return [p for _, p in self._parts()]

    def append(self, runs: pd.DataFrame) -> Path | None:
        """Store a batch of finished runs as the next part file (atomically) and clear this
        process's journal (the batch holds the runs journalled since the last part); ``None`` if
        empty."""
        if runs.empty:
            return None
        if self.identity() is None:
            raise FileNotFoundError(f"{self.directory}: open the store before appending runs")
        missing = [c for c in KEY_COLUMNS if c not in runs.columns]
        if missing:
            raise ValueError(f"runs lack the key columns {', '.join(missing)}")
        path = self._write_part(runs)
        self.journal_path.unlink(missing_ok=True)
        return path

    def _write_part(self, runs: pd.DataFrame) -> Path:
        runs = runs.astype({c: "int64" for c in KEY_COLUMNS})
        parts = self._parts()
        number = parts[-1][0] + 1 if parts else 1
        path = self.runs_dir / f"part-{number:05d}.parquet"
        table = pa.Table.from_pandas(runs.reset_index(drop=True), preserve_index=False)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            pq.write_table(table, tmp)
            with tmp.open("rb") as f:
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            _discard(tmp)
            raise path_error(path, exc) from None
        return path

    def _read_part(self, path: Path, columns: list[str] | None = None) -> pa.Table | None:
        """The table of one part file, or ``None`` after moving an unreadable one to quarantine."""
        try:
            return pq.read_table(path, columns=columns)
        except (pa.ArrowException, OSError, ValueError) as exc:
            target = self.runs_dir / QUARANTINE / path.name
            try:
                target.parent.mkdir(exist_ok=True)
                os.replace(path, target)
                moved = f"moved to {target}"
            except OSError as move:
                moved = f"could not be moved to {target} ({_reason(move)})"
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            warnings.warn(
                f"{path} could not be read ({reason}); {moved}, its runs will be computed again",
                CorruptPartWarning,
                stacklevel=3,
            )
            return None

    def read(self) -> pd.DataFrame:
        """Every stored run (point, replication, seed, outcomes), sorted by point and replication.

        A run stored twice (two runners on one store, a journal and its part) is kept once.
        """
        tables = [self._read_part(p) for p in self.part_paths()]
        frames = [t.to_pandas() for t in tables if t is not None]
        journal = self._journal_runs()
        if journal:
            frames.append(pd.DataFrame(journal).astype({c: "int64" for c in KEY_COLUMNS}))
        if not frames:
            return pd.DataFrame({c: pd.Series(dtype="int64") for c in KEY_COLUMNS})
        runs = pd.concat(frames, ignore_index=True)
        runs = runs.drop_duplicates(subset=["point", "replication"], keep="first")
        return runs.sort_values(["point", "replication"], ignore_index=True)

    def completed_keys(self, by: str = "replication") -> set[tuple[int, int]]:
        """The (point, replication) pairs already stored; ``by="seed"``: the (point, seed) pairs."""
        if by not in ("replication", "seed"):
            raise ValueError(f"by must be 'replication' or 'seed', got {by!r}")
        keys: set[tuple[int, int]] = set()
        for path in self.part_paths():
            table = self._read_part(path, columns=["point", by])
            if table is not None:
                keys.update(zip(table["point"].to_pylist(), table[by].to_pylist(), strict=True))
        keys.update((run["point"], run[by]) for run in self._journal_runs())
        return keys


def engine_tally(runs: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """How many of ``runs`` each engine ran: ``{label: {"engine", "engine_reason", "runs"}}``, the
    label the engine, followed by its reason in parentheses where it has one (``"not recorded"`` for
    runs stored without an engine: by an earlier version, or a model that names none)."""
    tally: dict[str, dict[str, Any]] = {}
    engines = runs["engine"] if "engine" in runs.columns else pd.Series([None] * len(runs), dtype=object)
    if "engine_reason" in runs.columns:
        reasons = runs["engine_reason"]
    else:
        reasons = pd.Series([None] * len(runs), dtype=object)
    for engine, reason in zip(engines.tolist(), reasons.tolist(), strict=True):
        engine = engine if isinstance(engine, str) else None
        reason = reason if isinstance(reason, str) else None
        name = engine if engine is not None else "not recorded"
        label = name if reason is None else f"{name} ({reason})"
        entry = tally.setdefault(label, {"engine": engine, "engine_reason": reason, "runs": 0})
        entry["runs"] += 1
    return tally


def _discard(path: Path) -> None:
    """Remove ``path`` (a temporary file a failed write left, empty or partial), if it can be."""
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)


def _undo_append(path: Path, kept: int | None) -> None:
    """After a failed append to ``path``: cut it back to its ``kept`` bytes (no partial line), or
    remove it when the append had created it (``kept`` is ``None``), leaving no empty journal."""
    with contextlib.suppress(OSError):
        if kept is None:
            path.unlink(missing_ok=True)
        else:
            os.truncate(path, kept)
