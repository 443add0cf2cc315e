"""RPC wire types: commands, the response envelope and the extension UI messages.

Commands are validated strictly (`"enabled": "yes"` is not a bool, `"message": 5` is not a
string) so a client learns about a wrong field instead of getting a surprising coercion. Unknown
fields are ignored, as the reference does. Each command is validated on its own model, looked up
by `type`, so one bad command costs one small validation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StrictBool, StrictInt, StrictStr, ValidationError

from apex_ai._wire import to_camel
from apex_ai.types import ImageContent, ModelThinkingLevel

StreamingBehavior: TypeAlias = Literal["steer", "followUp"]
QueueMode: TypeAlias = Literal["all", "one-at-a-time"]


class RpcCommandBase(BaseModel):
    """Fields every command may carry; attribute names are snake_case, wire names camelCase."""

    model_config = ConfigDict(
        alias_generator=to_camel, validate_by_name=True, validate_by_alias=True, extra="ignore", strict=True
    )

    id: JsonValue = None
    """Correlation id, echoed on the response when present (any JSON value but null)."""
    type: str
    """The command name; each command narrows it to its literal."""


class PromptCommand(RpcCommandBase):
    type: Literal["prompt"] = "prompt"
    message: StrictStr
    images: list[ImageContent] | None = None
    streaming_behavior: StreamingBehavior | None = None


class SteerCommand(RpcCommandBase):
    type: Literal["steer"] = "steer"
    message: StrictStr
    images: list[ImageContent] | None = None


class FollowUpCommand(RpcCommandBase):
    type: Literal["follow_up"] = "follow_up"
    message: StrictStr
    images: list[ImageContent] | None = None


class AbortCommand(RpcCommandBase):
    type: Literal["abort"] = "abort"


class NewSessionCommand(RpcCommandBase):
    type: Literal["new_session"] = "new_session"
    parent_session: StrictStr | None = None


class GetStateCommand(RpcCommandBase):
    type: Literal["get_state"] = "get_state"


class GetMessagesCommand(RpcCommandBase):
    type: Literal["get_messages"] = "get_messages"


class SetModelCommand(RpcCommandBase):
    type: Literal["set_model"] = "set_model"
    provider: StrictStr
    model_id: StrictStr


class CycleModelCommand(RpcCommandBase):
    type: Literal["cycle_model"] = "cycle_model"


class GetAvailableModelsCommand(RpcCommandBase):
    type: Literal["get_available_models"] = "get_available_models"


class SetThinkingLevelCommand(RpcCommandBase):
    type: Literal["set_thinking_level"] = "set_thinking_level"
    level: ModelThinkingLevel


class CycleThinkingLevelCommand(RpcCommandBase):
    type: Literal["cycle_thinking_level"] = "cycle_thinking_level"


class GetAvailableThinkingLevelsCommand(RpcCommandBase):
    type: Literal["get_available_thinking_levels"] = "get_available_thinking_levels"


class SetSteeringModeCommand(RpcCommandBase):
    type: Literal["set_steering_mode"] = "set_steering_mode"
    mode: QueueMode


class SetFollowUpModeCommand(RpcCommandBase):
    type: Literal["set_follow_up_mode"] = "set_follow_up_mode"
    mode: QueueMode


class CompactCommand(RpcCommandBase):
    type: Literal["compact"] = "compact"
    custom_instructions: StrictStr | None = None


class SetAutoCompactionCommand(RpcCommandBase):
    type: Literal["set_auto_compaction"] = "set_auto_compaction"
    enabled: StrictBool


class SetAutoRetryCommand(RpcCommandBase):
    type: Literal["set_auto_retry"] = "set_auto_retry"
    enabled: StrictBool


class AbortRetryCommand(RpcCommandBase):
    type: Literal["abort_retry"] = "abort_retry"


class BashCommand(RpcCommandBase):
    type: Literal["bash"] = "bash"
    command: StrictStr
    exclude_from_context: StrictBool | None = None


class AbortBashCommand(RpcCommandBase):
    type: Literal["abort_bash"] = "abort_bash"


class GetSessionStatsCommand(RpcCommandBase):
    type: Literal["get_session_stats"] = "get_session_stats"


class ExportHtmlCommand(RpcCommandBase):
    type: Literal["export_html"] = "export_html"
    output_path: StrictStr | None = None


class SwitchSessionCommand(RpcCommandBase):
    type: Literal["switch_session"] = "switch_session"
    session_path: StrictStr


class ForkCommand(RpcCommandBase):
    type: Literal["fork"] = "fork"
    entry_id: StrictStr


class CloneCommand(RpcCommandBase):
    type: Literal["clone"] = "clone"


class GetForkMessagesCommand(RpcCommandBase):
    type: Literal["get_fork_messages"] = "get_fork_messages"


class GetEntriesCommand(RpcCommandBase):
    type: Literal["get_entries"] = "get_entries"
    since: StrictStr | None = None


class GetTreeCommand(RpcCommandBase):
    type: Literal["get_tree"] = "get_tree"


class GetLastAssistantTextCommand(RpcCommandBase):
    type: Literal["get_last_assistant_text"] = "get_last_assistant_text"


class SetSessionNameCommand(RpcCommandBase):
    type: Literal["set_session_name"] = "set_session_name"
    name: StrictStr


class GetCommandsCommand(RpcCommandBase):
    type: Literal["get_commands"] = "get_commands"


class GetMcpServersCommand(RpcCommandBase):
    type: Literal["get_mcp_servers"] = "get_mcp_servers"


class GetCheckpointsCommand(RpcCommandBase):
    type: Literal["get_checkpoints"] = "get_checkpoints"


class RewindCommand(RpcCommandBase):
    type: Literal["rewind"] = "rewind"
    entry_id: StrictStr
    mode: Literal["all", "conversation", "files"] = "all"
    overwrite: list[StrictStr] = []
    dry_run: StrictBool = False


class RedoCommand(RpcCommandBase):
    type: Literal["redo"] = "redo"
    overwrite: list[StrictStr] = []


class RecoverRestoreCommand(RpcCommandBase):
    type: Literal["recover_restore"] = "recover_restore"
    action: Literal["complete", "revert"]


class ListSessionsCommand(RpcCommandBase):
    type: Literal["list_sessions"] = "list_sessions"
    all: StrictBool = False


class SearchSessionsCommand(RpcCommandBase):
    type: Literal["search_sessions"] = "search_sessions"
    query: StrictStr
    cwd: StrictStr | None = None
    limit: StrictInt = 20


class ExtensionUiResponse(RpcCommandBase):
    """A client's answer to an `extension_ui_request`; not a command (it gets no response)."""

    type: Literal["extension_ui_response"] = "extension_ui_response"
    id: JsonValue = None
    value: JsonValue = None
    confirmed: StrictBool | None = None
    cancelled: StrictBool | None = None


