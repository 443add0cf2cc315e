"""What an executable tool is: a declaration the model sees plus `execute`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel

from apex_ai.abort import AbortSignal
from apex_ai.types import ImageContent, TextContent, Tool, Usage

ExecutionMode: TypeAlias = Literal["sequential", "parallel"]


@dataclass
class AgentToolResult:
    """What a tool returns. `terminate` is a runtime hint for the loop and is never serialized."""

    content: list[TextContent | ImageContent] = field(default_factory=list)
    details: Any = None
    usage: Usage | None = None
    terminate: bool = False

    def to_wire(self) -> dict[str, Any]:
        """The JSON shape used in `tool_execution_*` events: `{content, details}` (+ usage)."""
        out: dict[str, Any] = {"content": [block.to_wire() for block in self.content]}
        if self.details is not None:
            out["details"] = self.details
        if self.usage is not None:
            out["usage"] = self.usage.to_wire()
        return out


ToolUpdateCallback: TypeAlias = Callable[[AgentToolResult], "None | Awaitable[None]"]


class ToolExecutionError(Exception):
    """Raise from `execute` to fail a call; `details` are kept on the error result."""

    def __init__(self, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.details = details


class AgentTool(ABC):
    """A tool the agent can run. Subclasses set the class attributes and implement `execute`.

    `execute` raises on failure (never encodes errors in content) and honours `signal`.
    """

    name: str
    label: str = ""
    description: str = ""
    parameters: dict[str, Any] | type[BaseModel] = {"type": "object", "properties": {}}
    execution_mode: ExecutionMode | None = None

    @abstractmethod
    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None,
        on_update: ToolUpdateCallback | None,
    ) -> AgentToolResult:
        """Run the tool with validated (coerced) `params`."""

    def prepare_arguments(self, args: dict[str, Any]) -> dict[str, Any]:
        """Shim before validation (e.g. accept a legacy argument name); default: unchanged."""
        return args

    def parameters_schema(self) -> dict[str, Any]:
        if isinstance(self.parameters, dict):
            return self.parameters
        return self.parameters.model_json_schema()

    def declaration(self) -> Tool:
        """The `Tool` the model is told about."""
        return Tool(name=self.name, description=self.description, parameters=self.parameters_schema())


ToolFunction: TypeAlias = Callable[
    [str, dict[str, Any], AbortSignal | None, ToolUpdateCallback | None], Awaitable[AgentToolResult]
]


class FunctionTool(AgentTool):
    """An `AgentTool` made from a coroutine function, for small tools and tests."""

    def __init__(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any] | type[BaseModel],
        fn: ToolFunction,
        *,
        label: str = "",
        execution_mode: ExecutionMode | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self.parameters = parameters
        self.label = label or name
        self.execution_mode = execution_mode
        self._fn = fn

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None,
        on_update: ToolUpdateCallback | None,
    ) -> AgentToolResult:
        return await self._fn(tool_call_id, params, signal, on_update)


__all__ = [
    "AgentTool",
    "AgentToolResult",
    "ExecutionMode",
    "FunctionTool",
    "ToolExecutionError",
    "ToolFunction",
    "ToolUpdateCallback",
]
