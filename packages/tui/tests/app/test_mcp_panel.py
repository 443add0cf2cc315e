"""`/mcp` in the app: every configured server with its status, last error and tools; `/mcp reconnect NAME`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app_helpers import AppHarness

from apex_coding_agent import McpHost, bind_mcp_runtime, create_mcp_extension
from apex_tui.app._mcp_panel import mcp_prompt_infos, server_lines


async def test_mcp_panel_shows_status_and_errors(tmp_path: Path) -> None:
    # Neither server starts a process (the app's own tests run without the mcp SDK installed).
    harness = AppHarness(tmp_path)
    host = McpHost(
        harness.agent_dir,
        servers={"off": {"command": "x", "enabled": False}, "bad": {"command": "${APEX_TEST_UNSET_VARIABLE}"}},
        read_config=False,
    )
    app = await harness.start(extensions=[create_mcp_extension(host)])
    bind_mcp_runtime(host, app.runtime)
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


def test_connected_servers_prompts_join_slash_autocomplete(tmp_path: Path) -> None:
    # Stand-ins for a live connection's listing: the app's tests run without the mcp SDK (the coding agent's tests
    # list prompts of real servers).
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
