"""A `ToolDefinition` as an `AgentTool` the agent can run: execute gets a fresh `ctx` per call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apex_agent.tools import AgentTool, AgentToolResult, ToolUpdateCallback
from apex_ai.abort import AbortSignal
from apex_ai.types import ImageContent, TextContent
from apex_coding_agent.extensions.types import ToolDefinition


def to_tool_result(value: object) -> AgentToolResult:
    """An `AgentToolResult` from what an extension tool returned: the result itself, `{content, details}`, text."""
    if isinstance(value, AgentToolResult):
        return value
    if isinstance(value, str):
        return AgentToolResult(content=[TextContent(text=value)])
    if isinstance(value, dict):
        raw = value.get("content", [])
        blocks: list[TextContent | ImageContent] = []
        for block in [raw] if isinstance(raw, str) else raw:
            if isinstance(block, TextContent | ImageContent):
                blocks.append(block)
            elif isinstance(block, str):
                blocks.append(TextContent(text=block))
            elif isinstance(block, dict) and block.get("type") == "image":
                blocks.append(ImageContent.model_validate(block))
            else:
                blocks.append(TextContent.model_validate(block))
        return AgentToolResult(content=blocks, details=value.get("details"))
    raise TypeError(f"Extension tool returned {type(value).__name__}; expected AgentToolResult, dict or str")


class ExtensionTool(AgentTool):
    """Runs `definition.execute(tool_call_id, params, signal, on_update, ctx)` with `ctx = make_context()`."""

    def __init__(
        self, definition: ToolDefinition, extension_path: str, make_context: Callable[[], Any]
    ) -> None:  # Any: ExtensionContext (built by the runner)
        self.definition = definition
        self.extension_path = extension_path
        self.name = definition.name
        self.label = definition.label or definition.name
        self.description = definition.description
        self.parameters = definition.parameters
        self.execution_mode = definition.execution_mode
        self.prompt_snippet = definition.prompt_snippet
        self.prompt_guidelines = list(definition.prompt_guidelines)
        self._make_context = make_context

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None,
        on_update: ToolUpdateCallback | None,
    ) -> AgentToolResult:
        value = await self.definition.execute(tool_call_id, params, signal, on_update, self._make_context())
        return to_tool_result(value)


__all__ = ["ExtensionTool", "to_tool_result"]
