"""MCP server configuration: `mcp.json` files, their shape, `$VAR` expansion and the trust rule.

Files, later ones winning per server name: `<agent dir>/mcp.json`, then, for a trusted project only, the project
root's `.mcp.json` and `.apex-code/mcp.json`. An untrusted project's files are never parsed for commands to run;
they are only reported as skipped. Each file is `{"mcpServers": {"name": {...}}}` where a server is either
`{command, args?, env?, cwd?}` (stdio) or `{url, headers?}` (streamable HTTP), plus `enabled`, `allowedTools`,
`deniedTools`, `timeoutMs` (each call) and `startupTimeoutMs` (starting and `initialize`). String values may hold `$VAR`/`${VAR}` (`$$` is a literal `$`), expanded when the
server starts; a variable that is not set is an error of that server, not of the whole run.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from apex_coding_agent.core.config_values import interpolate

CONFIG_FILE = "mcp.json"
PROJECT_FILES = (".mcp.json", ".apex-code/mcp.json")
DEFAULT_TIMEOUT_MS = 60_000
DEFAULT_STARTUP_TIMEOUT_MS = 30_000
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
Scope: TypeAlias = Literal["user", "project", "sdk"]


class McpConfigError(ValueError):
    """A config file or server entry that cannot be used; the message names the file and the server."""


class McpServerConfig(BaseModel):
    """One server's entry as written (before `$VAR` expansion)."""

    # Built on first use: a run without mcp.json never pays for the schema.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", defer_build=True)

    type: Literal["stdio", "http", "streamable-http"] | None = None
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    enabled: bool = True
    allowed_tools: list[str] | None = None
    denied_tools: list[str] = Field(default_factory=list)
    timeout_ms: int = Field(default=DEFAULT_TIMEOUT_MS, gt=0)
    startup_timeout_ms: int = Field(default=DEFAULT_STARTUP_TIMEOUT_MS, gt=0)

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError('give either "command" (a stdio server) or "url" (a streamable HTTP server)')
        if self.command is not None and (self.type not in (None, "stdio") or self.headers):
            raise ValueError('"command" starts a stdio server: "type" http and "headers" do not apply')
        if self.url is not None and (self.type == "stdio" or self.args or self.env or self.cwd):
            raise ValueError('"url" names an HTTP server: "args", "env", "cwd" and "type" stdio do not apply')
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"

    def tool_enabled(self, tool: str) -> bool:
        """`allowedTools` (when given) must list the tool and `deniedTools` must not."""
        if tool in self.denied_tools:
            return False
        return self.allowed_tools is None or tool in self.allowed_tools

    def to_json(self) -> dict[str, Any]:  # Any: JSON values
        return self.model_dump(by_alias=True, exclude_defaults=True, mode="json")


@dataclass(frozen=True)
class ResolvedServer:
    """A server with its variables expanded, ready to start."""

    name: str
    config: McpServerConfig
    source: str
    scope: Scope


@dataclass
class McpServerEntry:
    name: str
    config: McpServerConfig
    source: str
    scope: Scope

    def resolve(self, env: dict[str, str] | None = None) -> ResolvedServer:
        """The entry with `$VAR`s expanded (McpConfigError naming the variable when one is not set)."""
        environment = os.environ if env is None else env

        def expand(value: str, where: str) -> str:
            out = interpolate(value, environment)
            if out is None:
                unset = sorted({a or b for a, b in _VARIABLE.findall(value) if (a or b) not in environment})
                names = ", ".join("$" + name for name in unset)
                raise McpConfigError(f"{where} uses {names}, which is not set ({self.source})")
            return out

        c = self.config
        resolved = c.model_copy(
            update={
                "command": expand(c.command, "command") if c.command is not None else None,
                "args": [expand(a, "args") for a in c.args],
                "env": {k: expand(v, f"env.{k}") for k, v in c.env.items()},
                "cwd": expand(c.cwd, "cwd") if c.cwd is not None else None,
                "url": expand(c.url, "url") if c.url is not None else None,
                "headers": {k: expand(v, f"headers.{k}") for k, v in c.headers.items()},
            }
        )
        return ResolvedServer(self.name, resolved, self.source, self.scope)


@dataclass
class McpConfigLoad:
    """What the config files gave: servers by name (later files win), errors, and untrusted files left unread."""

    servers: dict[str, McpServerEntry] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    skipped_untrusted: list[str] = field(default_factory=list)
    broken_files: set[str] = field(default_factory=set)
    """Files that could not be read or do not have the `mcpServers` shape (none of their servers loaded)."""
    broken_servers: set[str] = field(default_factory=set)
    """Names of servers whose entry could not be used in some file."""


