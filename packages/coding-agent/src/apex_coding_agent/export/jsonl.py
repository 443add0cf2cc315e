"""Session JSONL export (`/export file.jsonl`) and import (`/import`, runtime `import_from_jsonl`).

Export writes a new session file: a fresh header (new session id, `parentSession` = the source file when there is
one, same cwd) followed by the exported entries copied byte for byte, so ids, parent links and timestamps survive.
Import checks a JSONL file line by line and copies it, unchanged, into a session directory; switching to it is
the runtime's job. Neither ever modifies the source file.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from apex_coding_agent.export._load import ExportError, resolve_session
from apex_coding_agent.session.entries import (
    CURRENT_SESSION_VERSION,
    SessionHeader,
    dump_line,
    iso_now,
    parse_entry,
    parse_header,
)
from apex_coding_agent.session.records import SessionIssue
from apex_coding_agent.session.session_manager import SessionManager, uuid7


def _short(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


def _write_atomic(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def export_session_jsonl(
    session: str | Path | SessionManager,
    output_path: str | Path,
    whole_file: bool = False,
    cwd: str | Path | None = None,
) -> Path:
    """Write the active branch (root -> leaf) of `session`, or with `whole_file` every entry of it, as a new
    session JSONL file; returns its path. A relative `output_path` is taken relative to `cwd` (default: the
    process cwd). Works for in-memory and not-yet-written sessions too. Raises ExportError for a missing or
    non-session source file.
    """
    manager, session_file = resolve_session(session)
    base = Path(cwd) if cwd is not None else Path(os.getcwd())
    target = base / Path(output_path).expanduser()
    source = manager.get_header()
    header = SessionHeader(
        version=CURRENT_SESSION_VERSION,
        id=uuid7(),
        timestamp=iso_now(),
        cwd=source.cwd,
        parent_session=str(session_file) if session_file is not None else None,
        delegation_depth=source.delegation_depth,
    )
    records = list(manager.iter_records())
    if not whole_file:
        wanted = {entry.id for entry in manager.get_branch()}
        records = [record for record in records if record.id in wanted]
    data = dump_line(header) + b"".join(record.raw + b"\n" for record in records)
    _write_atomic(target, data)
    return target


@dataclass(frozen=True, slots=True)
class SessionCheck:
    """What `check_session_jsonl` found: the header, how many entries are usable and the bad lines."""

    path: Path
    header: SessionHeader
    entry_count: int
    issues: list[SessionIssue] = field(default_factory=list)


def _check_entry(data: Any, version: int) -> tuple[str | None, str | None, str | None]:
    """(problem, id, parentId) of one parsed entry line; `data` is a raw JSON value, hence Any."""
    if not isinstance(data, dict):
        return "not a JSON object", None, None
    if version < 2:
        # v1 entries have no ids yet (they get them on open); only the type can be checked.
        return (None if isinstance(data.get("type"), str) else "entry has no type"), None, None
    try:
        entry = parse_entry(data)
    except ValidationError as exc:
        return f"not a session entry: {_short(exc)}", None, None
    return None, entry.id, entry.parent_id


def check_session_jsonl(path: str | Path) -> SessionCheck:
    """Check a session JSONL file line by line without changing it.

    Reported as `file:line: reason` issues: lines that are not JSON, not objects or not valid entries, duplicate
    entry ids and parent ids that point nowhere (such entries load as extra roots). Blank lines are fine. Raises
    ExportError when the file is missing or its first record is not a session header.
    """
    file = Path(path).expanduser().absolute()
    if not file.is_file():
        raise ExportError(f"File not found: {file}")
    issues: list[SessionIssue] = []
    header: SessionHeader | None = None
    seen: set[str] = set()
    links: list[tuple[int, str]] = []
    count = 0
    for line_no, raw in enumerate(file.read_bytes().split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except ValueError as exc:
            issues.append(SessionIssue(str(file), line_no, f"not valid JSON: {_short(exc)}"))
            continue
        if header is None:
            header = parse_header(data)
            if header is None:
                raise ExportError(f"Not a session file (line {line_no} is not a session header): {file}")
            continue
        problem, entry_id, parent_id = _check_entry(data, header.version or 1)
        if problem is not None:
            issues.append(SessionIssue(str(file), line_no, problem))
            continue
        count += 1
        if entry_id is not None:
            if entry_id in seen:
                issues.append(SessionIssue(str(file), line_no, f"duplicate entry id {entry_id}"))
            seen.add(entry_id)
        if parent_id is not None:
            links.append((line_no, parent_id))
    if header is None:
        raise ExportError(f"Not a session file (no session header): {file}")
    for line_no, parent_id in links:
        if parent_id not in seen:
            issues.append(SessionIssue(str(file), line_no, f"parent entry {parent_id} not found"))
    issues.sort(key=lambda issue: issue.line_no)
    return SessionCheck(file, header, count, issues)


@dataclass(frozen=True, slots=True)
class ImportResult:
    """An imported session file: where it now lives, its id, usable entry count and the lines that were bad."""

    path: Path
    session_id: str
    entry_count: int
    issues: list[SessionIssue]


def import_session_jsonl(source: str | Path, session_dir: str | Path, strict: bool = False) -> ImportResult:
    """Check `source` and copy it unchanged into `session_dir` (same base name, `.jsonl` ensured).

    Bad lines are reported in `issues` and copied along (the loader skips them, and nothing is lost); with
    `strict` any issue raises ExportError listing them instead. Importing a file that already is in
    `session_dir` copies nothing. Raises ExportError for a missing or non-session source, and when a different
    file of that name already exists in `session_dir` (it is never overwritten). Open the result with
    `SessionManager.open(result.path, session_dir, cwd_override)`.
    """
    check = check_session_jsonl(source)
    if strict and check.issues:
        raise ExportError("Invalid session file:\n" + "\n".join(str(issue) for issue in check.issues))
    directory = Path(session_dir).expanduser().absolute()
    name = check.path.name if check.path.suffix == ".jsonl" else f"{check.path.stem}.jsonl"
    target = directory / name
    if target.exists() and target.resolve() == check.path.resolve():
        return ImportResult(target, check.header.id, check.entry_count, check.issues)
    directory.mkdir(parents=True, exist_ok=True)
    try:
        with target.open("xb") as handle:
            handle.write(check.path.read_bytes())
    except FileExistsError:
        raise ExportError(f"A session file named {name} already exists in {directory}") from None
    return ImportResult(target, check.header.id, check.entry_count, check.issues)


__all__ = [
    "ImportResult",
    "SessionCheck",
    "check_session_jsonl",
    "export_session_jsonl",
    "import_session_jsonl",
]