RpcCommand: TypeAlias = Annotated[
    PromptCommand
    | SteerCommand
    | FollowUpCommand
    | AbortCommand
    | NewSessionCommand
    | GetStateCommand
    | GetMessagesCommand
    | SetModelCommand
    | CycleModelCommand
    | GetAvailableModelsCommand
    | SetThinkingLevelCommand
    | CycleThinkingLevelCommand
    | GetAvailableThinkingLevelsCommand
    | SetSteeringModeCommand
    | SetFollowUpModeCommand
    | CompactCommand
    | SetAutoCompactionCommand
    | SetAutoRetryCommand
    | AbortRetryCommand
    | BashCommand
    | AbortBashCommand
    | GetSessionStatsCommand
    | ExportHtmlCommand
    | SwitchSessionCommand
    | ForkCommand
    | CloneCommand
    | GetForkMessagesCommand
    | GetEntriesCommand
    | GetTreeCommand
    | GetLastAssistantTextCommand
    | SetSessionNameCommand
    | GetCommandsCommand
    | GetMcpServersCommand
    | GetCheckpointsCommand
    | RewindCommand
    | RedoCommand
    | RecoverRestoreCommand
    | ListSessionsCommand
    | SearchSessionsCommand,
    Field(discriminator="type"),
]

COMMAND_MODELS: Final[dict[str, type[RpcCommandBase]]] = {
    model.model_fields["type"].default: model
    for model in (
        PromptCommand,
        SteerCommand,
        FollowUpCommand,
        AbortCommand,
        NewSessionCommand,
        GetStateCommand,
        GetMessagesCommand,
        SetModelCommand,
        CycleModelCommand,
        GetAvailableModelsCommand,
        SetThinkingLevelCommand,
        CycleThinkingLevelCommand,
        GetAvailableThinkingLevelsCommand,
        SetSteeringModeCommand,
        SetFollowUpModeCommand,
        CompactCommand,
        SetAutoCompactionCommand,
        SetAutoRetryCommand,
        AbortRetryCommand,
        BashCommand,
        AbortBashCommand,
        GetSessionStatsCommand,
        ExportHtmlCommand,
        SwitchSessionCommand,
        ForkCommand,
        CloneCommand,
        GetForkMessagesCommand,
        GetEntriesCommand,
        GetTreeCommand,
        GetLastAssistantTextCommand,
        SetSessionNameCommand,
        GetCommandsCommand,
        GetMcpServersCommand,
        GetCheckpointsCommand,
        RewindCommand,
        RedoCommand,
        RecoverRestoreCommand,
        ListSessionsCommand,
        SearchSessionsCommand,
    )
}
"""Command `type` -> its model; the keys are exactly the RPC commands (docs/rpc.md)."""

