"""`McpHost`: the MCP servers of one process, their connections, and the agent tools made from them.

The host never imports the `mcp` SDK itself: `start` does, through `connection.py`, and only when a server is
configured and enabled. Without the SDK installed a configured server gives one line saying what to install.
Tools are registered through the built-in extension's `ExtensionAPI`, so every session of the runtime (new,
resumed, forked) has them; a tool list that changes joins a running agent loop at its next turn boundary (the
session records it there as a system-message delta).
"""

from __future__ import annotations

import asyncio
import importlib.util
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from apex_coding_agent.core.permissions import RUNTIME_CONTRACTS, ToolContract
from apex_coding_agent.events import McpServerStatusEvent
from apex_coding_agent.mcp_servers.config import (
    McpConfigError,
    McpServerConfig,
    McpServerEntry,
    load_mcp_config,
    project_config_paths,
)
from apex_coding_agent.mcp_servers.tools import McpTool, tool_name

if TYPE_CHECKING:
    from apex_coding_agent.extensions.api import ExtensionAPI
    from apex_coding_agent.mcp_servers.connection import McpConnection
    from apex_coding_agent.runtime.session_runtime import AgentSessionRuntime

INSTALL_HINT = "pip install 'apex-coding-agent[mcp]'"
LOG_DIR = "mcp-logs"
StatusListener = Callable[[McpServerStatusEvent], None]


def sdk_installed() -> bool:
    return importlib.util.find_spec("mcp") is not None


def _contract(tool: McpTool) -> ToolContract:
    # Asked like any tool without a contract; in plan mode a tool its server marks read-only runs without asking.
    return ToolContract(frozenset({"mcp"}), "ask", plan_default="allow" if tool.read_only else None)


