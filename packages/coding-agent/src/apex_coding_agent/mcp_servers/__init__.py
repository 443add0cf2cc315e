"""MCP servers as tools: configuration (`mcp.json`), connections through the `mcp` SDK, and the built-in
extension that turns each server's tools into agent tools named `mcp__<server>__<tool>`.

Importing this package does not import the SDK: only starting a configured server does.
"""

from apex_coding_agent.mcp_servers.config import (
    McpConfigError,
    McpServerConfig,
    load_mcp_config,
)
from apex_coding_agent.mcp_servers.extension import create_mcp_extension
from apex_coding_agent.mcp_servers.host import McpHost, bind_runtime, host_of

__all__ = [
    "McpConfigError",
    "McpHost",
    "McpServerConfig",
    "bind_runtime",
    "create_mcp_extension",
    "host_of",
    "load_mcp_config",
]
