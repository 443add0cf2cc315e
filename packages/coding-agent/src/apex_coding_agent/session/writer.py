"""The single writer of a session file: its advisory lock and its append/rewrite descriptor."""

from __future__ import annotations

import fcntl
import logging
import os
import stat
from pathlib import Path

from apex_coding_agent.session.file_errors import (
    NotARegularFileError,
    SessionFileError,
    SessionLockedError,
    check_regular,
    kind_of,
    open_regular,
)

logger = logging.getLogger(__name__)


class SessionLock:
    """Advisory single-writer lock: `flock` on the sidecar `<file>.lock`, which holds the writer's pid.

    The sidecar sits beside the real file (symlinks resolved), so every name of one file shares one lock. The kernel
    drops a flock when its process dies, so a crashed (even SIGKILLed) writer never blocks the next one: its
    leftover sidecar is simply locked again. The sidecar is unlinked on release; an acquirer re-checks that the path
    still names the inode it locked, so a release racing with an acquire cannot leave two holders.
    """

    def __init__(self, path: Path, lock_path: Path | None = None, subject: str | None = None) -> None:
        self.path = path
        if lock_path is None:
            real = Path(os.path.realpath(path))
            lock_path = real.with_name(real.name + ".lock")
        self.lock_path = lock_path
        self._subject = subject
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock or raise `SessionLockedError` naming the holder's pid."""
        if self._fd is not None:
            return
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            # Never through a symlink, never blocking (a FIFO planted as the sidecar), only a regular file.
            flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
            fd = os.open(self.lock_path, flags, 0o644)
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                os.close(fd)
                raise NotARegularFileError(self.lock_path, kind_of(mode))
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pid = _read_pid(fd)
                os.close(fd)
                raise SessionLockedError(self.path, pid, self._subject, self.lock_path.name) from None
            try:
                same = os.stat(self.lock_path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            self._fd = fd
            return

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            self.lock_path.unlink(missing_ok=True)
        finally:
            os.close(self._fd)  # closing the last descriptor drops the flock
            self._fd = None


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class SessionWriter:
    """The one writer of a session file: holds the lock and an `O_APPEND` descriptor.

    Every `append` is one complete line written with one `write` call (regular files do not split it), so a crash
    leaves at most one torn final line, which the loader skips; a write that fails (disk full, file size limit) is
    cut back off, so the file stays as it was. Only regular files are written: a symlink is followed (the file it
    names is written, the link stays), a directory, FIFO or device is refused and never replaced.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.target = Path(os.path.realpath(path))
        """The file actually written: `path` with symlinks resolved."""
        self.lock = SessionLock(path)
        self._fd: int | None = None

    @property
    def is_open(self) -> bool:
        return self._fd is not None

    def create(self, data: bytes) -> None:
        """Create the file exclusively (error if it exists) with `data` as its first lines; a failed write removes
        the file again (it is ours: nothing else existed there)."""
        self.target.parent.mkdir(parents=True, exist_ok=True)
        self.lock.acquire()
        try:
            fd = os.open(self.target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC, 0o644)
        except BaseException:
            self.lock.release()
            raise
        try:
            _write_all(fd, data)
        except BaseException:
            os.close(fd)
            self.target.unlink(missing_ok=True)
            self.lock.release()
            raise
        self._fd = fd

    def open_existing(self, expected_size: int) -> None:
        """Become the writer of an existing file that was loaded when it had `expected_size` bytes."""
        self.lock.acquire()
        try:
            fd = open_regular(self.target, os.O_WRONLY | os.O_APPEND)
            size = os.fstat(fd).st_size
            if size != expected_size:
                os.close(fd)
                raise SessionFileError(
                    f"Session file {self.path} changed on disk since it was opened ({expected_size} -> {size} bytes)"
                )
        except BaseException:
            self.lock.release()
            raise
        self._fd = fd
        if size:
            self._terminate_torn_line(size)

    def _terminate_torn_line(self, size: int) -> None:
        # A torn last line (crash mid-write) must not swallow our first new line: end it with its own newline.
        read_fd = open_regular(self.target, os.O_RDONLY)
        try:
            last = os.pread(read_fd, 1, size - 1)
        finally:
            os.close(read_fd)
        if last != b"\n":
            self.append(b"\n")

    def append(self, data: bytes) -> None:
        """Append complete line(s); the caller opened or created the file first. On failure the file is cut back
        to its size before the call, so no partial line is left for the next append to run into."""
        fd = self._fd
        if fd is None:
            raise SessionFileError(f"Session file {self.path} is not open for writing")
        size = os.fstat(fd).st_size
        try:
            _write_all(fd, data)
        except OSError:
            try:
                os.ftruncate(fd, size)
            except OSError:
                logger.warning("could not cut a failed write off %s", self.path)
            raise

    def rewrite(self, data: bytes) -> None:
        """Replace the whole file atomically (temp file beside the real file + `os.replace`) under the lock.

        A symlink keeps pointing at the rewritten file; anything but a regular file (or nothing) is refused."""
        self.lock.acquire()
        check_regular(self.target)
        self.target.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.target.with_name(f".{self.target.name}.{os.getpid()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
            try:
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self.target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        # The old descriptor points at the replaced inode; appends must go to the new file.
        self._fd = open_regular(self.target, os.O_WRONLY | os.O_APPEND)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self.lock.release()


__all__ = ["SessionLock", "SessionWriter"]
