"""A small advisory lock on `<file>.lock` for read-modify-write of JSON config files.

flock, not a create-exclusive lock file: the kernel drops it when a process dies, so a crash
never leaves a stale lock behind. Both helpers work on the real file: a symlinked config (dotfiles)
is written through, and its link stays.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ATTEMPTS = 10
RETRY_DELAY_S = 0.02


class FileLockTimeoutError(OSError):
    """Another process held the lock for every attempt."""


@contextmanager
def locked(path: Path, *, attempts: int = ATTEMPTS, delay: float = RETRY_DELAY_S) -> Iterator[None]:
    """Hold an exclusive lock on `path` + `.lock` (created, with its directory, if needed)."""
    real = Path(os.path.realpath(path))
    lock_path = real.with_name(real.name + ".lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        for attempt in range(attempts):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if attempt == attempts - 1:
                    raise FileLockTimeoutError(f"could not lock {path}: another process holds {lock_path}") from None
                time.sleep(delay)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def write_atomic(path: Path, text: str, mode: int | None = None) -> None:
    """Write `text` to a temp file beside `path`, fsync, then rename over it.

    A symlink is followed (the file it names is replaced, the link stays); anything there that is not a regular
    file (a directory, FIFO, device) is never replaced: OSError EINVAL."""
    path = Path(os.path.realpath(path))
    try:
        mode_there = os.stat(path).st_mode
    except FileNotFoundError:
        mode_there = None
    if mode_there is not None and not stat.S_ISREG(mode_there):
        raise OSError(errno.EINVAL, "not a regular file, not replaced", str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644 if mode is None else mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


__all__ = ["FileLockTimeoutError", "locked", "write_atomic"]
