"""Session ids, file names and new headers."""

from __future__ import annotations

import os
import re
import time
import uuid
from pathlib import Path

from apex_coding_agent.session.entries import CURRENT_SESSION_VERSION, SessionHeader, iso_now

SESSION_ID_PATTERN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
SESSION_ID_ERROR = (
    "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', "
    "and start and end with an alphanumeric character"
)


def uuid7() -> str:
    """A UUIDv7 string: 48-bit Unix ms, version 7, random rest (sortable by creation time)."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | (rand >> 68 & 0xFFF) << 64 | 0b10 << 62
    value |= rand & ((1 << 62) - 1)
    return str(uuid.UUID(int=value))


def validate_session_id(session_id: str) -> str:
    """`session_id` if it has the allowed shape, else ValueError with the spec's message."""
    if not SESSION_ID_PATTERN.match(session_id):
        raise ValueError(SESSION_ID_ERROR)
    return session_id


def session_file_name(header: SessionHeader) -> str:
    """`<ts>_<id>.jsonl` with `:` and `.` of the header timestamp replaced by `-`."""
    return f"{header.timestamp.replace(':', '-').replace('.', '-')}_{header.id}.jsonl"


def new_header(cwd: str, session_id: str | None, parent_session: str | None = None) -> SessionHeader:
    return SessionHeader(
        version=CURRENT_SESSION_VERSION,
        id=validate_session_id(session_id) if session_id is not None else uuid7(),
        timestamp=iso_now(),
        cwd=str(Path(cwd).absolute()),
        parent_session=parent_session,
    )


__all__ = ["SESSION_ID_ERROR", "SESSION_ID_PATTERN", "new_header", "session_file_name", "uuid7", "validate_session_id"]