# --------------------------------------------------------------------------- response envelope


class RpcSuccessResponse(BaseModel):
    """Shape of a success response; `id` and `data` are absent (not null) when not given."""

    model_config = ConfigDict(extra="forbid")
    id: JsonValue = None
    type: Literal["response"] = "response"
    command: str
    success: Literal[True] = True
    data: JsonValue = None


class RpcErrorResponse(BaseModel):
    """Shape of a failure response."""

    model_config = ConfigDict(extra="forbid")
    id: JsonValue = None
    type: Literal["response"] = "response"
    command: str
    success: Literal[False] = False
    error: str


class _NoData:
    def __repr__(self) -> str:
        return "NO_DATA"


NO_DATA: Final[Any] = _NoData()  # Any: a sentinel accepted wherever response data is
"""Marks a success response without a `data` key (`None` means `"data": null`, e.g. `cycle_model`)."""


def success_response(command: str, id: JsonValue = None, data: Any = NO_DATA) -> dict[str, Any]:  # Any: JSON-ready
    """The success envelope as a JSON-ready dict (built by hand: it is on every command's path)."""
    out: dict[str, Any] = {"id": id} if id is not None else {}  # Any: JSON values
    out["type"] = "response"
    out["command"] = command
    out["success"] = True
    if data is not NO_DATA:
        out["data"] = data
    return out


def error_response(command: str, message: str, id: JsonValue = None) -> dict[str, Any]:  # Any: JSON values
    out: dict[str, Any] = {"id": id} if id is not None else {}  # Any: JSON values
    out["type"] = "response"
    out["command"] = command
    out["success"] = False
    out["error"] = message
    return out


# --------------------------------------------------------------------------- parsing

PARSE_COMMAND: Final = "parse"
NOT_A_COMMAND_DETAIL: Final = 'expected an object with a string "type"'


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    command: RpcCommandBase


@dataclass(frozen=True, slots=True)
class UiReply:
    reply: ExtensionUiResponse


