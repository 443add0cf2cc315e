"""The `/mcp` panel widget over plain server records: list, detail, keys, live replacement, hostile sizes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from urwid.testing import press, render_text

from apex_tui.keybindings import KeybindingManager
from apex_tui.widgets.pickers import McpPanel, McpServerRow, McpToolRow

from .conftest import Signals

SIZE = (100,)
TOOLS = (
    McpToolRow("echo", "Return the text, prefixed.", read_only=True),
    McpToolRow("add", "Add two integers.", allowed=False),
    McpToolRow("lines", "Return `count` numbered lines.\nThe second line of the description."),
)
DEMO = McpServerRow("demo", "stdio", "connected", source="/a/mcp.json", tools=TOOLS, log_file="/a/demo.log")
BROKEN = McpServerRow(
    "broken",
    "stdio",
    "failed",
    error="MCPError: Connection closed\nsecond line of the error",
    log_file="/a/broken.log",
    log_tail=("--- starting python", "bad token"),
)
OFF = McpServerRow("off", "http", "disabled")


def panel(keymap: KeybindingManager, *servers: McpServerRow) -> McpPanel:
    return McpPanel(keymap, servers, empty_help=("No MCP servers configured.",), reconnect_key="ctrl+r")


def styles_of(widget: McpPanel, text: str) -> set[str]:
    """The display styles of the run of cells that shows `text` (every row where it appears)."""
    found: set[str] = set()
    for row in widget.render(SIZE).content():
        for style, _charset, chunk in row:
            if text in chunk.decode():
                found.add(str(style))
    return found


def test_the_list_shows_each_server_with_status_tools_and_error(keymap: KeybindingManager) -> None:
    widget = panel(keymap, DEMO, BROKEN, OFF)
    rows = render_text(widget, SIZE, strip=True)
    assert rows[0].startswith("── MCP servers ──")
    assert rows[1].split() == ["›", "demo", "stdio", "●", "connected", "3", "tools", "(1", "denied)"]
    assert rows[2].split()[:4] == ["broken", "stdio", "✗", "failed"]
    assert rows[2].endswith("MCPError: Connection closed")  # the first line only
    assert rows[3].split() == ["off", "http", "○", "disabled"]
    assert rows[-2] == "  ↑↓ move · enter details · ctrl+r reconnect · esc close"
    assert styles_of(widget, "● connected") == {"success"}
    assert styles_of(widget, "✗ failed") == {"error"}
    assert styles_of(widget, "○ disabled") == {"dim"}


def test_detail_shows_tools_marks_the_whole_error_and_the_log(keymap: KeybindingManager) -> None:
    widget = panel(keymap, DEMO, BROKEN)
    signals = Signals(widget, "reconnect", "cancel")
    press(widget, SIZE, "enter")
    rows = render_text(widget, SIZE, strip=True)
    assert rows[0].startswith("── MCP server: demo ──")
    assert rows[1].split() == ["●", "connected", "stdio", "·", "/a/mcp.json"]
    assert rows[2] == "  log: /a/demo.log"
    assert rows[3:6] == ["› Reconnect", "  Back to the server list", "  Tools: 3 tools (1 denied)"]
    assert rows[6] == "  ✓ echo  [read-only]  Return the text, prefixed."
    assert rows[7] == "  ✗ add  [denied]  Add two integers."
    assert styles_of(widget, "[denied]") == {"warning"}
    # A description its row shows whole is not repeated; a longer one is shown whole under the list.
    press(widget, SIZE, "down", "down")
    assert sum("Return the text, prefixed." in row for row in render_text(widget, SIZE)) == 1
    press(widget, SIZE, "down", "down")
    rows = render_text(widget, SIZE, strip=True)
    assert rows[8] == "› ✓ lines  Return `count` numbered lines."
    assert rows[9:11] == ["    Return `count` numbered lines.", "    The second line of the description."]
    # The menu: Reconnect emits, Back returns to the list (as Esc does), the key works on both levels.
    press(widget, SIZE, "down", "enter", "ctrl r")  # down wraps to Reconnect
    assert signals.events == [("reconnect", "demo"), ("reconnect", "demo")]
    press(widget, SIZE, "down", "enter")
    assert render_text(widget, SIZE, strip=True)[0].startswith("── MCP servers ──")
    press(widget, SIZE, "down", "enter")
    rows = render_text(widget, SIZE, strip=True)
    assert rows[0].startswith("── MCP server: broken ──")
    assert rows[1].split() == ["✗", "failed", "stdio"]
    assert rows[2:6] == [
        "  log: /a/broken.log",
        "       --- starting python",
        "       bad token",
        "  error: MCPError: Connection closed",
    ]
    assert rows[6] == "         second line of the error"
    assert "  Tools: none listed" in rows
    press(widget, SIZE, "enter", "esc", "ctrl r", "esc")
    assert signals.names()[2:] == ["reconnect", "reconnect", "cancel"]
    assert signals.events[2:4] == [("reconnect", "broken")] * 2


def test_other_keys_are_taken_and_clear_the_message(keymap: KeybindingManager) -> None:
    widget = panel(keymap, DEMO)
    widget.say("Reconnecting demo…")
    assert render_text(widget, SIZE, strip=True)[-2] == "  Reconnecting demo…"  # where the hint was
    assert press(widget, SIZE, "x", "ctrl k", "tab") == []  # nothing leaks to the editor behind
    assert render_text(widget, SIZE, strip=True)[-2] == "  ↑↓ move · enter details · ctrl+r reconnect · esc close"
    unbound = McpPanel(keymap, [DEMO])  # `app.mcp.reconnect` bound to no key: the hint leaves it out
    assert render_text(unbound, SIZE, strip=True)[-2] == "  ↑↓ move · enter details · esc close"


def test_new_records_keep_the_highlight_and_the_open_detail(keymap: KeybindingManager) -> None:
    widget = panel(keymap, DEMO, BROKEN, OFF)
    press(widget, SIZE, "down")
    assert widget.set_servers([OFF, DEMO, BROKEN]) is True
    assert widget.highlighted() == BROKEN
    assert widget.set_servers([OFF, DEMO, BROKEN]) is False  # nothing changed: no redraw
    press(widget, SIZE, "enter")
    revived = McpServerRow("broken", "stdio", "connected", tools=TOOLS[:1])
    widget.set_servers([OFF, DEMO, revived])
    rows = render_text(widget, SIZE, strip=True)
    assert rows[0].startswith("── MCP server: broken ──") and rows[1].split()[:2] == ["●", "connected"]
    assert "  ✓ echo  [read-only]  Return the text, prefixed." in rows
    widget.set_servers([OFF])  # the shown server left the configuration: back to the list
    assert render_text(widget, SIZE, strip=True)[1].split() == ["›", "off", "http", "○", "disabled"]


def test_no_servers_says_how_to_add_one(keymap: KeybindingManager) -> None:
    widget = panel(keymap)
    signals = Signals(widget, "reconnect", "cancel")
    rows = render_text(widget, SIZE, strip=True)
    assert rows[1:] == ["  No MCP servers configured.", "  esc close", "─" * 100]
    press(widget, SIZE, "enter", "ctrl r", "down", "esc")
    assert signals.events == [("cancel", None)]


names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=60)
tool_rows = st.builds(McpToolRow, names, names, read_only=st.booleans(), allowed=st.booleans())
server_rows = st.builds(
    McpServerRow,
    names,
    st.sampled_from(["stdio", "http"]),
    st.sampled_from(["connected", "connecting", "restarting", "failed", "disabled", "closed", "odd"]),
    source=names,
    error=st.none() | st.text(max_size=500),
    tools=st.lists(tool_rows, max_size=30).map(tuple),
    log_file=st.none() | names,
    log_tail=st.lists(names, max_size=2).map(tuple),
    restarts=st.integers(0, 9),
)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    servers=st.lists(server_rows, max_size=14),
    width=st.integers(12, 160),
    keys=st.lists(st.sampled_from(["up", "down", "page down", "enter", "esc", "ctrl r"]), max_size=8),
)
def test_every_frame_fits_its_width_and_a_bounded_height(
    servers: list[McpServerRow], width: int, keys: list[str]
) -> None:
    widget = panel(KeybindingManager("linux"), *servers)
    for key in ["", *keys]:
        if key:
            press(widget, (width,), key)
        canvas = widget.render((width,))
        assert canvas.cols() == width
        assert canvas.rows() == widget.rows((width,))
        # The panel replaces the editor: it must leave room on an 80x24 terminal (the worst case is 21 rows).
        assert canvas.rows() <= 21


def test_many_tools_scroll_under_the_menu(keymap: KeybindingManager) -> None:
    tools = tuple(McpToolRow(f"tool{i}", f"Tool number {i}.") for i in range(20))
    widget = panel(keymap, McpServerRow("big", "http", "connected", tools=tools))
    press(widget, SIZE, "enter", *["down"] * 15)
    rows = render_text(widget, SIZE, strip=True)
    assert rows[1:5] == [
        "  ● connected  http",
        "  Reconnect",
        "  Back to the server list",
        "  Tools: 20 tools  (11-16 of 20)",
    ]
    assert rows[5:11] == [f"{'›' if i == 13 else ' '} ✓ tool{i}  Tool number {i}." for i in range(10, 16)]
    press(widget, SIZE, "page down", "page down")
    assert "› ✓ tool19  Tool number 19." in render_text(widget, SIZE, strip=True)


def test_the_tallest_detail_fits_a_small_terminal(keymap: KeybindingManager) -> None:
    tools = tuple(McpToolRow(f"tool{i}", "words " * 100, read_only=True) for i in range(40))
    worst = McpServerRow(
        "worst", "stdio", "restarting", "/a/mcp.json", "boom " * 200, tools, "/a/worst.log", ("a", "b"), restarts=3
    )
    widget = panel(keymap, *[worst] * 12)
    assert widget.rows((80,)) == 14  # 10 of 12 servers, their position, the hint, two rules
    press(widget, (80,), "enter", "down", "down", "down")
    widget.say("Reconnecting worst…")
    rows = render_text(widget, (80,), strip=True)
    assert len(rows) == 21
    assert rows[5:8] == [
        "  error: " + "boom " * 13 + "boom",
        "         " + "boom " * 13 + "boom",
        "         " + "boom " * 13 + "boom …",
    ]
    assert rows[-4:-2] == ["    " + "words " * 11 + "words", "    " + "words " * 11 + "words …"]
