"""Per-file serialization of read-modify-write tool calls.

Tool calls of one assistant message run concurrently; two edits of the same file must not interleave, while edits of
different files should not wait for each other.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

_locks: dict[str, asyncio.Lock] = {}
_users: dict[str, int] = {}


def _queue_key(path: str) -> str:
    try:
        return os.path.realpath(path, strict=True)
    except OSError:
        return os.path.abspath(path)


async def with_file_mutation_queue(path: str, fn: Callable[[], Awaitable[T]]) -> T:
    """Run `fn` while holding the lock of `path` (keyed by its real path, or absolute path when missing)."""
    key = _queue_key(path)
    lock = _locks.get(key)
    if lock is None:
        lock = _locks[key] = asyncio.Lock()
    _users[key] = _users.get(key, 0) + 1
    try:
        async with lock:
            return await fn()
    finally:
        # Drop idle locks so a long session does not keep one per file it ever touched.
        _users[key] -= 1
        if _users[key] == 0:
            del _users[key]
            del _locks[key]


__all__ = ["with_file_mutation_queue"]