def user_config_path(agent_dir: str | Path) -> Path:
    return Path(agent_dir) / CONFIG_FILE


def project_config_paths(cwd: str | Path) -> list[Path]:
    return [Path(cwd) / name for name in PROJECT_FILES]


def _format_error(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"])
        parts.append(f"{where}: {error['msg']}" if where else str(error["msg"]))
    return "; ".join(parts)


def parse_servers(data: object, source: str, scope: Scope) -> tuple[dict[str, McpServerEntry], list[str]]:
    """Servers of one file's JSON; a bad server is an error line and is left out, the others still load."""
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        return {}, [f'{source}: expected {{"mcpServers": {{"name": {{...}}}}}}']
    servers: dict[str, McpServerEntry] = {}
    errors: list[str] = []
    for name, raw in data.get("mcpServers", {}).items():
        if not SERVER_NAME.match(name):
            errors.append(f'{source}: MCP server name "{name}" may use only letters, digits, "_" and "-" (1-40)')
            continue
        try:
            config = McpServerConfig.model_validate(raw)
        except ValidationError as exc:
            errors.append(f'{source}: MCP server "{name}": {_format_error(exc)}')
            continue
        servers[name] = McpServerEntry(name, config, source, scope)
    return servers, errors


def read_config_file(path: Path) -> object | None:
    """The file's JSON, None when it does not exist; McpConfigError when it cannot be read or parsed."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise McpConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    try:
        data: object = json.loads(text)
        return data
    except ValueError as exc:
        raise McpConfigError(f"{path}: not valid JSON ({exc})") from exc


def load_mcp_config(
    cwd: str | Path, agent_dir: str | Path, *, project_trusted: bool, untrusted_files: Collection[Path] = ()
) -> McpConfigLoad:
    """The configured servers. An untrusted project's files (and `untrusted_files` of a trusted one) are listed in
    `skipped_untrusted`, never parsed."""
    out = McpConfigLoad()
    files: list[tuple[Path, Scope]] = [(user_config_path(agent_dir), "user")]
    for path in project_config_paths(cwd):
        if project_trusted and path not in untrusted_files:
            files.append((path, "project"))
        elif path.is_file():
            out.skipped_untrusted.append(str(path))
    for path, scope in files:
        try:
            data = read_config_file(path)
        except McpConfigError as exc:
            out.errors.append(str(exc))
            out.broken_files.add(str(path))
            continue
        if data is None:
            continue
        servers, errors = parse_servers(data, str(path), scope)
        out.servers.update(servers)
        out.errors.extend(errors)
        listed = data.get("mcpServers") if isinstance(data, dict) else None
        if isinstance(listed, dict):
            out.broken_servers.update(name for name in listed if name not in servers)
        elif errors:
            out.broken_files.add(str(path))
    return out


def may_have_servers(cwd: str | Path, agent_dir: str | Path, *, project_trusted: bool) -> bool:
    """Whether any config file exists (cheap: no parsing)."""
    paths = [user_config_path(agent_dir), *(project_config_paths(cwd) if project_trusted else [])]
    return any(path.is_file() for path in paths)


def write_server(path: Path, name: str, config: McpServerConfig) -> None:
    """Add or replace one server in a config file, keeping the file's other keys and servers."""
    from apex_coding_agent.core.file_lock import write_atomic

    if not SERVER_NAME.match(name):
        raise McpConfigError(f'MCP server name "{name}" may use only letters, digits, "_" and "-" (1-40)')
    data = read_config_file(path) or {}
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise McpConfigError(f'{path}: expected {{"mcpServers": {{...}}}}; not changed')
    data.setdefault("mcpServers", {})[name] = config.to_json()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(data, indent=2) + "\n")


def remove_server(path: Path, name: str) -> bool:
    """Remove one server from a config file; False when the file does not list it."""
    from apex_coding_agent.core.file_lock import write_atomic

    data = read_config_file(path)
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers"), dict) or name not in data["mcpServers"]:
        return False
    del data["mcpServers"][name]
    write_atomic(path, json.dumps(data, indent=2) + "\n")
    return True


__all__ = [
    "CONFIG_FILE",
    "DEFAULT_TIMEOUT_MS",
    "PROJECT_FILES",
    "McpConfigError",
    "McpConfigLoad",
    "McpServerConfig",
    "McpServerEntry",
    "ResolvedServer",
    "load_mcp_config",
    "may_have_servers",
    "parse_servers",
    "project_config_paths",
    "read_config_file",
    "remove_server",
    "user_config_path",
    "write_server",
]
