"""Agent lifecycle events and their wire form.

Messages inside events may be of any `AgentMessage` role, registered custom roles included, so
message fields are not validated: the loop builds events from values it already holds, and
serialization goes through `dump_message` (the registry's dump). That keeps building one
`message_update` per streamed delta cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import Field, PlainSerializer

from apex_agent.messages import AgentMessage, dump_message
from apex_agent.tools import AgentToolResult
from apex_agent.types import AgentStopReason, BudgetReport
from apex_ai._wire import WireModel
from apex_ai.events import AssistantMessageEvent
from apex_ai.types import ToolResultMessage


def _dump_messages(messages: list[AgentMessage]) -> list[dict[str, Any]]:
    return [dump_message(m) for m in messages]


def _dump_tool_result(result: AgentToolResult) -> dict[str, Any]:
    return result.to_wire()


if TYPE_CHECKING:
    MessageField: TypeAlias = AgentMessage
    MessageListField: TypeAlias = list[AgentMessage]
    ToolResultField: TypeAlias = AgentToolResult
else:
    # pydantic cannot build a validator for the open AgentMessage union (it ends in a Protocol) nor
    # should it re-validate a dataclass per event: these fields take values as given (Any) and
    # serialize through the registry's dump; type checkers still see the precise types above.
    MessageField = Annotated[Any, PlainSerializer(dump_message)]
    MessageListField = Annotated[list[Any], PlainSerializer(_dump_messages)]
    ToolResultField = Annotated[Any, PlainSerializer(_dump_tool_result)]


class AgentStartEvent(WireModel):
    type: Literal["agent_start"] = "agent_start"


class AgentEndEvent(WireModel):
    """Last event of a run: the messages this run added, why it ended, and the budget that stopped it."""

    type: Literal["agent_end"] = "agent_end"
    messages: MessageListField
    stop_reason: AgentStopReason = "completed"
    budget: BudgetReport | None = None


class TurnStartEvent(WireModel):
    type: Literal["turn_start"] = "turn_start"


class TurnEndEvent(WireModel):
    type: Literal["turn_end"] = "turn_end"
    message: MessageField
    """The turn's assistant message."""
    tool_results: list[ToolResultMessage] = Field(default_factory=list)


class MessageStartEvent(WireModel):
    type: Literal["message_start"] = "message_start"
    message: MessageField


class MessageUpdateEvent(WireModel):
    """One per provider block event of the streaming assistant message; `message` is a copy of the partial."""

    type: Literal["message_update"] = "message_update"
    message: MessageField
    assistant_message_event: AssistantMessageEvent


class MessageEndEvent(WireModel):
    type: Literal["message_end"] = "message_end"
    message: MessageField


class ToolExecutionStartEvent(WireModel):
    type: Literal["tool_execution_start"] = "tool_execution_start"
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]


class ToolExecutionUpdateEvent(WireModel):
    type: Literal["tool_execution_update"] = "tool_execution_update"
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    partial_result: ToolResultField


class ToolExecutionEndEvent(WireModel):
    type: Literal["tool_execution_end"] = "tool_execution_end"
    tool_call_id: str
    tool_name: str
    result: ToolResultField
    is_error: bool


AgentEvent: TypeAlias = (
    AgentStartEvent
    | AgentEndEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
)


def to_wire(event: WireModel, *, for_stream: bool) -> dict[str, Any]:
    """The JSON-ready dict of an event.

    `for_stream=True` is the JSON/RPC output wire: there `message_update` carries only its
    `assistantMessageEvent` without `partial` (the closing `message_end` is authoritative).
    `for_stream=False` keeps every field (in-process consumers, tests).
    """
    if for_stream and isinstance(event, MessageUpdateEvent):
        inner = event.assistant_message_event.model_dump(mode="json", by_alias=True, exclude={"partial"})
        return {"type": "message_update", "assistantMessageEvent": inner}
    return event.to_wire()


__all__ = [
    "AgentEndEvent",
    "AgentEvent",
    "AgentStartEvent",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "TurnEndEvent",
    "TurnStartEvent",
    "to_wire",
]
