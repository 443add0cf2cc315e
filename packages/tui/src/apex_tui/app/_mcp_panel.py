"""`/mcp`: the panel of this run's MCP servers (status, tools, last error, log file, reconnect);
`/mcp reconnect NAME` reconnects without it.

The panel reads the runtime's `McpHost` and stays live while open: what the host reports (`McpHost.subscribe`: a
status change, or a server's new tool list after `tools/list_changed`) redraws it at once. It stops listening once
it is closed.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from apex_tui.app._modal import show_modal
from apex_tui.editor import CommandInfo
from apex_tui.widgets.pickers import McpPanel, McpServerRow, McpToolRow

if TYPE_CHECKING:
    from apex_coding_agent import AgentSessionRuntime, McpHost
    from apex_tui.app._app import InteractiveApp

TAIL_BYTES = 4096
TAIL_LINES = 2
EMPTY_HELP = (
    "No MCP servers configured.",
    "",
    "Add one from a shell, then start apex-code again:",
    "  apex-code mcp add NAME -- COMMAND ARGS...        (a stdio server, in ~/.apex-code/agent/mcp.json)",
    "  apex-code mcp add NAME --url https://HOST/mcp    (a streamable HTTP server)",
    "  --scope project writes the project's .mcp.json instead. See docs/mcp.md.",
)


def log_tail(path: str | None) -> tuple[str, ...]:
    """The last `TAIL_LINES` non-empty lines of a server's log (its standard error): what a bare "Connection
    closed" does not say. Empty when there is no log or it cannot be read."""
    if not path:
        return ()
    try:
        with open(path, "rb") as log:
            start = max(0, log.seek(0, os.SEEK_END) - TAIL_BYTES)
            log.seek(start)
            lines = log.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ()
    if start:
        lines = lines[1:]  # cut in the middle
    return tuple(line.rstrip() for line in lines if line.strip())[-TAIL_LINES:]


def server_rows(host: McpHost | None) -> list[McpServerRow]:
    """What the panel shows of each configured server: the host's snapshot, plus each connected server's tools
    with their descriptions, read-only marks and whether its `allowedTools`/`deniedTools` let the model have them."""
    if host is None:
        return []
    rows: list[McpServerRow] = []
    for record in host.snapshot():
        name = record["name"]
        connection = host.connections.get(name)
        entry = host.entries.get(name)
        tools: list[McpToolRow] = []
        if connection is not None and connection.status in ("connected", "restarting"):
            for tool in connection.tools:
                annotations = tool.annotations
                tools.append(
                    McpToolRow(
                        tool.name,
                        (tool.description or "").strip(),
                        read_only=bool(annotations is not None and annotations.read_only_hint),
                        allowed=entry is None or entry.config.tool_enabled(tool.name),
                    )
                )
        rows.append(
            McpServerRow(
                name,
                record["transport"],
                record["status"],
                source=record["source"],
                error=record["error"],
                tools=tuple(tools),
                log_file=record["logFile"],
                log_tail=log_tail(record["logFile"]) if record["status"] in ("failed", "restarting") else (),
                restarts=connection.restarts if connection is not None else 0,
            )
        )
    return rows


def _notes(host: McpHost | None) -> list[str]:
    if host is None or not host.skipped_untrusted:
        return []
    files = ", ".join(host.skipped_untrusted)
    return [f"Not read (this project is not trusted, see /trust): {files}"]


class _Live:
    """Keeps an open panel up to date from the host's events; dropped once the panel is gone."""

    def __init__(self, app: InteractiveApp, host: McpHost | None, panel: McpPanel) -> None:
        self.app = app
        self.host = host
        self.panel = panel
        self.unsubscribe = host.subscribe(self.refresh) if host is not None and host.entries else None

    def refresh(self, _event: object = None) -> None:
        if self.panel not in self.app.open_widgets():  # closed, also by a session switch that drops every picker
            self.stop()
        elif self.panel.set_servers(server_rows(self.host)):
            self.app.redraw()

    def stop(self) -> None:
        if self.unsubscribe is not None:
            self.unsubscribe()
            self.unsubscribe = None


def open_mcp_panel(app: InteractiveApp) -> McpPanel:
    """Show the panel in the editor slot; returns it (tests drive it)."""
    from apex_coding_agent import mcp_host_of

    host = mcp_host_of(app.runtime)
    panel = McpPanel(
        app.keymap,
        server_rows(host),
        empty_help=EMPTY_HELP,
        notes=_notes(host),
        reconnect_key=app.keymap.display("app.mcp.reconnect"),
    )

    def reconnect(name: Any) -> None:  # Any: the signal's payload, a server name
        panel.say(reconnect_server(app, str(name))[0])
        live.refresh()

    show_modal(app, panel, {"reconnect": reconnect, "cancel": lambda _payload: live.stop()}, closing={"cancel"})
    live = _Live(app, host, panel)
    return panel


def reconnect_server(app: InteractiveApp, name: str) -> tuple[str, bool]:
    """Reconnect `name`; what happened, in one line, and whether it is under way."""
    from apex_coding_agent import mcp_host_of

    host = mcp_host_of(app.runtime)
    if host is None or name not in host.entries:
        return f"No MCP server named {name!r}", False
    if host.reconnect(name):
        return f"Reconnecting {name}…", True
    status, error = host.statuses.get(name, ("pending", None))
    if status == "disabled":
        return f"{name} is disabled in its configuration (enabled: false)", False
    why = f": {error}" if error else ""
    return f"{name} cannot be started ({status}{why}); fix its configuration first", False


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
    """`/mcp` opens the panel; `/mcp reconnect NAME` reconnects NAME."""
    word, _, name = arg.partition(" ")
    if word == "reconnect":
        text, started = reconnect_server(app, name.strip())
        app.notify(text, "status" if started else "warning")
        return True
    if word:
        app.notify(f"Unknown /mcp argument {word!r}: use /mcp or /mcp reconnect NAME", "warning")
        return True
    open_mcp_panel(app)
    return True


__all__ = ["mcp_command", "mcp_prompt_infos", "open_mcp_panel", "reconnect_server", "server_rows"]
