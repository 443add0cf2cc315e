"""An MCP server's tool as an agent tool: `mcp__<server>__<tool>`, the server's JSON schema, mapped results.

Arguments are validated against the server's `inputSchema` by the agent loop, as for every tool. Text, images,
embedded resources and structured content become the result's blocks; text is cut with the built-in tools'
limits (`DEFAULT_MAX_LINES`, `DEFAULT_MAX_BYTES`) and a notice. A result the server marks `isError`, a server
that is down, crashes mid-call or runs past `timeoutMs` is a tool error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from apex_agent.tools import AgentTool, AgentToolResult, ToolExecutionError, ToolUpdateCallback
from apex_ai.abort import AbortSignal
from apex_ai.types import ImageContent, TextContent
from apex_coding_agent.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, truncate_head

if TYPE_CHECKING:
    import mcp_types

    from apex_coding_agent.mcp_servers.connection import McpConnection

PREFIX = "mcp__"
MAX_NAME = 64  # what the model APIs accept for a tool name
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, with characters the model APIs refuse replaced by `_` and cut at 64."""
    return f"{PREFIX}{server}__{_UNSAFE.sub('_', tool)}"[:MAX_NAME]


def _text_of(block: Any) -> str | None:  # Any: an MCP content block
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind == "resource":
        inner = block.resource
        text = getattr(inner, "text", None)
        if text is not None:
            return f"[resource {inner.uri}]\n{text}"
        return f"[resource {inner.uri}: {getattr(inner, 'mime_type', None) or 'binary'}, not shown]"
    if kind == "resource_link":
        return f"[resource link {block.uri}" + (f": {block.description}]" if block.description else "]")
    if kind == "audio":
        return f"[audio {block.mime_type}, not shown]"
    return None


def map_content(blocks: list[Any], structured: dict[str, Any] | None = None) -> list[TextContent | ImageContent]:
    """MCP content blocks as tool result blocks: text joined and cut like the built-in tools' output, images kept."""
    texts: list[str] = []
    images: list[ImageContent] = []
    for block in blocks:
        if getattr(block, "type", None) == "image":
            images.append(ImageContent(data=block.data, mime_type=block.mime_type))
            continue
        text = _text_of(block)
        if text is not None:
            texts.append(text)
    if not texts and structured is not None:
        texts.append(json.dumps(structured, indent=2, ensure_ascii=False))
    out: list[TextContent | ImageContent] = []
    joined = "\n".join(texts)
    if joined or not images:
        truncation = truncate_head(joined)
        text = truncation.content
        if truncation.truncated:
            text += (
                f"\n\n[Output truncated: {truncation.output_lines} of {truncation.total_lines} lines "
                f"({format_size(truncation.output_bytes)} of {format_size(truncation.total_bytes)}); "
                f"limit {DEFAULT_MAX_LINES} lines or {format_size(DEFAULT_MAX_BYTES)}]"
            )
        out.append(TextContent(text=text or "(no output)"))
    out.extend(images)
    return out


def is_read_only(tool: mcp_types.Tool) -> bool:
    annotations = tool.annotations
    return bool(annotations is not None and annotations.read_only_hint)


class McpTool(AgentTool):
    """Calls one tool of one server through its connection (looked up per call: a restart replaces nothing here)."""

    def __init__(self, connection: Callable[[], McpConnection | None], server: str, tool: mcp_types.Tool) -> None:
        self.name = tool_name(server, tool.name)
        self.server = server
        self._connection = connection
        self.update(tool)

    def update(self, tool: mcp_types.Tool) -> None:
        """Take the server's new description of the tool (after `tools/list_changed`)."""
        self.label = f"{self.server}: {tool.title or tool.name}"
        self.description = (tool.description or f"The {tool.name} tool of the {self.server} MCP server.").strip()
        schema = dict(tool.input_schema or {})
        schema.setdefault("type", "object")
        self.parameters = schema
        self.tool = tool
        self.read_only = is_read_only(tool)

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None,
        on_update: ToolUpdateCallback | None,
    ) -> AgentToolResult:
        from apex_coding_agent.mcp_servers.errors import McpCallError

        connection = self._connection()
        if connection is None:
            raise ToolExecutionError(f'MCP server "{self.server}" is not running')
        try:
            result = await connection.call_tool(self.tool.name, params, signal)
        except McpCallError as exc:
            raise ToolExecutionError(str(exc)) from exc
        content = map_content(list(result.content), result.structured_content)
        details = {"server": self.server, "tool": self.tool.name}
        if result.is_error:
            message = "\n".join(b.text for b in content if isinstance(b, TextContent)) or "the tool failed"
            raise ToolExecutionError(message, details)
        return AgentToolResult(content=content, details=details)


__all__ = ["PREFIX", "McpTool", "is_read_only", "map_content", "tool_name"]
