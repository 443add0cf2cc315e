"""The `/mcp` panel over plain server records: a list of servers, and one server's detail with its actions.

List: one row per server (name, transport, status in its colour, tool count, the last error cut to the row).
`tui.select.confirm` opens the highlighted server's detail, `app.mcp.reconnect` reconnects it, `tui.select.cancel`
closes the panel. Detail: where the server comes from, its status, the whole last error, the log file, then a menu
(Reconnect, Back) followed by its tools (allowed or denied, read-only marks, and the highlighted tool's whole
description when its row cuts it); `tui.select.cancel` goes back to the list. The owner replaces the records with `set_servers` whenever
they change; the highlight and the open detail stay on the same server.

Signals (callback arguments `(widget, payload)`): `reconnect` (the server name), `cancel` (None).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Final

from apex_tui.widgets._canvas import Markup, Size, plain_text
from apex_tui.widgets.pickers._base import Frame, PickerBase, rule, text_width
from apex_tui.widgets.pickers._list import NO_MARK, SELECT_IDS, SELECT_MARK, ListCursor
from apex_tui.widgets.transcript import KeyMatcher

STATUS_STYLES: Final[dict[str, str]] = {
    "connected": "success",
    "connecting": "warning",
    "pending": "warning",
    "restarting": "warning",
    "failed": "error",
    "disabled": "dim",
    "closed": "muted",
}
"""Theme style of each status (unknown statuses are drawn as `muted`)."""
STATUS_MARKS: Final[dict[str, str]] = {"connected": "●", "failed": "✗", "disabled": "○", "closed": "○"}
"""A mark before the status word, so it reads without colour too (`◌` for the states on their way)."""
NAME_COLUMNS = 24
ERROR_LINES = 3
"""Lines of a wrapped last error in the detail (the rest is in the log file)."""
DESCRIPTION_LINES = 2
LOG_ROWS = 2
"""Rows of the log's tail in the detail of a failed or restarting server."""
ACTIONS: Final = ("Reconnect", "Back to the server list")


@dataclass(frozen=True)
class McpToolRow:
    """One tool of a server as the panel shows it."""

    name: str
    description: str = ""
    read_only: bool = False
    allowed: bool = True
    """False when `allowedTools`/`deniedTools` keep the tool from the model."""


@dataclass(frozen=True)
class McpServerRow:
    """One configured server: what it is, where it is configured, how it is doing."""

    name: str
    transport: str
    status: str
    source: str = ""
    error: str | None = None
    tools: tuple[McpToolRow, ...] = ()
    log_file: str | None = None
    log_tail: tuple[str, ...] = ()
    """The last lines of the log, for a server that failed or is restarting."""
    restarts: int = 0

    def tool_count(self) -> str:
        """`3 tools`, `3 tools (1 denied)`, or empty when the server listed none."""
        if not self.tools:
            return ""
        denied = sum(not tool.allowed for tool in self.tools)
        text = f"{len(self.tools)} tool{'s' if len(self.tools) != 1 else ''}"
        return f"{text} ({denied} denied)" if denied else text


def status_markup(status: str) -> Markup:
    """The status word with its mark, in its colour."""
    return (STATUS_STYLES.get(status, "muted"), f"{STATUS_MARKS.get(status, '◌')} {status}")


def first_line(text: str) -> str:
    """The first non-empty line of `text`, whitespace collapsed."""
    for line in text.splitlines():
        if line.strip():
            return " ".join(line.split())
    return ""


def wrap_lines(text: str, width: int, limit: int) -> list[str]:
    """`text` wrapped to `width` columns, at most `limit` lines (the last one ends in `…` when text is left out)."""
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        lines.extend(textwrap.wrap(paragraph, max(10, width), break_long_words=True) or [""])
    if len(lines) > limit:
        lines = [*lines[: limit - 1], lines[limit - 1][: max(10, width) - 2] + " …"]
    return lines


