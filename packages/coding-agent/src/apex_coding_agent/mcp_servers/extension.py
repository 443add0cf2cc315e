"""The hidden built-in MCP extension: starts the host's servers at session start, stops them at quit.

It costs nothing when no server is configured: the config files are read at `session_start` (with the project's
trust known by then) and nothing of the `mcp` SDK is imported unless a server is enabled. Servers connect in the
background. Print and JSON runs wait for them before the first request (each bounded by its `startupTimeoutMs`),
while the app and RPC go on at once; late tools join at the next turn boundary. `/reload` reads the config files
again and starts, stops or restarts what changed. MCP prompts become `/mcp:<server>:<prompt>` commands once their
server is connected.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from apex_coding_agent.events import McpServerStatusEvent
from apex_coding_agent.extensions.api import ExtensionAPI
from apex_coding_agent.extensions.events import InputRejectedError
from apex_coding_agent.extensions.loader import InlineExtension
from apex_coding_agent.mcp_servers.errors import McpCallError
from apex_coding_agent.mcp_servers.host import McpHost
from apex_coding_agent.mcp_servers.prompts import McpInputError, expand_input

BUILTIN_NAME = "<builtin:mcp>"
HEADLESS_WAIT_MODES = ("print", "json")


class _McpExtension:
    def __init__(self, host: McpHost) -> None:
        self.host = host

    async def __call__(self, pi: ExtensionAPI) -> None:
        host = self.host
        waited = False

        async def on_session_start(event: Any, ctx: Any) -> None:  # Any: SessionStartEvent, ExtensionContext
            if host.started:
                if event.reason == "reload":  # `/reload`: the config files are read again
                    await host.reload(ctx.cwd, project_trusted=ctx.is_project_trusted())
                    _report(host, ctx)
                return
            host.configure(ctx.cwd, project_trusted=ctx.is_project_trusted())
            host.subscribe(lambda status: _report_failure(status, ctx))
            host.start(pi)
            _report(host, ctx)

        async def wait_once(ctx: Any) -> None:  # Any: ExtensionContext
            nonlocal waited
            if not waited and ctx.mode in HEADLESS_WAIT_MODES and host.connections:
                waited = True
                await host.wait_ready()
                _report(host, ctx)

        async def on_before_agent_start(event: Any, ctx: Any) -> None:  # Any: BeforeAgentStartEvent, context
            await wait_once(ctx)

        async def on_session_shutdown(event: Any, ctx: Any) -> None:  # Any: SessionShutdownEvent, context
            if getattr(event, "reason", "quit") == "quit":
                await host.close()

        async def on_input(event: Any, ctx: Any) -> dict[str, Any] | None:  # Any: InputEvent, context, JSON
            if not host.entries or not ("/mcp:" in event.text or "@" in event.text):
                return None  # no server configured, or nothing that could name one
            await wait_once(ctx)  # `-p "/mcp:server:prompt"` needs the server it names
            try:
                text = await expand_input(host, event.text)
            except (McpInputError, McpCallError) as exc:
                # Nothing is sent; the prompt fails with this line (`-p` exits 1, RPC answers an error).
                raise InputRejectedError(str(exc)) from exc
            return None if text is None else {"action": "transform", "text": text}

        pi.on("session_start", on_session_start)
        pi.on("input", on_input)
        pi.on("before_agent_start", on_before_agent_start)
        pi.on("session_shutdown", on_session_shutdown)


def _report(host: McpHost, ctx: Any) -> None:  # Any: ExtensionContext
    """Config errors and a missing SDK: one line each, in the app as notices, headless on stderr."""
    lines, host.warnings = host.warnings, []
    for line in lines:
        _say(ctx, line, "warning")


def _report_failure(status: McpServerStatusEvent, ctx: Any) -> None:  # Any: ExtensionContext
    if status.status == "failed" and status.error:
        _say(ctx, f'MCP server "{status.server}" failed: {status.error}', "warning")


def _say(ctx: Any, line: str, kind: str) -> None:  # Any: ExtensionContext
    if ctx.mode == "tui":
        ctx.ui.notify(line, kind)  # the app's notice marks a warning as one itself
    elif sys.stderr is not None:
        sys.stderr.write(("Warning: " if kind == "warning" else "") + line + "\n")
        sys.stderr.flush()


def create_mcp_extension(host: McpHost | None = None, *, agent_dir: str | Path | None = None) -> InlineExtension:
    """The built-in extension over `host` (one reading the config files of `agent_dir` when not given)."""
    if host is None:
        from apex_coding_agent.paths import get_agent_dir

        host = McpHost(agent_dir if agent_dir is not None else get_agent_dir())
    extension = InlineExtension(_McpExtension(host), BUILTIN_NAME, hidden=True)
    return extension


__all__ = ["BUILTIN_NAME", "create_mcp_extension"]
