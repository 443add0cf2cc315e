"""`BlobStore`: file contents kept by their SHA-256, shared by every session of the agent dir.

A blob is written once (temp file then rename), so readers never see half a blob and two processes storing the
same content agree. Blobs are plain files; `checkpoints/gc.py` removes the ones no session refers to.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BlobStore:
    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(os.path.abspath(root))

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
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temp, target)
        except BaseException:
            try:
                os.unlink(temp)
            except OSError:
                pass
            raise
        return digest

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


__all__ = ["BlobStore", "content_hash"]
