"""Full-text search over every session's messages, through the session index.

What a user types is taken as words that must all occur (in any order, any case, accents ignored); `"two words"`
in quotes is a phrase and `word*` a prefix. Nothing typed is read as FTS5 syntax, so no input is a syntax error.
Each hit is one message (user or assistant text, a tool call, or a tool result when tool output is indexed) with a
snippet around the match and the entry id, so the session can be opened at that entry (`--session FILE --entry ID`).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from apex_coding_agent.paths import default_session_dir, is_default_session_dir
from apex_coding_agent.session.index import ROW_FIELDS, IndexedFile, IndexUnavailableError, SessionIndex, dir_key
from apex_coding_agent.session.listing import session_dirs, session_info

if TYPE_CHECKING:
    from apex_coding_agent.core.settings import SettingsManager

_TERM = re.compile(r'"([^"]*)"?|(\S+)')
_OPEN, _CLOSE = "\x01", "\x02"
SNIPPET_TOKENS = 24
RANKED_MATCHES = 20_000
"""Up to this many matching messages, hits come best first (bm25); beyond it ranking would score them all, so the
newest come first instead, found without looking at the rest."""


class SearchError(Exception):
    """A search that cannot be run (empty query, no usable index); the message is meant for the user."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One matching message: where it is, which session, and a snippet whose `highlights` are (start, end) spans."""

    path: Path
    session_id: str
    cwd: str
    session_name: str | None
    first_message: str
    modified: datetime
    entry_id: str
    kind: str
    snippet: str
    highlights: tuple[tuple[int, int], ...]

    def to_json(self) -> dict[str, object]:
        """The wire shape shared by `sessions search --json`, RPC `search_sessions` and the SDK."""
        return {
            "path": str(self.path),
            "sessionId": self.session_id,
            "cwd": self.cwd,
            "sessionName": self.session_name,
            "firstMessage": self.first_message,
            "modified": self.modified.isoformat().replace("+00:00", "Z"),
            "entryId": self.entry_id,
            "kind": self.kind,
            "snippet": self.snippet,
            "highlights": [list(span) for span in self.highlights],
        }


def fts_query(text: str) -> str:
    """`text` as an FTS5 query of quoted terms (see the module docstring); SearchError when it has no words."""
    terms = []
    for match in _TERM.finditer(text):
        phrase, word = match.group(1), match.group(2)
        term = phrase if phrase is not None else word
        prefix = phrase is None and term.endswith("*")
        term = term.rstrip("*") if prefix else term
        if not any(ch.isalnum() for ch in term):
            continue  # punctuation alone matches nothing the tokenizer keeps
        quoted = '"' + term.replace('"', '""') + '"'
        terms.append(quoted + "*" if prefix else quoted)
    if not terms:
        raise SearchError("Nothing to search for: type at least one word")
    return " ".join(terms)


