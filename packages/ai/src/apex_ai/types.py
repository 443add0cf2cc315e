"""Provider-facing wire types: content blocks, messages, usage, tools, models and context.

Shapes and camelCase names follow the shared message types of the original product. Every type here goes into
session files and onto the
JSON/RPC wire unchanged, so field names are facts, not choices.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_serializer

from apex_ai._wire import WireModel

StopReason: TypeAlias = Literal["pending", "stop", "length", "toolUse", "error", "aborted", "deferred"]
ThinkingLevel: TypeAlias = Literal["minimal", "low", "medium", "high", "xhigh", "max"]
ModelThinkingLevel: TypeAlias = Literal["off", ThinkingLevel]
CacheRetention: TypeAlias = Literal["none", "short", "long"]
InputKind: TypeAlias = Literal["text", "image"]


def now_ms() -> int:
    """The clock of every message `timestamp`: milliseconds since the epoch."""
    return int(time.time() * 1000)


# --------------------------------------------------------------------------- content blocks


class TextContent(WireModel):
    type: Literal["text"] = "text"
    text: str
    text_signature: str | None = None


class ImageContent(WireModel):
    type: Literal["image"] = "image"
    data: str
    """Base64-encoded image bytes."""
    mime_type: str


class ThinkingContent(WireModel):
    type: Literal["thinking"] = "thinking"
    thinking: str
    thinking_signature: str | None = None
    redacted: bool | None = None


class ToolCall(WireModel):
    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    thought_signature: str | None = None
    namespace: str | None = None
    """OpenAI Responses namespace of a dynamically loaded tool: carried, never interpreted."""


UserContent: TypeAlias = Annotated[TextContent | ImageContent, Field(discriminator="type")]
AssistantContent: TypeAlias = Annotated[TextContent | ThinkingContent | ToolCall, Field(discriminator="type")]
ToolResultContent: TypeAlias = UserContent

# --------------------------------------------------------------------------- usage


def _js_number(value: float) -> float | int:
    # JavaScript writes 3 for 3.0; matching it keeps our lines equal to the original's.
    return int(value) if isinstance(value, float) and value.is_integer() else value


class Cost(WireModel):
    """USD cost of one request, split like the token counts."""

    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0
    total: float = 0

    @field_serializer("input", "output", "cache_read", "cache_write", "total", when_used="json")
    def _number(self, value: float) -> float | int:
        return _js_number(value)


class Usage(WireModel):
    """Token counts of one request. `input` excludes cached tokens; `reasoning` is part of `output`;
    `cache_write_1h` is part of `cache_write`."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cache_write_1h: int | None = None
    reasoning: int | None = None
    total_tokens: int = 0
    cost: Cost = Field(default_factory=Cost)


# --------------------------------------------------------------------------- tools


class Tool(WireModel):
    """A tool declaration as the model sees it; `parameters` is a JSON Schema object."""

    name: str
    description: str
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})

    @classmethod
    def from_model(cls, name: str, description: str, params: type[BaseModel]) -> Tool:
        """Declare a tool whose parameters are a pydantic class (stored as its JSON Schema)."""
        return cls(name=name, description=description, parameters=params.model_json_schema())


class ToolReference(WireModel):
    name: str


# --------------------------------------------------------------------------- messages


class DiagnosticError(WireModel):
    name: str | None = None
    message: str
    stack: str | None = None
    code: str | int | None = None


class AssistantMessageDiagnostic(WireModel):
    type: str
    timestamp: int
    error: DiagnosticError | None = None
    details: Any = None


class DeferredHandle(WireModel):
    """What a `deferred` response needs to be fetched later (no v1 provider emits one)."""

    provider: str
    model_id: str
    api: str
    id: str
    expires_at: int | None = None
    poll_after_ms: int | None = None
    data: Any = None


class SystemMessage(WireModel):
    """A system prompt declaration or delta; replay semantics live in `apex_ai.transcript`."""

    role: Literal["system"] = "system"
    content: str | list[TextContent] = ""
    sections: dict[str, str | None] | None = None
    tools_added: list[Tool] | None = None
    tools_removed: list[ToolReference] | None = None
    replace: bool | None = None
    timestamp: int = 0


