"""`/mcp` in the app against real MCP servers (the coding agent's demo server, written with the SDK): the panel
lists every configured server, follows status changes while open, shows a server's tools and its error, reconnects
a failed server, and leaves the screen as a full repaint would draw it in both layouts; `/mcp reconnect NAME`."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import urwid
from app_helpers import SIZE, AppHarness
from mcp_panel_helpers import DEMO, gated_server

from apex_coding_agent import McpHost, bind_mcp_runtime, create_mcp_extension
from apex_tui.app import InteractiveApp
from apex_tui.app._mcp_panel import log_tail, mcp_prompt_infos
from apex_tui.widgets.pickers import McpPanel


class ScreenHarness(AppHarness):
    """Keeps the last frame drawn, as a terminal screen does. urwid's canvas cache holds its entries weakly: with
    every frame thrown away each render would start from scratch, and a widget that changed without telling urwid
    would go unnoticed here while a real screen kept showing its old rows."""

    held: urwid.Canvas | None = None

    def screen(self) -> list[str]:
        self.held = self.running.root.render(SIZE, focus=True)
        return [row.decode("utf-8") for row in self.held.text]


def assert_repaint_stable(harness: ScreenHarness, what: str) -> list[str]:
    """In both layouts, the frame the app draws with urwid's canvas cache equals the one drawn from scratch: no
    widget changed without telling urwid (a stale row would stay on a real screen until a full repaint). Returns
    the screen of the layout the app was in."""
    app = harness.running
    started = app.root.fullscreen
    screens: dict[bool, list[str]] = {}
    for fullscreen in (started, not started):
        app.set_layout(fullscreen)
        harness.screen()  # what a redraw after the layout switch puts on the terminal
        cached = app.root.render(SIZE, focus=True)
        drawn = (list(cached.content()), cached.cursor)
        urwid.CanvasCache.clear()
        fresh = app.root.render(SIZE, focus=True)
        layout = "fullscreen" if fullscreen else "inline"
        assert (list(fresh.content()), fresh.cursor) == drawn, f"{what} ({layout}): differs from a full repaint"
        screens[fullscreen] = [row.rstrip() for row in harness.screen()]
    app.set_layout(started)
    harness.screen()
    return screens[started]


@pytest.fixture
async def servers(tmp_path: Path) -> AsyncIterator[tuple[ScreenHarness, McpHost, Path]]:
    """`demo` (with `add` denied), `gated` (failing until its flag exists) and `off` (disabled)."""
    harness = ScreenHarness(tmp_path)
    flag = tmp_path / "licence"
    host = McpHost(
        harness.agent_dir,
        servers={
            "demo": {"command": sys.executable, "args": [DEMO], "deniedTools": ["add"]},
            "gated": gated_server(flag),
            "off": {"command": "never-run", "enabled": False},
        },
        read_config=False,
    )
    yield harness, host, flag
    if harness.app is not None:
        await harness.app.runtime.shutdown_extensions()


async def start(harness: ScreenHarness, host: McpHost, *, fullscreen: bool = False) -> InteractiveApp:
    app = await harness.start(extensions=[create_mcp_extension(host)], fullscreen=fullscreen)
    bind_mcp_runtime(host, app.runtime)
    await app.runtime.start_extensions()
    return app


async def until(check: Callable[[], bool], what: str, timeout: float = 60) -> None:
    """Let the loop run until `check()` holds: real servers start in a second or several on a loaded machine."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def statuses(host: McpHost) -> dict[str, str]:
    return {record["name"]: record["status"] for record in host.snapshot()}


