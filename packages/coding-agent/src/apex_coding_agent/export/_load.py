"""Reading a session for export without ever writing to it."""

from __future__ import annotations

import os
from pathlib import Path

from apex_coding_agent.session.entries import CURRENT_SESSION_VERSION
from apex_coding_agent.session.file_errors import SessionFileError
from apex_coding_agent.session.migrations import migrate_bytes
from apex_coding_agent.session.scanner import file_version, read_session_file, scan_bytes
from apex_coding_agent.session.session_manager import SessionManager


class ExportError(Exception):
    """An export or import cannot be done; the message is meant for the user."""


def open_read_only(path: str | Path) -> SessionManager:
    """A manager over the session file at `path` that has no file attached, so nothing is ever written.

    Old versions are migrated in memory only (`SessionManager.open` would rewrite the file). Raises ExportError
    when the file is missing or not a session.
    """
    file = Path(path).expanduser().absolute()
    if not file.is_file():
        raise ExportError(f"File not found: {file}")
    loaded = read_session_file(file)
    if loaded.header is None:
        raise ExportError(f"Session file is not a valid pi session: {file}")
    if file_version(loaded) < CURRENT_SESSION_VERSION:
        migrated = migrate_bytes(file.read_bytes())
        if migrated is not None:
            loaded = scan_bytes(file, migrated)
    header = loaded.header
    if header is None:  # pragma: no cover - migration keeps the header
        raise SessionFileError(f"Session file is not a valid pi session: {file}")
    return SessionManager(header.cwd or os.getcwd(), None, header, None, loaded)


def resolve_session(session: str | Path | SessionManager) -> tuple[SessionManager, Path | None]:
    """The manager to read and the session file it stands for (None for an in-memory session)."""
    if isinstance(session, SessionManager):
        return session, session.session_file
    manager = open_read_only(session)
    return manager, Path(session).expanduser().absolute()


__all__ = ["ExportError", "open_read_only", "resolve_session"]
