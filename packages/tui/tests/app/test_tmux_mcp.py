"""tmux end to end: the real `apex-code` with two MCP servers from `mcp.json` (the SDK-written demo server, and the
same server failing until a file exists). `/mcp` shows them and follows them live; the failed one shows its error
and log, comes back with the reconnect key; Esc leaves the screen as a full repaint draws it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp_panel_helpers import DEMO, gated_server
from tmux_helpers import TmuxApp, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer


def test_mcp_panel_in_the_real_app(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    agent_dir = tmp_path / "agent"
    flag = tmp_path / "licence"
    with ScriptedModelServer([{"text": "Fine.", "repeat": True}]) as server:
        write_models(agent_dir, server)
        servers = {"demo": {"command": sys.executable, "args": [DEMO], "deniedTools": ["add"]}}
        servers["gated"] = gated_server(flag)
        (agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
        app = TmuxApp(cwd, agent_dir)
        try:
            app.wait_for("fake-model")
            app.wait_for('MCP server "gated" failed', timeout=60)
            app.type("/mcp")
            app.wait_for("/mcp")
            app.keys("Enter")
            app.wait_until(lambda s: "demo   stdio  ● connected   8 tools (1 denied)" in s, "demo connected", 60)
            screen = app.assert_repaint_stable("the panel open")
            assert "gated  stdio  ✗ failed" in screen and "MCPError: Connection closed" in screen

            app.keys("Down", "Enter")
            screen = app.wait_for("MCP server: gated")
            assert f"no licence file at {flag}" in screen
            assert str(agent_dir / "mcp-logs" / "gated.log") in screen
            app.assert_repaint_stable("the failed server's detail")

            flag.write_text("ok")
            app.keys("C-r")
            app.wait_for("Reconnecting gated…")
            screen = app.wait_for("Tools: 8 tools", timeout=60)  # the panel follows the server while open
            assert "● connected" in screen and "✓ echo  [read-only]" in screen
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
