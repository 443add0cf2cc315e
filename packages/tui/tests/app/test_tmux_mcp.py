"""tmux end to end: the real `apex-code` with an MCP server from `mcp.json` (the SDK-written demo server behind a
gate that makes it fail until a file exists) and a disabled one. `/mcp` shows them; the failed one shows its error
and log, comes back with the reconnect key while the panel follows it; Esc leaves the screen as a full repaint
draws it."""

from __future__ import annotations

import json
from pathlib import Path

from mcp_panel_helpers import gated_server
from tmux_helpers import TmuxApp, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer


def test_mcp_panel_in_the_real_app(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    agent_dir = tmp_path / "agent"
    flag = tmp_path / "licence"
    with ScriptedModelServer([{"text": "Fine.", "repeat": True}]) as server:
        write_models(agent_dir, server)
        servers = {"gated": {**gated_server(flag), "deniedTools": ["add"]}, "off": {"command": "x", "enabled": False}}
        (agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
        app = TmuxApp(cwd, agent_dir)
        try:
            app.wait_for("fake-model")
            app.wait_for('MCP server "gated" failed', timeout=60)
            app.type("/mcp")
            app.wait_for("/mcp")
            app.keys("Enter")
            screen = app.wait_for("gated  stdio  ✗ failed")
            assert "MCPError: Connection closed" in screen and "off    stdio  ○ disabled" in screen
            app.assert_repaint_stable("the panel open")

            app.keys("Enter")
            screen = app.wait_for("MCP server: gated")
            assert f"no licence file at {flag}" in screen
            assert str(agent_dir / "mcp-logs" / "gated.log") in screen
            app.assert_repaint_stable("the failed server's detail")

            flag.write_text("ok")
            app.keys("C-r")
            app.wait_for("Reconnecting gated…")
            screen = app.wait_for("Tools: 8 tools", timeout=60)  # the panel follows the server while open
            assert "● connected" in screen and "✓ echo  [read-only]" in screen and "✗ add  [denied]" in screen
            app.assert_repaint_stable("the detail after the reconnect")

            app.keys("Escape")
            app.wait_for("── MCP servers ──")
            app.keys("Escape")
            screen = app.wait_until(lambda s: "MCP servers" not in s, "the panel closed")
            assert "stdio" not in screen
            screen = app.assert_repaint_stable("the panel closed")
            assert "fake-model" in screen
        finally:
            app.close()
