"""Read-only directories for tests, as a read-only mount makes them: by their mode bits, and where
this process may write regardless (root, which ``chmod`` does not stop), by refusing Python's writes
below them with ``EROFS``. ``pytest.MonkeyPatch`` undoes the refusals; :meth:`ReadOnly.thaw` the modes."""

from __future__ import annotations

import builtins
import errno
import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class ReadOnly:
    """``freeze(path)`` makes a directory tree read-only until :meth:`thaw`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.monkeypatch = monkeypatch
        self.frozen: list[Path] = []

    def below(self, path: Any) -> bool:
        if not isinstance(path, str | bytes | os.PathLike):
            return False
        target = Path(os.fsdecode(path)).absolute()
        return any(target == top or top in target.parents for top in self.frozen)

    def guard(self, real: Callable[..., Any], *paths: int, writes: Callable[..., bool] | None = None) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            for i in paths:
                if i < len(args) and self.below(args[i]) and (writes is None or writes(*args, **kwargs)):
                    raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fsdecode(args[i]))
            return real(*args, **kwargs)

        return call

    def __call__(self, top: Path) -> None:
        self.freeze(top)

    def freeze(self, top: Path) -> None:
        for path in [top, *top.rglob("*")]:
            path.chmod(0o555 if path.is_dir() else 0o444)
        self.frozen.append(top.absolute())
        if os.access(top, os.W_OK):  # the mode does not stop this process (root): refuse as a mount would
            patch = self.monkeypatch.setattr
            patch(os, "mkdir", self.guard(os.mkdir, 0))
            patch(os, "open", self.guard(os.open, 0, writes=_flags_write))
            patch(io, "open", self.guard(io.open, 0, writes=_opens_to_write))
            patch(builtins, "open", self.guard(builtins.open, 0, writes=_opens_to_write))
            for name in ("replace", "rename", "unlink", "remove", "rmdir"):
                patch(os, name, self.guard(getattr(os, name), 0, 1))

    def thaw(self) -> None:
        self.monkeypatch.undo()
        for top in self.frozen:
            for path in [top, *top.rglob("*")]:
                path.chmod(0o755 if path.is_dir() else 0o644)
        self.frozen.clear()


def _opens_to_write(file: Any, mode: str = "r", *_: Any, **__: Any) -> bool:
    return any(c in mode for c in "wax+")


def _flags_write(path: Any, flags: int, *_: Any, **__: Any) -> bool:
    return bool(flags & WRITE_FLAGS)