class McpPanel(PickerBase):
    """See the module docstring. `empty_help` is shown when no server is configured, `notes` under the list
    (servers not started, say), `reconnect_key` in the hints (the key of `app.mcp.reconnect`)."""

    signals: ClassVar[list[str]] = ["reconnect", "cancel"]

    def __init__(
        self,
        keymap: KeyMatcher,
        servers: Sequence[McpServerRow],
        *,
        empty_help: Sequence[str] = (),
        notes: Sequence[str] = (),
        reconnect_key: str = "",
        max_visible: int = 10,
    ) -> None:
        super().__init__(keymap)
        self.servers: tuple[McpServerRow, ...] = tuple(servers)
        self.empty_help = tuple(empty_help)
        self.notes = tuple(notes)
        self.reconnect_key = reconnect_key
        self.cursor = ListCursor(max_visible)
        self.cursor.reset(len(self.servers))
        self.detail: str | None = None
        """The name of the server whose detail is open, None on the list."""
        self.detail_cursor = ListCursor(max(3, max_visible - 4))
        self.message = ""
        """One line under the list or detail (what a reconnect did); cleared by the next key."""

    # -- data -------------------------------------------------------------------------------------------------
    def set_servers(self, servers: Sequence[McpServerRow]) -> bool:
        """New records; True (and a redraw) only when they differ. The highlight and the detail follow their
        server's name."""
        fresh = tuple(servers)
        if fresh == self.servers:
            return False
        current = self.highlighted()
        self.servers = fresh
        names = [server.name for server in fresh]
        index = names.index(current.name) if current is not None and current.name in names else self.cursor.index
        self.cursor.reset(len(fresh), index)
        if self.detail is not None and self.detail not in names:
            self.detail = None
        shown = self.shown()
        if shown is not None:
            self.detail_cursor.reset(len(ACTIONS) + len(shown.tools), self.detail_cursor.index)
        self.changed()
        return True

    def highlighted(self) -> McpServerRow | None:
        """The server under the list's highlight."""
        return self.servers[self.cursor.index] if self.servers else None

    def shown(self) -> McpServerRow | None:
        """The server whose detail is open."""
        return next((server for server in self.servers if server.name == self.detail), None)

    def say(self, message: str) -> None:
        """Show `message` on the panel's last line until the next key."""
        self.message = message
        self.changed()

    # -- keys -------------------------------------------------------------------------------------------------
    def keypress(self, size: Size, key: str) -> str | None:
        """List or detail keys; every key is taken (nothing leaks to the editor behind the panel)."""
        if self.message:
            self.message = ""
            self.changed()
        shown = self.shown()
        action = self.matches(key, *SELECT_IDS, "app.mcp.reconnect")
        if action is None:
            return None
        cursor = self.cursor if shown is None else self.detail_cursor
        if action in ("tui.select.up", "tui.select.down"):
            cursor.move(-1 if action == "tui.select.up" else 1, wrap=True)
        elif action in ("tui.select.pageUp", "tui.select.pageDown"):
            cursor.page(-1 if action == "tui.select.pageUp" else 1)
        elif action == "app.mcp.reconnect":
            target = shown or self.highlighted()
            if target is not None:
                self.emit("reconnect", target.name)
        elif shown is None:
            self._list_key(action)
        else:
            self._detail_key(action, shown)
        self.changed()
        return None

    def _list_key(self, action: str) -> None:
        if action == "tui.select.cancel":
            self.emit("cancel")
            return
        server = self.highlighted()
        if server is not None:
            self.detail = server.name
            self.detail_cursor.reset(len(ACTIONS) + len(server.tools))

    def _detail_key(self, action: str, server: McpServerRow) -> None:
        if action == "tui.select.cancel" or (action == "tui.select.confirm" and self.detail_cursor.index == 1):
            self.detail = None
        elif action == "tui.select.confirm" and self.detail_cursor.index == 0:
            self.emit("reconnect", server.name)

    # -- drawing ----------------------------------------------------------------------------------------------
    def build(self, width: int) -> Frame:
        """The list or the open detail, framed by rules."""
        shown = self.shown()
        if shown is None:
            frame = Frame([rule(width, "MCP servers")])
            self._build_list(frame, width)
            parts = ["↑↓ move", "enter details", f"{self.reconnect_key} reconnect", "esc close"]
        else:
            frame = Frame([rule(width, f"MCP server: {shown.name}")])
            self._build_detail(frame, shown, width)
            parts = ["↑↓ move", "enter choose", f"{self.reconnect_key} reconnect", "esc back"]
        if not self.reconnect_key:
            del parts[2]
        hint = " · ".join(parts) if self.servers else "esc close"
        # What a reconnect did stands where the hint was until the next key (the panel stays as tall).
        frame.lines.append(("accent", f"  {self.message}") if self.message else ("dim", f"  {hint}"))
        frame.lines.append(rule(width, style="borderMuted"))
        return frame

    def _build_list(self, frame: Frame, width: int) -> None:
        if not self.servers:
            frame.lines.extend(("text", f"  {line}") if line else "" for line in self.empty_help)
        name_width = min(NAME_COLUMNS, max((text_width(s.name) for s in self.servers), default=0))
        tools_width = max((len(s.tool_count()) for s in self.servers), default=0)
        for position in self.cursor.window():
            server = self.servers[position]
            selected = position == self.cursor.index
            name = server.name if text_width(server.name) <= name_width else server.name[: name_width - 1] + "…"
            row: list[Markup] = [
                ("accent", SELECT_MARK) if selected else NO_MARK,
                ("accent" if selected else "text", name + " " * (name_width - text_width(name))),
                ("muted", f"  {server.transport:<5}  "),
                status_markup(server.status),
                " " * max(0, 12 - len(server.status)),
                ("muted", server.tool_count().ljust(tools_width)),
            ]
            if server.error:
                row.append(("error", f"  {first_line(server.error)}"))
            frame.lines.append(row)
        if self.cursor.count > self.cursor.visible:
            frame.lines.append(("dim", f"  {self.cursor.position_label()}"))
        frame.lines.extend(("muted", f"  {note}") for note in self.notes)

    def _build_detail(self, frame: Frame, server: McpServerRow, width: int) -> None:
        facts: list[Markup] = ["  ", status_markup(server.status), ("muted", f"  {server.transport}")]
        if server.source:
            facts.append(("muted", f" · {server.source}"))
        if server.restarts:
            facts.append(("muted", f" · restarted {server.restarts}×"))
        frame.lines.append(facts)
        if server.log_file:
            path = wrap_lines(server.log_file, width - 7, LOG_ROWS)
            frame.lines.append([("muted", "  log: "), ("text", path[0])])
            frame.lines.extend(("text", f"       {row}") for row in path[1:])
            # Wrapped, then its last rows: the end of a log says why the server stopped (a long path included).
            rows = [row for line in server.log_tail for row in wrap_lines(line, width - 7, LOG_ROWS)]
            frame.lines.extend(("muted", f"       {row}") for row in rows[-LOG_ROWS:])
        if server.error:
            lines = wrap_lines(server.error, width - 9, ERROR_LINES)
            frame.lines.append([("muted", "  error: "), ("error", lines[0])])
            frame.lines.extend(("error", f"         {line}") for line in lines[1:])
        for position, label in enumerate(ACTIONS):
            selected = position == self.detail_cursor.index
            mark: Markup = ("accent", SELECT_MARK) if selected else NO_MARK
            frame.lines.append([mark, ("accent" if selected else "text", label)])
        # The menu stays in view; the tools scroll under it around the highlighted one.
        tools = ListCursor(self.detail_cursor.visible)
        tools.reset(len(server.tools), self.detail_cursor.index - len(ACTIONS))
        shown = tools.window()
        where = f"  ({shown.start + 1}-{shown.stop} of {tools.count})" if tools.count > tools.visible else ""
        frame.lines.append(("muted", f"  Tools: {server.tool_count() or 'none listed'}{where}"))
        for position in shown:
            selected = position + len(ACTIONS) == self.detail_cursor.index
            mark = ("accent", SELECT_MARK) if selected else NO_MARK
            frame.lines.append([mark, *self._tool_row(server.tools[position], selected)])
        index = self.detail_cursor.index - len(ACTIONS)
        if 0 <= index < len(server.tools):
            tool = server.tools[index]
            row = plain_text([NO_MARK, *self._tool_row(tool, True)])
            if tool.description != first_line(tool.description) or text_width(row) > width:
                # Cut on its row: the whole description under the list.
                description = wrap_lines(tool.description, width - 4, DESCRIPTION_LINES)
                frame.lines.extend(("muted", f"    {line}") for line in description)

    def _tool_row(self, tool: McpToolRow, selected: bool) -> list[Markup]:
        row: list[Markup] = [
            ("success", "✓ ") if tool.allowed else ("error", "✗ "),
            ("accent" if selected else "text" if tool.allowed else "dim", tool.name),
        ]
        tags = [tag for tag, on in (("read-only", tool.read_only), ("denied", not tool.allowed)) if on]
        if tags:
            row.append(("warning" if not tool.allowed else "muted", f"  [{', '.join(tags)}]"))
        if tool.description:
            row.append(("muted", f"  {first_line(tool.description)}"))
        return row


__all__ = ["McpPanel", "McpServerRow", "McpToolRow", "STATUS_STYLES"]
