"""The session index's database file: where it is, its schema, and opening it (see `session.index`).

A damaged file, or one of an older schema, is replaced; one of a newer schema is refused (`IndexUnavailableError`)
and left for the version that made it.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path

from apex_coding_agent.paths import get_agent_dir

SCHEMA_VERSION = 2
INDEX_FILE_NAME = "session-index.sqlite"
INDEX_ENV = "APEX_CODE_SESSION_INDEX"
"""Set to `off` (or `0`) to list and search by reading the files, without the index."""
BUSY_TIMEOUT_S = 30.0
# Errors that say nothing about the file's content: the index is not usable now, but it is not thrown away.
NOT_DAMAGE = ("locked", "unable to open", "readonly", "disk I/O", "out of memory", "full")

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(
    id INTEGER PRIMARY KEY,
    dir TEXT NOT NULL,
    name TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    read_to INTEGER NOT NULL,
    fingerprint BLOB NOT NULL,
    state INTEGER NOT NULL,
    session_id TEXT,
    cwd TEXT NOT NULL DEFAULT '',
    session_name TEXT,
    parent_session TEXT,
    created TEXT,
    newest_ms INTEGER,
    message_count INTEGER NOT NULL DEFAULT 0,
    first_message TEXT,
    leaf_id TEXT,
    models TEXT NOT NULL DEFAULT '',
    cost REAL NOT NULL DEFAULT 0,
    UNIQUE(dir, name)
);
CREATE TABLE texts(id INTEGER PRIMARY KEY AUTOINCREMENT, file INTEGER NOT NULL, entry_id TEXT NOT NULL,
    kind TEXT NOT NULL, text TEXT NOT NULL);
CREATE INDEX texts_file ON texts(file);
CREATE VIRTUAL TABLE texts_fts USING fts5(text, content='texts', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2');
INSERT INTO meta(key, value) VALUES ('fts_upto', '0');
"""
# Texts reach the full-text index lazily, in bulk, before a search (`SessionIndex.catch_up`): rows of `texts` up to
# `meta.fts_upto` are in `texts_fts`, later ones not yet. Ids are never reused (AUTOINCREMENT), so that line holds.


class IndexUnavailableError(Exception):
    """The index cannot be used here (disabled, newer schema, unwritable); callers read the files instead."""


def index_path(env: Mapping[str, str] | None = None) -> Path:
    """`<agentDir>/session-index.sqlite`: beside the sessions root (`<agentDir>/sessions`)."""
    return get_agent_dir(env) / INDEX_FILE_NAME


def index_enabled(env: Mapping[str, str] | None = None) -> bool:
    value = (os.environ if env is None else env).get(INDEX_ENV, "").strip().lower()
    return value not in ("off", "0", "false", "no")


def connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise IndexUnavailableError(f"{path} was made by a newer version (schema {version})")
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        if version < SCHEMA_VERSION:
            _create_schema(conn)
        conn.execute("SELECT count(*) FROM meta").fetchone()  # a damaged file fails here rather than later
    except BaseException:
        conn.close()
        raise
    return conn


def _create_schema(conn: sqlite3.Connection) -> None:
    """Drop whatever an older version left and create the current tables, all in one transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:  # another process may have won
            # Virtual tables first: their shadow tables go with them (dropping what is already gone is harmless).
            old = conn.execute(
                "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND type IN ('table', 'view') "
                "ORDER BY sql NOT LIKE 'CREATE VIRTUAL%'"
            ).fetchall()
            for kind, name in old:
                conn.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
            for statement in _statements(_SCHEMA):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _statements(script: str) -> Iterator[str]:
    """The statements of `script`, each whole (a trigger's body holds `;` of its own)."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            yield buffer.strip()
            buffer = ""


def remove_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(OSError):
            os.unlink(f"{path}{suffix}")


__all__ = [
    "BUSY_TIMEOUT_S",
    "INDEX_ENV",
    "INDEX_FILE_NAME",
    "NOT_DAMAGE",
    "SCHEMA_VERSION",
    "IndexUnavailableError",
    "connect",
    "index_enabled",
    "index_path",
    "remove_database",
]