class McpHost:
    def __init__(
        self,
        agent_dir: str | Path,
        *,
        servers: Mapping[str, McpServerConfig | Mapping[str, Any]] | None = None,
        read_config: bool = True,
    ) -> None:
        """`servers` are added programmatically (SDK), over the config files' servers of the same name;
        `read_config=False` uses only them."""
        self.agent_dir = Path(agent_dir)
        self.read_config = read_config
        self._given = {
            name: McpServerEntry(
                name, c if isinstance(c, McpServerConfig) else McpServerConfig.model_validate(c), "sdk", "sdk"
            )
            for name, c in (servers or {}).items()
        }
        self.entries: dict[str, McpServerEntry] = {}
        self.connections: dict[str, McpConnection] = {}
        self.statuses: dict[str, tuple[str, str | None]] = {}
        self.warnings: list[str] = []
        self.skipped_untrusted: list[str] = []
        self._tools: dict[str, dict[str, McpTool]] = {}
        """The registered tools of each server."""
        self._made: dict[str, McpTool] = {}
        self._broken: tuple[set[str], set[str]] = (set(), set())
        """The files and server names the last read could not use (`McpConfigLoad.broken_files`, `broken_servers`)."""
        self._project_files: set[Path] | None = None
        """The project's config files when the servers were first configured (trust covered them)."""
        """Every tool made so far, by name (kept when its server goes: it is reused when the tool comes back)."""
        self._listeners: list[StatusListener] = []
        self._listed: dict[str, list[Any]] = {}  # Any: the SDK's Tool
        """Each server's tool list as last reported to the listeners."""
        self._pi: ExtensionAPI | None = None
        self.started = False

    # ----------------------------------------------------------------- setup

    def subscribe(self, listener: StatusListener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def configure(self, cwd: str, *, project_trusted: bool) -> None:
        """Read the config files (the project's only when trusted) and merge the given servers into `entries`."""
        if self.read_config:
            present = {path for path in project_config_paths(cwd) if path.is_file()}
            if self._project_files is None:
                self._project_files = present
            untrusted = self._unconfirmed(cwd, present - self._project_files) if project_trusted else []
            load = load_mcp_config(cwd, self.agent_dir, project_trusted=project_trusted, untrusted_files=untrusted)
            self.entries = dict(load.servers)
            self.warnings.extend(load.errors)
            self.skipped_untrusted = load.skipped_untrusted
            self._broken = (load.broken_files, load.broken_servers)
        self.entries.update(self._given)

    def _unconfirmed(self, cwd: str, new_files: set[Path]) -> list[Path]:
        """Project config files that appeared after the session started and the trust that covers them.

        The session's trust was decided at its start, possibly only because the project then held nothing that
        needs trust; a file that came later (a `git pull`, a file the agent wrote) is read only when trust in the
        project is saved (`trust.json`). Otherwise it waits for a restart, which asks."""
        if not new_files:
            return []
        from apex_coding_agent.core.trust import TrustFileError, TrustStore

        try:
            saved = TrustStore(self.agent_dir / "trust.json").lookup(cwd)
        except (TrustFileError, OSError):
            saved = None
        if saved is not None and saved[0]:
            return []
        unread = sorted(new_files)
        for path in unread:
            self.warnings.append(
                f"{path} was not read: it appeared after this session decided the project's trust "
                "(restart Apex Code to be asked about it)"
            )
        return unread

    def start(self, pi: ExtensionAPI | None) -> None:
        """Connect every enabled server in the background (returns at once)."""
        self._pi = pi
        self.started = True
        self._start_entries(self.entries)

    def _start_entries(self, entries: Mapping[str, McpServerEntry]) -> None:
        enabled = {name: e for name, e in entries.items() if e.config.enabled}
        for name in entries.keys() - enabled.keys():
            self._status(name, "disabled", None, 0)
        servers = {}
        for name, entry in enabled.items():
            try:
                servers[name] = entry.resolve()
            except McpConfigError as exc:
                self._status(name, "failed", str(exc), 0)
        if not servers:
            return
        if not sdk_installed():
            names = ", ".join(sorted(servers))
            self.warnings.append(f"MCP servers configured ({names}) but the mcp package is missing: {INSTALL_HINT}")
            for name in servers:
                self.statuses[name] = ("failed", f"the mcp package is not installed: {INSTALL_HINT}")
            return
        from apex_coding_agent.mcp_servers.connection import McpConnection

        for name, server in servers.items():
            connection = McpConnection(server, log_dir=self.agent_dir / LOG_DIR, on_change=self._on_change)
            self.connections[name] = connection
            connection.start()

    async def reload(self, cwd: str, *, project_trusted: bool) -> None:
        """Read the config files again (`/reload`): added servers start, removed ones stop, changed ones restart,
        unchanged ones stay as they are (connected or not). The trust rule is the same as at start."""
        before = self.entries
        self.configure(cwd, project_trusted=project_trusted)
        after = self.entries
        # A file or entry that cannot be used now (a typo while editing) loses nothing: its servers go on as they were.
        broken_files, broken_servers = self._broken
        for name, entry in before.items():
            if name not in after and (entry.source in broken_files or name in broken_servers):
                after[name] = entry
                self.warnings.append(f'MCP server "{name}" keeps running with its previous settings')
        gone = [name for name in before if name not in after]
        changed = [name for name in after if name in before and before[name].config != after[name].config]
        await asyncio.gather(*(self._stop(name) for name in [*gone, *changed]))
        for name in gone:
            self.statuses.pop(name, None)
            self._tools.pop(name, None)
        self._start_entries({name: after[name] for name in after if name not in before or name in changed})

    async def _stop(self, name: str) -> None:
        """Close the server's connection (its tools leave with it)."""
        connection = self.connections.pop(name, None)
        if connection is not None:
            await connection.close()

    async def wait_ready(self) -> None:
        """Until every server has connected or failed (each bounded by its `timeoutMs`)."""
        await asyncio.gather(*(c.wait_ready() for c in self.connections.values()))

    async def close(self) -> None:
        await asyncio.gather(*(c.close() for c in self.connections.values()), return_exceptions=True)
        for tools in self._tools.values():
            for name in tools:
                RUNTIME_CONTRACTS.pop(name, None)

    def reconnect(self, name: str) -> bool:
        connection = self.connections.get(name)
        if connection is None:
            return False
        connection.reconnect()
        return True

    # ----------------------------------------------------------------- state

    def _status(self, name: str, status: str, error: str | None, tools: int, *, tools_listed: bool = False) -> None:
        """Tell the listeners, when the status or error changed or the server listed its tools anew (the event
        carries the new count; a panel showing the tools re-reads them)."""
        if self.statuses.get(name) == (status, error) and not tools_listed:
            return
        self.statuses[name] = (status, error)
        event = McpServerStatusEvent(server=name, status=status, tools=tools, error=error)
        for listener in list(self._listeners):
            listener(event)

    def _on_change(self, connection: McpConnection) -> None:
        self._sync_tools(connection)
        listed = list(connection.tools)
        tools_listed = self._listed.get(connection.name) != listed
        self._listed[connection.name] = listed
        count = len(self._tools.get(connection.name, {}))
        self._status(connection.name, connection.status, connection.error, count, tools_listed=tools_listed)

    def _sync_tools(self, connection: McpConnection) -> None:
        pi = self._pi
        if pi is None:
            return
        server = connection.name
        config = connection.server.config
        live = connection.status in ("connected", "restarting")
        wanted = {
            tool_name(server, t.name): t for t in (connection.tools if live else []) if config.tool_enabled(t.name)
        }
        mine = self._tools.setdefault(server, {})
        registered = pi.extension.tools
        removed = [name for name in mine if name not in wanted]
        for name in removed:
            del mine[name]
            registered.pop(name, None)
            RUNTIME_CONTRACTS.pop(name, None)
        changed: list[str] = []
        again: list[str] = []
        for name, tool in wanted.items():
            current = mine.get(name)
            if current is not None:
                if current.tool != tool:
                    current.update(tool)
                    RUNTIME_CONTRACTS[name] = _contract(current)
                    changed.append(name)
                continue
            if name in registered or any(name in tools for tools in self._tools.values()):
                continue  # another server's tool already has this (cut) name
            made = self._made.get(name)
            if made is not None and made.server == server:
                # Back after its server failed or restarted: the same object, which the session still knows by
                # name, so it is activated below rather than registered as new.
                made.update(tool)
                again.append(name)
            else:
                made = self._made[name] = McpTool(lambda: self.connections.get(server), server, tool)
            mine[name] = made
            RUNTIME_CONTRACTS[name] = _contract(made)
            pi.register_tool(made)
        if removed or changed or again:
            try:
                active = pi.get_active_tools()
            except RuntimeError:  # no session bound yet: the next one takes the registry as it is
                return
            # A changed tool moves to the end, where the session's record of the tools (removed, then added) puts it.
            kept = [name for name in active if name not in removed and name not in changed and name not in again]
            pi.set_active_tools([*kept, *(name for name in active if name in changed), *again])

    def snapshot(self) -> list[dict[str, Any]]:  # Any: JSON values
        """Each configured server: name, transport, scope, source, status, error, tools, prompts, resources."""
        out: list[dict[str, Any]] = []
        for name, entry in self.entries.items():
            status, error = self.statuses.get(name, ("disabled" if not entry.config.enabled else "pending", None))
            connection = self.connections.get(name)
            out.append(
                {
                    "name": name,
                    "transport": entry.config.transport,
                    "scope": entry.scope,
                    "source": entry.source,
                    "status": status,
                    "error": error,
                    "tools": sorted(self._tools.get(name, {})),
                    "prompts": [p.name for p in connection.prompts] if connection is not None else [],
                    "resources": [r.uri for r in connection.resources] if connection is not None else [],
                    "logFile": str(connection.log_path) if connection is not None and connection.log_path else None,
                }
            )
        return out


_HOSTS: weakref.WeakKeyDictionary[AgentSessionRuntime, McpHost] = weakref.WeakKeyDictionary()


def bind_mcp_runtime(host: McpHost, runtime: AgentSessionRuntime) -> None:
    """Status changes become `mcp_server_status` events of the runtime's current session (JSON and RPC modes
    write them), and `mcp_host_of(runtime)` finds the host (RPC `get_mcp_servers`, the app's `/mcp`)."""
    _HOSTS[runtime] = host
    host.subscribe(lambda event: runtime.session.emit_event(event))


def mcp_host_of(runtime: AgentSessionRuntime) -> McpHost | None:
    return _HOSTS.get(runtime)


__all__ = ["INSTALL_HINT", "LOG_DIR", "McpHost", "bind_mcp_runtime", "mcp_host_of", "sdk_installed"]