def _highlights(marked: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    plain: list[str] = []
    spans: list[tuple[int, int]] = []
    length, start = 0, 0
    for part in re.split(f"([{_OPEN}{_CLOSE}])", marked):
        if part == _OPEN:
            start = length
        elif part == _CLOSE:
            spans.append((start, length))
        else:
            plain.append(part)
            length += len(part)
    return "".join(plain), tuple(spans)


def _same_cwd(cwd: str | None, wanted: str) -> int:
    return int(bool(cwd) and Path(str(cwd)).resolve() == Path(wanted).resolve())


def search_sessions(
    query: str,
    *,
    cwd: str | None = None,
    session_dir: str | Path | None = None,
    limit: int = 20,
    per_session: bool = False,
    include: Sequence[str | Path] = (),
    include_tool_output: bool | None = None,
) -> list[SearchHit]:
    """The best `limit` hits for `query`: in the sessions of `cwd` when given (its session dir, or `session_dir`),
    else in every session under the sessions root (or `session_dir`) and in the directories of `include` (a custom
    session dir, say). With `per_session`, the best hit of each session only. Raises SearchError for an empty query
    or when the index cannot be used.

    `include_tool_output` is the `sessionIndex.includeToolOutput` setting (default: read from the global settings
    file); when it changed since the index last saw it, the index is rebuilt first (`SessionIndex.follow_setting`)."""
    if limit < 1:
        raise SearchError("--limit must be at least 1")
    match = fts_query(query)
    if cwd is not None:
        directory = Path(session_dir) if session_dir is not None else default_session_dir(cwd)
        directories = [directory]
        cwd_filter = None if is_default_session_dir(directory, cwd) else cwd
    else:
        directories, cwd_filter = session_dirs(session_dir), None
        known = {dir_key(d) for d in directories}
        directories.extend(Path(d) for d in include if dir_key(d) not in known)
    try:
        index = SessionIndex.open()
    except IndexUnavailableError as exc:
        raise SearchError(f"Session search needs the session index, which cannot be used: {exc}") from None
    if include_tool_output is None:
        include_tool_output = tool_output_setting()
    try:
        if not index.follow_setting(include_tool_output, directories):
            index.refresh(directories)
        index.catch_up()
        return _query(index, match, directories, cwd_filter, limit, per_session)
    except sqlite3.Error as exc:
        raise SearchError(f"Session search failed: {exc}") from None
    finally:
        index.close()


def tool_output_setting(settings: SettingsManager | None = None) -> bool:
    """`sessionIndex.includeToolOutput` (a global-only setting) from `settings`, or from the global settings file."""
    if settings is None:
        from apex_coding_agent.core.settings import SettingsManager
        from apex_coding_agent.paths import get_agent_dir

        settings = SettingsManager(get_agent_dir() / "settings.json", None)
    return settings.get_bool("sessionIndex.includeToolOutput", False)


def _query(
    index: SessionIndex,
    match: str,
    directories: list[Path],
    cwd_filter: str | None,
    limit: int,
    per_session: bool,
) -> list[SearchHit]:
    paths = {dir_key(d): d for d in directories}
    marks = ",".join("?" * len(paths))
    params: list[object] = [_OPEN, _CLOSE, match, *paths]
    where = f"texts_fts MATCH ? AND f.dir IN ({marks}) AND f.state = 1"
    if cwd_filter is not None:
        index.create_function("same_cwd", 2, _same_cwd)
        where += " AND same_cwd(f.cwd, ?)"
        params.append(cwd_filter)
    # A session may match many times: fetch more rows than wanted when only each session's best one is kept.
    params.append(limit * 10 if per_session else limit)
    fields = ", ".join(f"f.{name.strip()}" for name in ROW_FIELDS.split(","))
    many = index.execute(
        "SELECT count(*) FROM (SELECT 1 FROM texts_fts WHERE texts_fts MATCH ? LIMIT ?)", (match, RANKED_MATCHES)
    ).fetchone()[0]
    order = "texts_fts.rowid DESC" if many >= RANKED_MATCHES else "rank"
    rows = index.execute(
        f"SELECT {fields}, t.entry_id, t.kind, snippet(texts_fts, 0, ?, ?, '…', {SNIPPET_TOKENS}) "
        "FROM texts_fts JOIN texts t ON t.id = texts_fts.rowid JOIN files f ON f.id = t.file "
        f"WHERE {where} ORDER BY {order} LIMIT ?",
        params,
    ).fetchall()
    hits: list[SearchHit] = []
    seen: set[int] = set()
    for *columns, entry_id, kind, marked in rows:
        row = IndexedFile.from_row(tuple(columns))
        if per_session:
            if row.id in seen:
                continue
            seen.add(row.id)
        info = session_info(paths[row.dir] / row.name, row.summary, row.mtime_ns, "")
        snippet, spans = _highlights(marked)
        hits.append(
            SearchHit(
                path=info.path,
                session_id=info.id,
                cwd=info.cwd,
                session_name=info.name,
                first_message=info.first_message,
                modified=info.modified,
                entry_id=entry_id,
                kind=kind,
                snippet=snippet,
                highlights=spans,
            )
        )
        if len(hits) >= limit:
            break
    return hits


__all__ = ["SearchError", "SearchHit", "fts_query", "search_sessions"]
