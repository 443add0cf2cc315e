"""Errors of the session file layer, and the guard that only ever opens regular files."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class SessionFileError(Exception):
    """A session file cannot be used as asked (not a session, locked, changed under us)."""


class SessionLockedError(SessionFileError):
    """Another process is the writer of this session file (or holds its id, see `SessionManager.lock_for_writing`)."""

    def __init__(self, path: Path, pid: int | None, subject: str | None = None, lock_name: str | None = None) -> None:
        holder = f"process {pid}" if pid is not None else "another process"
        what = subject if subject is not None else f"Session file {path}"
        super().__init__(f"{what} is in use by {holder} (lock: {lock_name or path.name + '.lock'})")
        self.path = path
        self.pid = pid


class SessionWriteError(SessionFileError):
    """Writing to a session file failed (disk full, file too large, read-only...): entries were not saved."""


class NotARegularFileError(SessionFileError):
    """The path names a directory, FIFO, device or socket: never read as a session, never written or replaced."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(f"{path} is {kind}, not a session file")
        self.path = path
        self.kind = kind


def kind_of(mode: int) -> str:
    """What a non-regular file is, for messages (`mode` as `os.stat` gives it)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_regular(path: Path) -> bool:
    """True if `path` (symlinks followed) is a regular file, False if nothing is there; raises
    `NotARegularFileError` for anything else. Only `stat`: a FIFO or device is never opened."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(mode):
        raise NotARegularFileError(path, kind_of(mode))
    return True


def open_regular(path: Path, flags: int) -> int:
    """`os.open` that only ever opens a regular file: checked with `stat` first (a FIFO would block, `/dev/zero`
    never ends), opened non-blocking, then checked again on the descriptor (the path may have changed between)."""
    check_regular(path)
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFileError(path, kind_of(mode))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


__all__ = [
    "NotARegularFileError",
    "SessionFileError",
    "SessionLockedError",
    "SessionWriteError",
    "check_regular",
    "kind_of",
    "open_regular",
]
