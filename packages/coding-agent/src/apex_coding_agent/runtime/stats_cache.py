"""Whole-session statistics kept up to date by appends instead of a walk over every entry per call.

`compute_session_stats` parses and walks all entries (0.6 s at 50k entries), and the app's footer asks after every
update. `SessionStatsCache` counts each record once: a call folds in only the records appended since the previous
call. A session manager only ever appends to its record list or replaces it whole (new session, fork, clone), so the
cache checks that the last record it counted is still at the same position; when it is not, it starts over. Its
figures equal `compute_session_stats` (tests compare the two after appends).
"""

from __future__ import annotations

from itertools import islice

from apex_coding_agent.session.records import Record
from apex_coding_agent.session.session_manager import SessionManager
from apex_coding_agent.session.stats import SessionStats, StatsTally


class SessionStatsCache:
    """Incremental `compute_session_stats` for one `SessionManager` (whichever session it currently holds)."""

    def __init__(self, manager: SessionManager) -> None:
        self._manager = manager
        self._tally = StatsTally()
        self._count = 0
        self._last: Record | None = None

    def _still_valid(self) -> bool:
        """True when the counted records are still the manager's first `_count` records."""
        if self._count == 0:
            return True
        # islice skips the counted records at C speed; only the last counted one is compared (by identity).
        at_last = next(islice(self._manager.iter_records(), self._count - 1, None), None)
        return at_last is self._last

    def _catch_up(self) -> None:
        if not self._still_valid():
            self._tally = StatsTally()
            self._count = 0
            self._last = None
        for record in islice(self._manager.iter_records(), self._count, None):
            self._tally.add(record.entry)
            self._count += 1
            self._last = record

    def stats(self) -> SessionStats:
        """A new `SessionStats` (without `context_usage`) equal to `compute_session_stats(manager)`."""
        self._catch_up()
        return self._tally.stats(self._manager)


__all__ = ["SessionStatsCache"]