@dataclass(frozen=True, slots=True)
class Rejected:
    """A line that gets a failure response right away (parse error, unknown command, invalid fields)."""

    response: dict[str, Any]  # Any: JSON values


ParseOutcome: TypeAlias = ParsedCommand | UiReply | Rejected


def _reject_constant(name: str) -> Any:  # Any: json's parse_constant hook signature
    raise ValueError(f"{name} is not valid JSON")


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in item["loc"])
        parts.append(f"{where}: {item['msg']}" if where else item["msg"])
    return "; ".join(parts)


def parse_line(line: str) -> ParseOutcome:
    """Turn one input record into a command, a UI reply, or the failure response it deserves."""
    try:
        value = json.loads(line, parse_constant=_reject_constant)
    except RecursionError:
        return Rejected(error_response(PARSE_COMMAND, "Failed to parse command: nesting too deep"))
    except ValueError as exc:  # JSONDecodeError is a ValueError
        return Rejected(error_response(PARSE_COMMAND, f"Failed to parse command: {exc}"))
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        return Rejected(error_response(PARSE_COMMAND, f"Failed to parse command: {NOT_A_COMMAND_DETAIL}"))
    kind: str = value["type"]
    if kind == "extension_ui_response":
        try:
            return UiReply(ExtensionUiResponse.model_validate(value))
        except ValidationError as exc:
            return Rejected(error_response(kind, f"Invalid extension_ui_response: {_describe(exc)}"))
    model = COMMAND_MODELS.get(kind)
    if model is None:
        # Without the id even when the request had one: the pi capture does exactly this.
        return Rejected(error_response(kind, f"Unknown command: {kind}"))
    try:
        return ParsedCommand(model.model_validate(value))
    except ValidationError as exc:
        request_id = value.get("id")
        echo = request_id if _is_json(request_id) else None
        return Rejected(error_response(kind, f'Invalid "{kind}" command: {_describe(exc)}', echo))


def _is_json(value: object) -> bool:
    # json.loads only produces JSON values, but this keeps the echo honest if called with other dicts.
    return value is None or isinstance(value, str | int | float | bool | list | dict)


__all__ = [
    "COMMAND_MODELS",
    "NO_DATA",
    "PARSE_COMMAND",
    "AbortBashCommand",
    "AbortCommand",
    "AbortRetryCommand",
    "BashCommand",
    "CloneCommand",
    "CompactCommand",
    "CycleModelCommand",
    "CycleThinkingLevelCommand",
    "ExportHtmlCommand",
    "ExtensionUiResponse",
    "FollowUpCommand",
    "ForkCommand",
    "GetAvailableModelsCommand",
    "GetAvailableThinkingLevelsCommand",
    "GetCheckpointsCommand",
    "GetCommandsCommand",
    "ListSessionsCommand",
    "SearchSessionsCommand",
    "GetEntriesCommand",
    "GetForkMessagesCommand",
    "GetLastAssistantTextCommand",
    "GetMcpServersCommand",
    "GetMessagesCommand",
    "GetSessionStatsCommand",
    "GetStateCommand",
    "GetTreeCommand",
    "NewSessionCommand",
    "ParseOutcome",
    "ParsedCommand",
    "PromptCommand",
    "QueueMode",
    "RecoverRestoreCommand",
    "RedoCommand",
    "RewindCommand",
    "Rejected",
    "RpcCommand",
    "RpcCommandBase",
    "RpcErrorResponse",
    "RpcSuccessResponse",
    "SetAutoCompactionCommand",
    "SetAutoRetryCommand",
    "SetFollowUpModeCommand",
    "SetModelCommand",
    "SetSessionNameCommand",
    "SetSteeringModeCommand",
    "SetThinkingLevelCommand",
    "SteerCommand",
    "StreamingBehavior",
    "SwitchSessionCommand",
    "UiReply",
    "error_response",
    "parse_line",
    "success_response",
]
