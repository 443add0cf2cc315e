"""MCP servers as tools: configuration (`mcp.json`), connections through the `mcp` SDK, and the built-in
extension that turns each server's tools into agent tools named `mcp__<server>__<tool>`.

Names are loaded on first use: `apex-code mcp list` reads the config without the extension machinery, and nothing
here imports the SDK until a configured server starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from apex_coding_agent._lazy import declared_exports, lazy_exports

if TYPE_CHECKING:
    from apex_coding_agent.mcp_servers.config import McpConfigError as McpConfigError
    from apex_coding_agent.mcp_servers.config import McpServerConfig as McpServerConfig
    from apex_coding_agent.mcp_servers.config import load_mcp_config as load_mcp_config
    from apex_coding_agent.mcp_servers.extension import create_mcp_extension as create_mcp_extension
    from apex_coding_agent.mcp_servers.host import McpHost as McpHost
    from apex_coding_agent.mcp_servers.host import bind_mcp_runtime as bind_mcp_runtime
    from apex_coding_agent.mcp_servers.host import mcp_host_of as mcp_host_of

_EXPORTS = declared_exports(__file__)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = sorted(_EXPORTS)
