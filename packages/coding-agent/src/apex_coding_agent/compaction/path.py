"""Index lookups on a branch path that avoid parsing entries when the path is a lazy `BranchView`.

Compaction receives the branch as a `Sequence[EntryBase]`. Given `SessionManager.get_branch_view()`, finding the
latest compaction and its `firstKeptEntryId` reads the index (type and id of each line) instead of parsing the
whole branch; given a plain list of parsed entries the same functions read the entries' fields.
"""

from __future__ import annotations

from collections.abc import Sequence

from apex_coding_agent.session.branch_view import BranchView
from apex_coding_agent.session.entries import CompactionEntry, EntryBase


def index_of_id(path: Sequence[EntryBase], entry_id: str | None, stop: int) -> int | None:
    """Position of `entry_id` in `path[:stop]`, or None."""
    if isinstance(path, BranchView):
        return path.index_of(entry_id, 0, stop)
    return next((i for i in range(stop) if path[i].id == entry_id), None)


def latest_compaction_index(path: Sequence[EntryBase]) -> int:
    """Index of the last compaction entry on `path`, or -1. Only compaction lines are parsed (to confirm that a
    line indexed as `compaction` is a valid one)."""
    if isinstance(path, BranchView):
        for index in range(len(path) - 1, -1, -1):
            if path.type_at(index) == "compaction" and isinstance(path[index], CompactionEntry):
                return index
        return -1
    for index in range(len(path) - 1, -1, -1):
        if isinstance(path[index], CompactionEntry):
            return index
    return -1


__all__ = ["index_of_id", "latest_compaction_index"]
