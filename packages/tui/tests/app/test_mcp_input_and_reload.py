"""MCP in the app beyond the `/mcp` panel: a `/mcp:<server>:<prompt>` that cannot be expanded is an error notice
(nothing is sent), and `/reload` reads the `mcp.json` files again. No server process starts here: the app's own tests
run without the mcp SDK (the coding agent's tests start real servers)."""

from __future__ import annotations

import json
from pathlib import Path

from app_helpers import AppHarness

from apex_ai.providers.faux import faux_assistant_message
from apex_coding_agent import McpHost, bind_mcp_runtime, create_mcp_extension


async def test_a_prompt_of_a_server_that_is_not_connected_is_an_error_notice(tmp_path: Path) -> None:
    # The server never starts (an unset variable), so no process and no mcp SDK is needed.
    harness = AppHarness(tmp_path)
    host = McpHost(harness.agent_dir, servers={"bad": {"command": "${APEX_TEST_UNSET_VARIABLE}"}}, read_config=False)
    harness.script(faux_assistant_message("never sent"))
    app = await harness.start(extensions=[create_mcp_extension(host)])
    bind_mcp_runtime(host, app.runtime)
    await app.runtime.start_extensions()
    harness.type("/mcp:bad:review a.py")
    harness.press("enter")
    await harness.until('/mcp:bad:review: the MCP server "bad" is not connected (failed)')
    assert "never sent" not in harness.text() and app.session.messages == []
    await app.runtime.shutdown_extensions()


async def test_reload_reads_the_mcp_config_again(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    config = harness.agent_dir / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"old": {"command": "x", "enabled": False}}}), encoding="utf-8")
    host = McpHost(harness.agent_dir)
    app = await harness.start(extensions=[create_mcp_extension(host)])
    bind_mcp_runtime(host, app.runtime)
    await app.runtime.start_extensions()
    assert [s["name"] for s in host.snapshot()] == ["old"]
    servers = {"new": {"command": "y", "enabled": False}, "bad": {"command": "${APEX_TEST_UNSET_VARIABLE}"}}
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    harness.type("/reload")
    harness.press("enter")
    await harness.until("Reloaded")
    assert {s["name"]: s["status"] for s in host.snapshot()} == {"new": "disabled", "bad": "failed"}
    assert 'MCP server "bad" failed: command uses $APEX_TEST_UNSET_VARIABLE' in harness.text()
    assert "Warning: Warning" not in harness.text()  # the notice marks itself; the line does not say it again
    await app.runtime.shutdown_extensions()