class UserMessage(WireModel):
    role: Literal["user"] = "user"
    content: str | list[UserContent]
    timestamp: int


class AssistantMessage(WireModel):
    role: Literal["assistant"] = "assistant"
    content: list[AssistantContent] = Field(default_factory=list)
    api: str
    provider: str
    model: str
    response_model: str | None = None
    response_id: str | None = None
    provider_thinking_level: str | None = None
    diagnostics: list[AssistantMessageDiagnostic] | None = None
    usage: Usage = Field(default_factory=Usage)
    stop_reason: StopReason
    deferred: DeferredHandle | None = None
    error_message: str | None = None
    raw_stop_reason: str | None = None
    end_turn: bool | None = None
    timestamp: int


class ToolResultMessage(WireModel):
    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[ToolResultContent] = Field(default_factory=list)
    details: Any = None
    usage: Usage | None = None
    is_error: bool = False
    timestamp: int


Message: TypeAlias = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="role")
]
# Built on first use (like the wire models): building them at import costs start-up time on every run.
MessageAdapter: TypeAdapter[SystemMessage | UserMessage | AssistantMessage | ToolResultMessage] = TypeAdapter(
    Message, config=ConfigDict(defer_build=True)
)
MessagesAdapter: TypeAdapter[list[SystemMessage | UserMessage | AssistantMessage | ToolResultMessage]] = TypeAdapter(
    list[Message], config=ConfigDict(defer_build=True)
)

# --------------------------------------------------------------------------- models


class CostTier(WireModel):
    """Rates that price a whole request once its input exceeds `input_tokens_above`."""

    input_tokens_above: int
    input: float
    output: float
    cache_read: float = 0
    cache_write: float = 0

    @field_serializer("input", "output", "cache_read", "cache_write", when_used="json")
    def _number(self, value: float) -> float | int:
        return _js_number(value)


class ModelCost(WireModel):
    """USD per million tokens."""

    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0
    tiers: list[CostTier] | None = None

    @field_serializer("input", "output", "cache_read", "cache_write", when_used="json")
    def _number(self, value: float) -> float | int:
        return _js_number(value)


class Model(WireModel):
    """A model of a provider. Two models are equal when provider and id are."""

    id: str
    name: str = ""
    api: str
    provider: str
    base_url: str = ""
    reasoning: bool = False
    thinking_level_map: dict[str, str | None] | None = None
    """Level -> provider value; a missing key keeps the default mapping, None marks it unsupported."""
    input: list[InputKind] = Field(default_factory=lambda: list[InputKind](["text"]))
    cost: ModelCost = Field(default_factory=ModelCost)
    context_window: int = 128000
    max_tokens: int = 16384
    sampling_params: dict[str, Any] | None = None
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Model):
            return NotImplemented
        return (self.provider, self.id) == (other.provider, other.id)

    def __hash__(self) -> int:
        return hash((self.provider, self.id))


class Context(BaseModel):
    """What one request sends: prompt, transcript and tool declarations."""

    system_prompt: str | None = None
    messages: list[Message] = Field(default_factory=list)
    tools: list[Tool] | None = None


__all__ = [
    "now_ms",
    "AssistantContent",
    "AssistantMessage",
    "AssistantMessageDiagnostic",
    "CacheRetention",
    "Context",
    "Cost",
    "CostTier",
    "DeferredHandle",
    "DiagnosticError",
    "ImageContent",
    "InputKind",
    "Message",
    "MessageAdapter",
    "MessagesAdapter",
    "Model",
    "ModelCost",
    "ModelThinkingLevel",
    "StopReason",
    "SystemMessage",
    "TextContent",
    "ThinkingContent",
    "ThinkingLevel",
    "Tool",
    "ToolCall",
    "ToolReference",
    "ToolResultContent",
    "ToolResultMessage",
    "Usage",
    "UserContent",
    "UserMessage",
]
