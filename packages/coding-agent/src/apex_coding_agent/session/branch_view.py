"""A lazy view of one branch: the entries root -> leaf, each parsed only when it is read.

`SessionManager.get_branch()` parses every entry of the branch, which after reopening a long session costs seconds.
A `BranchView` is a `Sequence[EntryBase]` over the indexed records of the same path: `view[i]` parses (once) and
returns entry `i`, while `type_at`, `id_at`, `index_of` and `record` answer from the index without parsing. Code that
only walks part of a branch (compaction reads from the previous compaction's kept range on) pays for that part only.

The view is a snapshot of the path when it was made; appends to the session afterwards do not change it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from apex_coding_agent.session.entries import EntryBase
from apex_coding_agent.session.records import Record, parse_records


class BranchView(Sequence[EntryBase]):
    """Entries of one branch, root first; index fields without parsing, entries on demand."""

    __slots__ = ("_records",)

    def __init__(self, records: Sequence[Record]) -> None:
        self._records: tuple[Record, ...] = tuple(records)

    def __len__(self) -> int:
        return len(self._records)

    @overload
    def __getitem__(self, index: int) -> EntryBase: ...

    @overload
    def __getitem__(self, index: slice) -> list[EntryBase]: ...

    def __getitem__(self, index: int | slice) -> EntryBase | list[EntryBase]:
        if isinstance(index, slice):
            records = self._records[index]
            parse_records(records)
            return [record.entry for record in records]
        return self._records[index].entry

    def __iter__(self) -> Iterator[EntryBase]:
        return (record.entry for record in self._records)

    def __reversed__(self) -> Iterator[EntryBase]:
        return (record.entry for record in reversed(self._records))

    @property
    def records(self) -> tuple[Record, ...]:
        """The indexed records of the path (type, id, parentId, timestamp readable without parsing)."""
        return self._records

    def record(self, index: int) -> Record:
        return self._records[index]

    def type_at(self, index: int) -> str:
        """The `type` of entry `index` as indexed (a line that later fails to validate keeps this type)."""
        return self._records[index].type

    def id_at(self, index: int) -> str:
        return self._records[index].id

    def index_of(self, entry_id: str | None, start: int = 0, stop: int | None = None) -> int | None:
        """Position of `entry_id` in `[start, stop)`, or None; reads ids only."""
        if entry_id is None:
            return None
        records = self._records
        for index in range(start, len(records) if stop is None else min(stop, len(records))):
            if records[index].id == entry_id:
                return index
        return None

    def parsed_count(self) -> int:
        """How many entries of the view have been parsed so far (by anyone holding the same records)."""
        return sum(1 for record in self._records if record.is_parsed)


__all__ = ["BranchView"]
