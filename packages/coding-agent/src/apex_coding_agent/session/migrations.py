"""Migrations of session files written by older versions to the current one, line bytes kept where unchanged."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from apex_coding_agent.session.entries import CURRENT_SESSION_VERSION, dump_dict_line, new_entry_id, parse_header


def _lines(buffer: bytes) -> Iterable[tuple[int, int, int, bool]]:
    """(line_no, start, end, has_newline) of each line, `\\r` before `\\n` excluded."""
    pos, size, line_no = 0, len(buffer), 0
    find = buffer.find
    while pos < size:
        newline = find(b"\n", pos)
        end = size if newline < 0 else newline
        line_no += 1
        stop = end - 1 if end > pos and buffer[end - 1] == 13 else end
        yield line_no, pos, stop, newline >= 0
        pos = end + 1


def migrate_bytes(buffer: bytes) -> bytes | None:
    """The file migrated to the current version, or None when it is already current or not a session.

    v1 -> v2: every entry gets a fresh id and `parentId` = the previous entry's id; a compaction's
    `firstKeptEntryIndex` (index among parsed records, header = 0) becomes `firstKeptEntryId`.
    v2 -> v3: message role `hookMessage` -> `custom`. Lines a step does not change keep their exact bytes;
    unparsable lines stay where they were.
    """
    lines: list[tuple[bytes, Any]] = []  # (raw, parsed dict or None); parsed JSON values are untyped here
    for _line_no, start, end, _nl in _lines(buffer):
        raw = buffer[start:end]
        if not raw.strip():
            continue
        try:
            data: Any = json.loads(raw)
        except (ValueError, RecursionError):
            data = None
        lines.append((raw, data if isinstance(data, dict) else None))
    parsed = [i for i, (_raw, data) in enumerate(lines) if data is not None]
    if not parsed:
        return None
    header = lines[parsed[0]][1]
    if parse_header(header) is None:
        return None
    version = header.get("version") or 1
    if version >= CURRENT_SESSION_VERSION:
        return None
    changed: set[int] = {parsed[0]}
    if version < 2:
        _migrate_v1(lines, parsed, changed)
    _migrate_v2(lines, parsed, changed)
    header["version"] = CURRENT_SESSION_VERSION
    out = bytearray()
    for i, (raw, data) in enumerate(lines):
        out += dump_dict_line(data) if i in changed else raw + b"\n"
    return bytes(out)


def _migrate_v1(lines: list[tuple[bytes, Any]], parsed: list[int], changed: set[int]) -> None:
    ids: set[str] = set()
    previous: str | None = None
    records = [lines[i][1] for i in parsed]  # index 0 is the header, as v1 indexes count it
    for position, i in enumerate(parsed[1:], start=1):
        old = lines[i][1]
        entry_id = new_entry_id(ids)
        ids.add(entry_id)
        rest = {k: v for k, v in old.items() if k not in ("type", "id", "parentId")}
        new = {"type": old.get("type"), "id": entry_id, "parentId": previous, **rest}
        lines[i] = (lines[i][0], new)
        records[position] = new
        changed.add(i)
        previous = entry_id
    for i in parsed[1:]:
        data = lines[i][1]
        if data.get("type") == "compaction" and isinstance(data.get("firstKeptEntryIndex"), int):
            index = data.pop("firstKeptEntryIndex")
            if 0 < index < len(records):
                data["firstKeptEntryId"] = records[index]["id"]


def _migrate_v2(lines: list[tuple[bytes, Any]], parsed: list[int], changed: set[int]) -> None:
    for i in parsed[1:]:
        data = lines[i][1]
        message = data.get("message")
        if data.get("type") == "message" and isinstance(message, dict) and message.get("role") == "hookMessage":
            message["role"] = "custom"
            changed.add(i)


__all__ = ["migrate_bytes"]
