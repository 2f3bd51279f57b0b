"""An exclusive lock held by one process at a time: a lock file holding its holder's pid.

The lock is the kernel's (``fcntl.flock`` on the open file), so it is released when its holder
ends in any way, SIGKILL included: a lock file left behind by a killed process does not block the
next one (its pid is only there to name the holder to whoever is refused). The file is removed on
release; an acquirer that locked a file removed meanwhile tries again on the new one. The file is
opened close-on-exec, so processes the holder starts do not inherit the lock. On systems without
``fcntl`` (Windows) there is no lock.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


class LockHeldError(Exception):
    """Another process holds the lock at ``path``; ``pid`` is its pid (``None`` if it wrote none yet)."""

    def __init__(self, path: Path, pid: int | None) -> None:
        super().__init__(f"{path} is held by pid {pid}")
        self.path = path
        self.pid = pid


def _holder(fd: int) -> int | None:
    """The pid written in the lock file open at ``fd``, if any."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


class FileLock:
    """An exclusive, non-blocking lock on the file ``path`` (created if need be)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock; raises :class:`LockHeldError` if another process holds it, ``OSError`` if the
        file cannot be created."""
        if fcntl is None or self._fd is not None:  # pragma: no cover - Windows
            return
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pid = _holder(fd)
                os.close(fd)
                raise LockHeldError(self.path, pid) from None
            except BaseException:
                os.close(fd)
                raise
            try:  # the holder before may have removed this file (and another made a new one) meanwhile
                current = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except FileNotFoundError:
                current = False
            if current:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        self._fd = fd

    def release(self) -> None:
        """Remove the lock file and let go of the lock (nothing if not held)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            self.path.unlink(missing_ok=True)
        except OSError:  # pragma: no cover - a file system gone read-only: the lock goes with the fd
            pass
        finally:
            os.close(fd)

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
