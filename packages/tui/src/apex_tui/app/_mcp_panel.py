"""`/mcp`: the MCP servers of this run (status, last error, tools, prompts, log file); `/mcp reconnect NAME`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from apex_tui.editor import CommandInfo
from apex_tui.widgets import CustomMessageBlock

if TYPE_CHECKING:
    from apex_coding_agent import AgentSessionRuntime
    from apex_tui.app._app import InteractiveApp


def server_lines(servers: list[dict[str, Any]]) -> list[str]:  # Any: `McpHost.snapshot()` records
    """The panel's text: one block per server, as `/session` shows its facts."""
    if not servers:
        return ["No MCP servers configured. Add one with `apex-code mcp add NAME -- COMMAND` (see docs/mcp.md)."]
    lines: list[str] = []
    for server in servers:
        tools = server["tools"]
        lines.append(f"- {server['name']} ({server['transport']}, {server['scope']}): {server['status']}")
        if server["error"]:
            lines.append(f"  error: {server['error']}")
        if tools:
            lines.append(f"  tools ({len(tools)}): " + ", ".join(t.split("__", 2)[-1] for t in tools))
        if server["prompts"]:
            lines.append("  prompts: " + ", ".join(f"/mcp:{server['name']}:{p}" for p in server["prompts"]))
        if server["logFile"]:
            lines.append(f"  log: {server['logFile']}")
    lines.append("`/mcp reconnect NAME` starts a server again.")
    return lines


def mcp_prompt_infos(runtime: AgentSessionRuntime) -> list[CommandInfo]:
    """`/mcp:<server>:<prompt>` for `/` autocomplete: the prompts of the servers that are connected."""
    from apex_coding_agent import mcp_host_of

    host = mcp_host_of(runtime)
    if host is None:
        return []
    infos: list[CommandInfo] = []
    for name, connection in host.connections.items():
        if connection.status != "connected":
            continue
        for prompt in connection.prompts:
            hint = " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in prompt.arguments or [])
            infos.append(CommandInfo(f"mcp:{name}:{prompt.name}", prompt.description or "MCP prompt", hint))
    return infos


def mcp_command(app: InteractiveApp, arg: str) -> bool:
    from apex_coding_agent import mcp_host_of

    host = mcp_host_of(app.runtime)
    word, _, name = arg.partition(" ")
    if word == "reconnect":
        if host is None or not host.reconnect(name.strip()):
            app.notify(f"No running MCP server named {name.strip()!r}", "warning")
        else:
            app.notify(f"Reconnecting {name.strip()}", "status")
        return True
    servers = host.snapshot() if host is not None else []
    app.feed.add(CustomMessageBlock(app.ctx, "mcp", "\n".join(server_lines(servers))))
    app.redraw()
    return True


__all__ = ["mcp_command", "mcp_prompt_infos", "server_lines"]
