"""`/mcp` in the app: every configured server with its status, last error and tools; `/mcp reconnect NAME`."""

from __future__ import annotations

from pathlib import Path

from app_helpers import AppHarness

from apex_coding_agent.mcp_servers import McpHost, bind_runtime, create_mcp_extension
from apex_tui.app._mcp_panel import server_lines


async def test_mcp_panel_shows_status_and_errors(tmp_path: Path) -> None:
    # Neither server starts a process (the app's own tests run without the mcp SDK installed).
    harness = AppHarness(tmp_path)
    host = McpHost(
        harness.agent_dir,
        servers={"off": {"command": "x", "enabled": False}, "bad": {"command": "${APEX_TEST_UNSET_VARIABLE}"}},
        read_config=False,
    )
    app = await harness.start(extensions=[create_mcp_extension(host)])
    bind_runtime(host, app.runtime)
    await app.runtime.start_extensions()
    harness.type("/mcp")
    harness.press("enter")
    text = harness.text()
    assert "off (stdio, sdk): disabled" in text
    assert "bad (stdio, sdk): failed" in text and "command uses $APEX_TEST_UNSET_VARIABLE, which is not set" in text
    harness.type("/mcp reconnect bad")
    harness.press("enter")
    assert "No running MCP server named 'bad'" in harness.text()
    await app.runtime.shutdown_extensions()


def test_panel_text_lists_tools_prompts_and_the_log() -> None:
    lines = server_lines(
        [
            {
                "name": "gh",
                "transport": "stdio",
                "scope": "user",
                "status": "connected",
                "error": None,
                "tools": ["mcp__gh__create_issue", "mcp__gh__list_issues"],
                "prompts": ["triage"],
                "logFile": "/a/gh.log",
            }
        ]
    )
    assert lines[:4] == [
        "- gh (stdio, user): connected",
        "  tools (2): create_issue, list_issues",
        "  prompts: /mcp:gh:triage",
        "  log: /a/gh.log",
    ]
    assert "No MCP servers configured" in server_lines([])[0]
