"""The resume picker (`/resume`, `-r`.4 R ids) over plain session records."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import ClassVar, Final, Literal

from apex_tui.widgets._canvas import Markup
from apex_tui.widgets.pickers._base import Frame, text_width
from apex_tui.widgets.pickers._fuzzy import fuzzy_score
from apex_tui.widgets.pickers._input import LineInput
from apex_tui.widgets.pickers._list import NO_MARK, SELECT_MARK, SelectItem, SelectList
from apex_tui.widgets.transcript import KeyMatcher

SortMode = Literal["threaded", "recent", "fuzzy"]
SORT_MODES: Final[tuple[SortMode, ...]] = ("threaded", "recent", "fuzzy")
SessionScope = Literal["current", "all"]
Mode = Literal["list", "rename", "confirm_delete"]
TITLES: Final[dict[SessionScope, str]] = {"current": "Resume Session (Current Folder)", "all": "Resume Session (All)"}
FULL_TEXT_TITLES: Final[dict[SessionScope, str]] = {
    "current": "Search Messages (Current Folder)",
    "all": "Search Messages (All)",
}
ACTIVE_REFUSAL: Final = "Cannot delete the active session"


@dataclass(frozen=True)
class SessionEntry:
    """What the picker needs of a session; `modified` should be timezone-aware."""

    path: str
    modified: datetime
    id: str = ""
    name: str | None = None
    first_message: str = ""
    message_count: int = 0
    cwd: str = ""
    parent_session_path: str | None = None
    all_messages_text: str = ""
    snippet: str = ""
    """A full-text hit: the matching text around the match, `highlights` its (start, end) spans."""
    highlights: tuple[tuple[int, int], ...] = ()
    entry_id: str | None = None
    """A full-text hit: the entry that matched (choosing the row opens the session there)."""

    def title(self) -> str:
        """The name, else the first message (one line)."""
        return " ".join((self.name or self.first_message or "(no messages)").split())

    def haystack(self) -> str:
        """Lower-cased text searched by the query: one line per field, so a regex `^` anchors at a field start."""
        fields = (self.name or "", self.first_message, self.all_messages_text, self.id)
        return "\n".join(f for f in fields if f).lower()


def format_age(modified: datetime, now: datetime) -> str:
    """`now`, `5m`, `3h`, `2d`, else the date."""
    seconds = (now - modified).total_seconds()
    if seconds < 60:
        return "now"
    if seconds < 3600:
        return f"{int(seconds // 60)}m"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h"
    if seconds < 30 * 86400:
        return f"{int(seconds // 86400)}d"
    return modified.strftime("%Y-%m-%d")


def query_matcher(query: str) -> Callable[[str], bool] | None:
    """A predicate over a lower-cased haystack: `re:<pattern>` is a regex, `"..."` an exact phrase, other words
    must all occur. None when the regex is invalid."""
    text = query.strip()
    if text.startswith("re:"):
        try:
            pattern = re.compile(text[3:], re.IGNORECASE | re.MULTILINE)
        except re.error:
            return None
        return lambda haystack: pattern.search(haystack) is not None
    needles = [m.group(1) or m.group(2) for m in re.finditer(r'"([^"]+)"|(\S+)', text.lower())]
    return lambda haystack: all(needle in haystack for needle in needles)


def threaded(entries: Sequence[SessionEntry]) -> list[tuple[SessionEntry, int]]:
    """Forks under the session they came from (by `parent_session_path`), newest first at each level; iterative."""
    by_path = {e.path: e for e in entries}
    children: dict[str, list[SessionEntry]] = {}
    roots: list[SessionEntry] = []
    for entry in entries:
        parent = entry.parent_session_path
        if parent and parent in by_path and parent != entry.path:
            children.setdefault(parent, []).append(entry)
        else:
            roots.append(entry)

    def newest_first(items: list[SessionEntry]) -> list[SessionEntry]:
        return sorted(items, key=lambda e: e.modified, reverse=True)

    result: list[tuple[SessionEntry, int]] = []
    seen: set[str] = set()
    stack = [(root, 0) for root in reversed(newest_first(roots))]
    while stack:
        entry, depth = stack.pop()
        if entry.path in seen:
            continue
        seen.add(entry.path)
        result.append((entry, depth))
        stack.extend((child, depth + 1) for child in reversed(newest_first(children.get(entry.path, []))))
    # Sessions caught in a parent cycle have no root; list them flat rather than drop them.
    result.extend((e, 0) for e in newest_first([e for e in entries if e.path not in seen]))
    return result


class SessionPicker(SelectList[SessionEntry]):
    """Sessions of the current folder or of all folders (`tui.input.tab`), searched and sorted.

    Keys (R context): `app.session.toggleSort` cycles Threaded → Recent → Fuzzy, `app.session.toggleNamedFilter`
    shows named sessions only, `app.session.togglePath` adds file paths, `app.session.rename` edits the name inline
    (confirm submits, cancel leaves), `app.session.delete` asks `Delete session?` (confirm/cancel);
    `app.session.deleteNoninvasive` does the same but only while the query is empty. The active session cannot be
    deleted (a status line says so).

    The typed query filters by name and first message. `app.session.toggleFullText` switches to searching every
    message: each query is sent out (`search`) and the app answers with `set_search_results`, rows whose
    `snippet` shows the match; choosing one selects that entry (its `entry_id`).

    Signals (callback `(widget, payload)`): `select` (SessionEntry), `cancel`, `scope` (`"all"`/`"current"` when
    that scope has no rows yet: the app loads them and calls `set_sessions`), `rename` (`(path, name)`),
    `delete` (path), `search` (`(query, scope)` in full-text mode). Renamed and deleted rows change here at once;
    the app calls `set_sessions` to undo a failure.
    """

    signals: ClassVar[list[str]] = ["select", "cancel", "highlight", "scope", "rename", "delete", "search"]

    def __init__(
        self,
        current: Sequence[SessionEntry],
        keymap: KeyMatcher,
        *,
        all_sessions: Sequence[SessionEntry] | None = None,
        active_path: str | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        max_visible: int = 10,
        hint: str = "",
    ) -> None:
        self.sessions: dict[SessionScope, list[SessionEntry] | None] = {
            "current": list(current),
            "all": None if all_sessions is None else list(all_sessions),
        }
        self.scope: SessionScope = "current"
        self.sort_mode: SortMode = "threaded"
        self.named_only = False
        self.show_paths = False
        self.active_path = active_path
        self.now = now
        self.mode: Mode = "list"
        self.rename_input = LineInput()
        self.status = ""
        self.full_text = False
        self._hits: tuple[str, SessionScope, list[SessionEntry]] | None = None  # (query, scope, rows) of a search
        self._asked: tuple[str, SessionScope] | None = None
        self._depth: dict[str, int] = {}
        super().__init__(self._rows(), keymap, title=TITLES["current"], max_visible=max_visible, hint=hint)

    # -- data -------------------------------------------------------------------------------------------------
    def _rows(self) -> list[SelectItem[SessionEntry]]:
        return [SelectItem(e, e.title()) for e in self.sessions[self.scope] or []]

    def set_sessions(self, scope: SessionScope, entries: Sequence[SessionEntry]) -> None:
        """Rows of `scope` (after loading, or to undo a failed rename/delete)."""
        self.sessions[scope] = list(entries)
        if scope == self.scope:
            self.set_items(self._rows())

    def set_search_results(self, query: str, scope: SessionScope, entries: Sequence[SessionEntry]) -> None:
        """The hits of a full-text `search` for `query` in `scope` (ignored once the query or scope moved on)."""
        self._hits = (query, scope, list(entries))
        if self.full_text and (query.strip(), scope) == (self.query.text.strip(), self.scope):
            self.refilter()

    def _full_text_items(self, query: str) -> list[SelectItem[SessionEntry]]:
        wanted = (query.strip(), self.scope)
        self._depth = {}
        if not wanted[0]:
            self.status = "Type words to search every message"
            return []
        if self._hits is not None and (self._hits[0].strip(), self._hits[1]) == wanted:
            self.status = "" if self._hits[2] else "No messages match"
            return [SelectItem(e, e.title()) for e in self._hits[2] if not self.named_only or e.name]
        if self._asked != wanted:
            self._asked = wanted
            self.emit("search", wanted)
        self.status = "Searching…"
        # The previous hits stay on screen until the new ones arrive.
        return [SelectItem(e, e.title()) for e in self._hits[2]] if self._hits is not None else []

    def filter_items(self, query: str, items: Sequence[SelectItem[SessionEntry]]) -> list[SelectItem[SessionEntry]]:
        """Named filter, then the query, then the sort mode (fuzzy ranks by match quality); in full-text mode, the
        hits of the query's search."""
        if self.status != ACTIVE_REFUSAL:
            self.status = ""
        if self.full_text:
            return self._full_text_items(query)
        pool = [item for item in items if not self.named_only or item.value.name]
        if self.sort_mode == "fuzzy" and query.strip() and not query.strip().startswith("re:"):
            scored = [(fuzzy_score(query, i.value.haystack()), n, i) for n, i in enumerate(pool)]
            ranked = sorted((s, n, i) for s, n, i in scored if s is not None)
            self._depth = {}
            return [item for _, _, item in ranked]
        matcher = query_matcher(query)
        if matcher is None:
            self.status = "Invalid regular expression"
            return []
        matched = {item.value.path: item for item in pool if matcher(item.value.haystack())}
        entries = [item.value for item in matched.values()]
        if self.sort_mode == "threaded":
            placed = threaded(entries)
        else:
            placed = [(e, 0) for e in sorted(entries, key=lambda e: e.modified, reverse=True)]
        self._depth = {e.path: depth for e, depth in placed}
        return [matched[e.path] for e, _ in placed]

    # -- keys -------------------------------------------------------------------------------------------------
    def handle_extra_key(self, key: str) -> bool:
        """Inline rename and delete confirmation take every key; otherwise the R-context ids."""
        if self.mode == "rename":
            self._rename_key(key)
            return True
        if self.mode == "confirm_delete":
            self._confirm_key(key)
            return True
        if self.status == ACTIVE_REFUSAL:
            self.status = ""
            self.changed()
        action = self.matches(
            key,
            "tui.input.tab",
            "app.session.toggleSort",
            "app.session.toggleNamedFilter",
            "app.session.togglePath",
            "app.session.rename",
            "app.session.delete",
            "app.session.deleteNoninvasive",
            "app.session.toggleFullText",
        )
        if action is None or (action == "app.session.deleteNoninvasive" and self.query.text):
            return False
        entry = self.highlighted_value()
        if action == "tui.input.tab":
            self.scope = "all" if self.scope == "current" else "current"
            self.title = (FULL_TEXT_TITLES if self.full_text else TITLES)[self.scope]
            if self.sessions[self.scope] is None and not self.full_text:
                self.emit("scope", self.scope)
            self.set_items(self._rows())
        elif action == "app.session.toggleFullText":
            self.full_text = not self.full_text
            self.title = (FULL_TEXT_TITLES if self.full_text else TITLES)[self.scope]
            if not self.full_text and self.sessions[self.scope] is None:
                self.emit("scope", self.scope)
            self.set_items(self._rows())
        elif action == "app.session.toggleSort":
            self.sort_mode = SORT_MODES[(SORT_MODES.index(self.sort_mode) + 1) % len(SORT_MODES)]
            self.refilter(keep=entry)
        elif action == "app.session.toggleNamedFilter":
            self.named_only = not self.named_only
            self.refilter(keep=entry)
        elif action == "app.session.togglePath":
            self.show_paths = not self.show_paths
            self.changed()
        elif entry is None:
            pass
        elif action == "app.session.rename":
            self.mode = "rename"
            self.rename_input.set_text(entry.name or "")
            self.changed()
        elif entry.path == self.active_path:
            self.status = ACTIVE_REFUSAL
            self.changed()
        else:
            self.mode = "confirm_delete"
            self.changed()
        return True

    def _rename_key(self, key: str) -> None:
        action = self.matches(key, "tui.select.confirm", "tui.select.cancel")
        entry = self.highlighted_value()
        if action == "tui.select.confirm" and entry is not None:
            name = " ".join(self.rename_input.text.split())
            self._replace(entry, replace(entry, name=name or None))
            self.emit("rename", (entry.path, name))
        elif action is None:
            self.rename_input.handle_key(self.keymap, key)
        if action is not None:
            self.mode = "list"
        self.changed()

    def _confirm_key(self, key: str) -> None:
        action = self.matches(key, "tui.select.confirm", "tui.select.cancel")
        entry = self.highlighted_value()
        if action is None:
            return
        self.mode = "list"
        if action == "tui.select.confirm" and entry is not None:
            self._replace(entry, None)
            self.emit("delete", entry.path)
        self.changed()

    def _replace(self, old: SessionEntry, new: SessionEntry | None) -> None:
        for scope, rows in self.sessions.items():
            if rows is not None:
                updated = [new if e.path == old.path else e for e in rows]
                self.sessions[scope] = [e for e in updated if e is not None]
        self.set_items(self._rows(), keep=new)

    # -- drawing ----------------------------------------------------------------------------------------------
    def build_header(self, frame: Frame, width: int) -> None:
        """Sort/filter state, then the status, rename or delete question."""
        state = f"  Sort: {self.sort_mode.title()}"
        if self.named_only:
            state += " · Named only"
        if self.full_text:
            state = "  Full-text search of every message (words must all be in one message)"
        frame.lines.append(("dim", state))
        if self.status:
            frame.lines.append(("warning", f"  {self.status}"))

    def build(self, width: int) -> Frame:
        """The list frame; the rename line (with the cursor) or the delete question replace the query line."""
        frame = super().build(width)
        if self.mode == "rename":
            label = "  Rename: "
            frame.lines[self._query_row()] = [("accent", label), self.rename_input.text]
            frame.cursor = (text_width(label) + self.rename_input.cursor_column(), self._query_row())
        elif self.mode == "confirm_delete":
            frame.lines[self._query_row()] = ("warning", "  Delete session? (confirm / cancel)")
            frame.cursor = None
        return frame

    def _query_row(self) -> int:
        # Title rule, sort line, optional status, then the query line.
        return 2 + (1 if self.status else 0)

    def row(self, item: SelectItem[SessionEntry], selected: bool, width: int) -> Markup:
        """Indent (threaded forks), title, then message count, age and optionally the path."""
        entry = item.value
        indent = "  " * self._depth.get(entry.path, 0)
        style = "accent" if selected else ("text" if entry.name else "muted")
        info = f"  {entry.message_count} msg · {format_age(entry.modified, self.now())}"
        if entry.path == self.active_path:
            info += " · current"
        if self.show_paths:
            info += f" · {entry.path}"
        if self.full_text and entry.snippet:
            return [("accent", SELECT_MARK) if selected else NO_MARK, (style, item.label), ("dim", info), "  ",
                    *snippet_markup(entry.snippet, entry.highlights)]  # fmt: skip
        return [("accent", SELECT_MARK) if selected else NO_MARK, indent, (style, item.label), ("dim", info)]


def snippet_markup(snippet: str, highlights: Sequence[tuple[int, int]]) -> list[Markup]:
    """The snippet on one line, its matches in the accent style."""
    flat = " ".join(snippet.split("\n"))
    parts: list[Markup] = []
    last = 0
    for start, end in highlights:
        if start > last:
            parts.append(("muted", flat[last:start]))
        parts.append(("accent", flat[start:end]))
        last = end
    if last < len(flat):
        parts.append(("muted", flat[last:]))
    return parts