async def test_panel_follows_servers_reconnects_and_closes_cleanly(
    servers: tuple[ScreenHarness, McpHost, Path],
) -> None:
    harness, host, flag = servers
    app = await start(harness, host)
    await until(lambda: statuses(host) == {"demo": "connected", "gated": "failed", "off": "disabled"}, "the servers")
    harness.type("/mcp")
    harness.press("enter")
    panel = app.slot.original_widget
    assert isinstance(panel, McpPanel)
    screen = assert_repaint_stable(harness, "the panel open")
    rows = [row.strip() for row in screen]
    assert "› demo   stdio  ● connected   8 tools (1 denied)" in rows
    assert "gated  stdio  ✗ failed                          MCPError: Connection closed" in rows
    assert "off    stdio  ○ disabled" in rows
    # A new tool list (no status change) reaches the open panel through the host's event.
    await host.connections["demo"].call_tool("grow", {})
    await until(lambda: "9 tools (1 denied)" in harness.text(), "the grown tool list in the panel", 15)
    assert_repaint_stable(harness, "the panel after the tool list changed")

    # The failed server's detail: the whole error and what its log says.
    harness.press("down", "enter")
    screen = assert_repaint_stable(harness, "the failed server's detail")
    text = "\n".join(screen)
    assert "MCP server: gated" in text and "error: MCPError: Connection closed" in text
    # The last rows of its log (its standard error), wrapped: the temp path is longer than a row.
    assert f"no licence file at {flag}".replace(" ", "") in "".join(row.strip().replace(" ", "") for row in screen)

    # Reconnect from the menu once the cause is fixed: the panel follows the server back up while it stays open.
    flag.write_text("ok")
    harness.press("enter")  # the highlighted menu row: Reconnect
    assert "Reconnecting gated…" in harness.text()
    await until(lambda: "Tools: 8 tools" in harness.text(), "the reconnected server in the panel")
    assert "● connected  stdio" in harness.text()
    screen = assert_repaint_stable(harness, "the detail after the live update")
    assert "  ✓ echo  [read-only]  Return the text, prefixed." in screen
    assert "no licence file" not in "\n".join(screen)

    # The list again: every server's row; the demo server's denied tool in its detail.
    harness.press("esc", "up", "enter")
    screen = assert_repaint_stable(harness, "the connected server's detail")
    assert "  ✗ add  [denied]  Add two integers." in screen
    log_rows = "".join(row.strip() for row in screen[next(i for i, r in enumerate(screen) if "  log: " in r) :][:2])
    assert "mcp-logs/demo.log" in log_rows  # the whole path, wrapped when longer than a row

    # Esc twice closes the panel: the editor is back and nothing of the panel is left.
    harness.press("esc", "esc")
    assert app.slot.original_widget is app.editor
    screen = assert_repaint_stable(harness, "the panel closed")
    assert not any("── MCP server" in row or "stdio" in row or "esc close" in row for row in screen)

    # `/mcp reconnect NAME` without the panel; the closed panel has stopped listening and hears nothing of it.
    seen = panel.servers
    for command in ("/mcp reconnect nope", "/mcp reconnect off", "/mcp status", "/mcp reconnect demo"):
        harness.type(command)
        harness.press("enter")
    text = harness.text()
    assert "No MCP server named 'nope'" in text
    assert "off is disabled in its configuration (enabled: false)" in text
    assert "Unknown /mcp argument 'status': use /mcp or /mcp reconnect NAME" in text
    assert "Reconnecting demo…" in text
    # The restart is under way once counted; the status events it sent would have reached a listening panel.
    await until(lambda: host.connections["demo"].restarts > 0, "demo restarting")
    assert panel.servers == seen


async def test_a_server_whose_config_cannot_start_says_why(tmp_path: Path) -> None:
    harness = ScreenHarness(tmp_path)
    host = McpHost(harness.agent_dir, servers={"bad": {"command": "${APEX_TEST_UNSET_VARIABLE}"}}, read_config=False)
    await start(harness, host)
    harness.type("/mcp")
    harness.press("enter", "ctrl r")
    text = harness.text()
    assert "bad  stdio  ✗ failed" in text and "command uses $APEX_TEST_UNSET_VARIABLE, which is not set" in text
    assert "bad cannot be started (failed: command uses $APEX_TEST_UNSET_VARIABLE" in text
    await harness.running.runtime.shutdown_extensions()


@pytest.mark.parametrize("layout", ["inline", "fullscreen"])
async def test_no_servers_says_how_to_add_one(tmp_path: Path, layout: str) -> None:
    harness = ScreenHarness(tmp_path)
    app = await harness.start(fullscreen=layout == "fullscreen")  # no host bound: what an SDK-made runtime has
    harness.type("/mcp")
    harness.press("enter")
    text = "\n".join(assert_repaint_stable(harness, "the empty panel"))
    assert "No MCP servers configured." in text and "apex-code mcp add NAME -- COMMAND" in text
    assert "docs/mcp.md" in text
    harness.press("x", "esc")
    assert app.slot.original_widget is app.editor and app.editor.text == ""
    assert "No MCP servers configured." not in "\n".join(assert_repaint_stable(harness, "the empty panel closed"))


def test_log_tail_reads_the_end_of_a_long_log(tmp_path: Path) -> None:
    log = tmp_path / "s.log"
    assert log_tail(str(log)) == () and log_tail(None) == ()
    log.write_text("".join(f"line {i}\n" for i in range(5000)) + "\n\n   \n")
    assert log_tail(str(log)) == ("line 4998", "line 4999")
    log.write_bytes(b"only \xff line")
    assert log_tail(str(log)) == ("only \ufffd line",)


def test_connected_servers_prompts_join_slash_autocomplete(tmp_path: Path) -> None:
    # Stand-ins for a live connection's listing (the coding agent's tests list prompts of real servers).
    from dataclasses import dataclass

    @dataclass
    class Argument:
        name: str
        required: bool

    @dataclass
    class Prompt:
        name: str
        description: str | None
        arguments: list[Argument]

    @dataclass
    class Listing:
        status: str
        prompts: list[Prompt]

    from apex_coding_agent import AgentSessionRuntime

    host = McpHost(tmp_path, read_config=False)
    review = Prompt("review", "Review a file", [Argument("path", True), Argument("focus", False)])
    host.connections = {"up": Listing("connected", [review]), "down": Listing("restarting", [review])}  # type: ignore[dict-item]
    runtime = object.__new__(AgentSessionRuntime)
    bind_mcp_runtime(host, runtime)
    (info,) = mcp_prompt_infos(runtime)
    assert (info.name, info.description, info.argument_hint) == ("mcp:up:review", "Review a file", "<path> [focus]")
