"""`BlobStore`: file contents kept by their SHA-256, shared by every session of the agent dir.

A blob is written once (temp file then rename), so readers never see half a blob and two processes storing the
same content agree. Blobs are plain files; `checkpoints/gc.py` removes the ones no session refers to.

`put_file` keeps a file as it is now. Where the file system shares data between files (btrfs, XFS with reflink,
bcachefs...), the blob is a reflink clone (`ioctl FICLONE`): no data is copied and the clone is a consistent snapshot
even while the file is being written. Elsewhere (ext4, tmpfs, overlayfs...) the first attempt fails and the store
reads and writes copies from then on. A hard link would be no copy at all, but it is not one: a program that writes
the file in place (`>>`, most editors' saves of large files) would change the kept content too.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import os
import stat
import sys
from pathlib import Path

FICLONE = 0x40049409
"""Linux `_IOW(0x94, 9, int)`: make the target file share the source file's data."""
_NO_CLONE = frozenset(
    {errno.EOPNOTSUPP, errno.ENOTTY, errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EBADF, errno.EPERM}
)
"""The file system (or the pair of them) cannot clone: stop trying for this store."""
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_temp_numbers = itertools.count()


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BlobStore:
    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(os.path.abspath(root))
        self.clones: bool | None = None if sys.platform == "linux" else False
        """None: not tried yet; True: this store's file system made a reflink clone; False: it cannot."""
        self._folders: set[str] = set()
        """Blob folders known to exist (no `mkdir` per blob)."""

    def _temp(self, folder: Path) -> tuple[int, str]:
        """A new file of ours in `folder`: a counter, not a random name (`mkstemp` costs ~10 µs a name)."""
        while True:
            path = os.path.join(folder, f".tmp-{os.getpid()}-{next(_temp_numbers)}")
            try:
                return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | _CLOEXEC, 0o600), path
            except FileExistsError:  # left by a process that had our pid
                continue

    def _folder_of(self, target: Path) -> None:
        folder = str(target.parent)
        if folder not in self._folders:
            os.makedirs(folder, exist_ok=True)
            self._folders.add(folder)

    def path_of(self, digest: str) -> Path:
        return self.root / digest[:2] / digest[2:]

    def has(self, digest: str) -> bool:
        return self.path_of(digest).is_file()

    def put(self, data: bytes) -> str:
        """Store `data` (a no-op when it is there already); returns its hash."""
        digest = content_hash(data)
        target = self.path_of(digest)
        if target.exists():
            return digest
        self._folder_of(target)
        fd, temp = self._temp(target.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temp, target)
        except BaseException:
            _unlink(temp)
            raise
        return digest

    def put_file(self, path: str) -> str:
        """Store the regular file at `path` as it is now (never following a symlink, never blocking on a FIFO put
        in its place); returns its hash. A reflink clone where the file system allows, else a copy."""
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EINVAL, "not a regular file", path)
            if self.clones is not False:
                digest = self._put_clone(fd)
                if digest is not None:
                    return digest
            chunks: list[bytes] = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            data = b"".join(chunks)
        finally:
            os.close(fd)
        return self.put(data)

    def _put_clone(self, source: int) -> str | None:
        import fcntl

        self._folder_of(self.root / "x")
        clone, temp = self._temp(self.root)
        try:
            try:
                fcntl.ioctl(clone, FICLONE, source)
            except OSError as exc:
                if exc.errno in _NO_CLONE:
                    self.clones = False
                _unlink(temp)
                return None
            self.clones = True
            # The hash is read from the clone: what is kept is exactly what is hashed, whatever the file does now.
            hasher = hashlib.sha256()
            while chunk := os.read(clone, 1 << 20):
                hasher.update(chunk)
            digest = hasher.hexdigest()
            target = self.path_of(digest)
            if target.exists():
                _unlink(temp)
            else:
                self._folder_of(target)
                os.replace(temp, target)
            return digest
        except BaseException:
            _unlink(temp)
            raise
        finally:
            os.close(clone)

    def get(self, digest: str) -> bytes:
        """The content of a blob; raises `FileNotFoundError` when it was never stored or has been collected."""
        return self.path_of(digest).read_bytes()

    def digests(self) -> list[tuple[str, Path]]:
        """Every stored blob as (hash, path)."""
        out: list[tuple[str, Path]] = []
        if not self.root.is_dir():
            return out
        for prefix in os.scandir(self.root):
            if not prefix.is_dir() or len(prefix.name) != 2:
                continue
            out.extend(
                (prefix.name + blob.name, Path(blob.path))
                for blob in os.scandir(prefix.path)
                if not blob.name.startswith(".")
            )
        return out


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


__all__ = ["BlobStore", "content_hash"]
