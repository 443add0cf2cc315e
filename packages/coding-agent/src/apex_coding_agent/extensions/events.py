"""Extension events and handler results (the event table).

Two kinds of events reach handlers. The extension-only events below (`project_trust`, `input`, `tool_call`, ...)
are defined here. The session's own events (`agent_start`, `message_end`, `tool_execution_end`, ...; the types in
`apex_coding_agent.events.EXTENSION_VISIBLE`) are not redefined: `extension_view` hands a handler a copy of the
session's event, of the same class, with the turn number added to `turn_start`/`turn_end`.

Every event is a pydantic model with snake_case attributes and camelCase aliases (`WireModel`); its `type`
is the event name handlers subscribe to with `pi.on(name, handler)`. A handler may return a plain dict with
the camelCase (or snake_case) keys of the result model, the result model itself, or None. `parse_result`
turns either into the model named in `RESULT_TYPES`.

Messages inside events are `AgentMessage` values taken as given: the open message union ends in a Protocol,
which pydantic cannot validate, so those fields are typed precisely for checkers and `Any` at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias, TypeVar

from pydantic import ConfigDict, Field

from apex_agent.events import MessageField, MessageListField
from apex_ai._wire import WireModel
from apex_ai.types import ImageContent, Model, TextContent, Usage
from apex_coding_agent.events import EXTENSION_VISIBLE, AgentEvent, SessionEvent, TurnEndEvent, TurnStartEvent

if TYPE_CHECKING:
    OpaqueField: TypeAlias = Any
else:
    # Values owned by other layers (compaction preparation, session entries, abort signals): kept as given.
    OpaqueField = Annotated[Any, Field(default=None, exclude=True)]

SessionStartReason: TypeAlias = Literal["startup", "reload", "new", "resume", "fork"]
R = TypeVar("R", bound=WireModel)
ShutdownReason: TypeAlias = Literal["quit", "reload", "new", "resume", "fork"]
InputSource: TypeAlias = Literal["interactive", "rpc", "extension"]


class _DeferredWireModel(WireModel):
    """A wire model whose pydantic schema is built on first use, not at import.

    A print run without extensions meets only a few of the ~50 models below; building all of them costs
    tens of milliseconds on every start.
    """

    model_config = ConfigDict(defer_build=True)


class ExtensionEvent(_DeferredWireModel):
    """Base of every extension event; `type` is the event name."""

    type: str


# --------------------------------------------------------------------------- trust, resources, session


class ProjectTrustEvent(ExtensionEvent):
    type: Literal["project_trust"] = "project_trust"
    cwd: str


class ResourcesDiscoverEvent(ExtensionEvent):
    type: Literal["resources_discover"] = "resources_discover"
    cwd: str
    reason: Literal["startup", "reload"] = "startup"


class SessionStartEvent(ExtensionEvent):
    type: Literal["session_start"] = "session_start"
    reason: SessionStartReason = "startup"
    previous_session_file: str | None = None


class SessionBeforeSwitchEvent(ExtensionEvent):
    type: Literal["session_before_switch"] = "session_before_switch"
    reason: Literal["new", "resume"]
    target_session_file: str | None = None


class SessionBeforeForkEvent(ExtensionEvent):
    type: Literal["session_before_fork"] = "session_before_fork"
    entry_id: str
    position: Literal["before", "at"] = "before"


class SessionBeforeCompactEvent(ExtensionEvent):
    """Before compaction; `preparation`/`branch_entries`/`signal` are the runtime's objects."""

    type: Literal["session_before_compact"] = "session_before_compact"
    preparation: OpaqueField
    branch_entries: OpaqueField
    custom_instructions: str | None = None
    reason: str | None = None
    will_retry: bool = False
    signal: OpaqueField


class SessionCompactEvent(ExtensionEvent):
    type: Literal["session_compact"] = "session_compact"
    compaction_entry: OpaqueField
    from_extension: bool = False
    reason: str | None = None
    will_retry: bool = False


class SessionBeforeTreeEvent(ExtensionEvent):
    """Before tree navigation; `preparation` and `signal` are the runtime's objects."""

    type: Literal["session_before_tree"] = "session_before_tree"
    preparation: OpaqueField
    signal: OpaqueField


class SessionTreeEvent(ExtensionEvent):
    type: Literal["session_tree"] = "session_tree"
    new_leaf_id: str | None = None
    old_leaf_id: str | None = None
    summary_entry: OpaqueField
    from_extension: bool | None = None


class SessionShutdownEvent(ExtensionEvent):
    type: Literal["session_shutdown"] = "session_shutdown"
    reason: ShutdownReason = "quit"
    target_session_file: str | None = None


# --------------------------------------------------------------------------- input and the agent run


class InputEvent(ExtensionEvent):
    type: Literal["input"] = "input"
    text: str
    images: list[ImageContent] | None = None
    source: InputSource = "interactive"
    streaming_behavior: Literal["steer", "followUp"] | None = None


class SystemPromptOptions(WireModel):
    """What the system prompt was built from (`before_agent_start.systemPromptOptions`)."""

    custom_prompt: str | None = None
    selected_tools: list[str] = Field(default_factory=list)
    tool_snippets: dict[str, str] = Field(default_factory=dict)
    prompt_guidelines: list[str] = Field(default_factory=list)
    append_system_prompt: str | None = None
    cwd: str = ""
    context_files: list[dict[str, Any]] = Field(default_factory=list)  # Any: {path, content} JSON records
    skills: list[dict[str, Any]] = Field(default_factory=list)  # Any: skill summaries as JSON records


class BeforeAgentStartEvent(ExtensionEvent):
    type: Literal["before_agent_start"] = "before_agent_start"
    prompt: str
    images: list[ImageContent] | None = None
    system_prompt: str
    """The prompt as chained so far: each handler sees the previous handler's replacement."""
    system_prompt_options: SystemPromptOptions = Field(default_factory=SystemPromptOptions)


# --------------------------------------------------------------------------- the session's events, as handlers see them


class NumberedTurnStartEvent(TurnStartEvent):
    """`turn_start` as handlers see it: the turn's number within the run and when it started (epoch ms)."""

    turn_index: int
    timestamp: int


class NumberedTurnEndEvent(TurnEndEvent):
    """`turn_end` as handlers see it, with the turn's number within the run."""

    turn_index: int


_NUMBERED_VIEWS: dict[str, type[NumberedTurnStartEvent] | type[NumberedTurnEndEvent]] = {
    "turn_start": NumberedTurnStartEvent,
    "turn_end": NumberedTurnEndEvent,
}

HandlerEvent: TypeAlias = ExtensionEvent | SessionEvent | AgentEvent
"""What a handler receives: an extension event, or the view of a session (or agent) event."""


def extension_view(event: SessionEvent | AgentEvent, **numbering: int) -> HandlerEvent:
    """The event a handler receives for a session (or agent) event: a copy of the same class, its lists and dicts
    copied; `turn_start`/`turn_end` become their numbered views (`numbering`: `turn_index`, and `timestamp` for
    `turn_start`)."""
    # A handler may edit the lists and dicts it is given (`args`, `messages`): the session's own stay as they were;
    # messages and results inside them are shared, as with every listener. A pydantic model keeps its field values
    # in __dict__, read directly (with the copies inline) because this runs for every streamed delta.
    values: dict[str, Any] = {  # Any: the values of every field type
        name: list(value) if type(value) is list else dict(value) if type(value) is dict else value
        for name, value in event.__dict__.items()
    }
    view = _NUMBERED_VIEWS.get(event.type)
    if view is not None:
        return view(**values | numbering)
    return type(event)(**values)


class ContextEvent(ExtensionEvent):
    """Before each LLM call; `messages` is a deep copy the handler may freely change."""

    type: Literal["context"] = "context"
    messages: MessageListField = Field(default_factory=list)


class BeforeProviderHeadersEvent(ExtensionEvent):
    """Handlers mutate `headers` in place; a value set to None deletes that header."""

    type: Literal["before_provider_headers"] = "before_provider_headers"
    headers: dict[str, str | None] = Field(default_factory=dict)


class BeforeProviderRequestEvent(ExtensionEvent):
    type: Literal["before_provider_request"] = "before_provider_request"
    payload: Any = None  # Any: the provider's JSON request body


class AfterProviderResponseEvent(ExtensionEvent):
    type: Literal["after_provider_response"] = "after_provider_response"
    status: int
    headers: dict[str, str] = Field(default_factory=dict)


class ModelSelectEvent(ExtensionEvent):
    type: Literal["model_select"] = "model_select"
    model: Model
    previous_model: Model | None = None
    source: Literal["set", "cycle", "restore"] = "set"


class ThinkingLevelSelectEvent(ExtensionEvent):
    type: Literal["thinking_level_select"] = "thinking_level_select"
    level: str
    previous_level: str | None = None


class ToolCallEvent(ExtensionEvent):
    """After `tool_execution_start`, before execute. `input` is mutable and not re-validated afterwards."""

    type: Literal["tool_call"] = "tool_call"
    tool_name: str
    tool_call_id: str
    input: dict[str, Any] = Field(default_factory=dict)  # Any: tool arguments (JSON)


class ToolResultEvent(ExtensionEvent):
    type: Literal["tool_result"] = "tool_result"
    tool_name: str
    tool_call_id: str
    input: dict[str, Any] = Field(default_factory=dict)  # Any: tool arguments (JSON)
    content: list[TextContent | ImageContent] = Field(default_factory=list)
    details: Any = None  # Any: tool-defined JSON
    is_error: bool = False
    usage: Usage | None = None


class UserBashEvent(ExtensionEvent):
    type: Literal["user_bash"] = "user_bash"
    command: str
    exclude_from_context: bool = False
    cwd: str = ""


# --------------------------------------------------------------------------- results


class ProjectTrustResult(_DeferredWireModel):
    trusted: Literal["yes", "no", "undecided"] = "undecided"
    remember: bool = False


class ResourcesDiscoverResult(_DeferredWireModel):
    skill_paths: list[str] | None = None
    prompt_paths: list[str] | None = None
    theme_paths: list[str] | None = None


class CancelResult(_DeferredWireModel):
    """`{cancel}` of `session_before_switch`."""

    cancel: bool = False


class SessionBeforeForkResult(_DeferredWireModel):
    cancel: bool = False
    skip_conversation_restore: bool | None = None


class SessionBeforeCompactResult(_DeferredWireModel):
    cancel: bool = False
    compaction: dict[str, Any] | None = None  # Any: {summary, firstKeptEntryId, tokensBefore, usage?, details?}


class SessionBeforeTreeResult(_DeferredWireModel):
    cancel: bool = False
    summary: dict[str, Any] | None = None  # Any: {summary, details?, usage?}
    custom_instructions: str | None = None
    replace_instructions: bool | None = None
    label: str | None = None


class InputResult(_DeferredWireModel):
    action: Literal["continue", "transform", "handled"] = "continue"
    text: str | None = None
    images: list[ImageContent] | None = None


class InputRejectedError(RuntimeError):
    """Raised by an `input` handler to refuse the text: nothing is sent and the prompt fails with this message
    (print and JSON modes exit 1, RPC answers the prompt with an error, the app shows it as an error)."""


class CustomMessageInput(_DeferredWireModel):
    """A custom message as extensions hand it over (`send_message`, `before_agent_start.message`)."""

    custom_type: str
    content: str | list[TextContent | ImageContent]
    display: bool = True
    details: Any = None  # Any: extension-defined JSON


class BeforeAgentStartResult(_DeferredWireModel):
    message: CustomMessageInput | None = None
    system_prompt: str | None = None


class MessageEndResult(_DeferredWireModel):
    message: MessageField | None = None


class ContextResult(_DeferredWireModel):
    messages: MessageListField | None = None


class BeforeProviderRequestResult(_DeferredWireModel):
    """Not a handler shape: `before_provider_request` handlers return the new payload itself."""

    payload: Any = None  # Any: provider JSON body


class ToolCallResult(_DeferredWireModel):
    block: bool = False
    reason: str | None = None
    terminate: bool | None = None


class ToolResultPatch(_DeferredWireModel):
    """Partial patch of a tool result; fields left None stay as they were."""

    content: list[TextContent | ImageContent] | None = None
    details: Any = None  # Any: tool-defined JSON
    is_error: bool | None = None
    usage: Usage | None = None


class UserBashResult(_DeferredWireModel):
    operations: Any = None  # Any: replacement BashOperations object of the tools layer
    result: dict[str, Any] | None = None  # Any: BashResult {output, exitCode, cancelled, truncated, ...}


class ExtensionErrorEvent(_DeferredWireModel):
    """`{"type":"extension_error","extensionPath","event","error"}`; `stack` stays local."""

    type: Literal["extension_error"] = "extension_error"
    extension_path: str
    event: str
    error: str
    stack: str | None = Field(default=None, exclude=True)


RESULT_TYPES: dict[str, type[WireModel]] = {
    "project_trust": ProjectTrustResult,
    "resources_discover": ResourcesDiscoverResult,
    "session_before_switch": CancelResult,
    "session_before_fork": SessionBeforeForkResult,
    "session_before_compact": SessionBeforeCompactResult,
    "session_before_tree": SessionBeforeTreeResult,
    "input": InputResult,
    "before_agent_start": BeforeAgentStartResult,
    "message_end": MessageEndResult,
    "context": ContextResult,
    "tool_call": ToolCallResult,
    "tool_result": ToolResultPatch,
    "user_bash": UserBashResult,
}
"""Event name -> result model, for the events whose handler results mean something."""


def _event_types(base: type[ExtensionEvent]) -> set[str]:
    out: set[str] = set()
    for cls in base.__subclasses__():
        out.add(cls.model_fields["type"].default)
        out |= _event_types(cls)
    return out


EVENT_NAMES: frozenset[str] = frozenset(_event_types(ExtensionEvent)) | EXTENSION_VISIBLE
"""Every event a handler may subscribe to: the extension events defined here and the session events it sees."""


def parse_result(result_type: type[R], value: object) -> R | None:
    """`value` (None, a dict with camelCase or snake_case keys, or an `R`) as an `R`; raises on a bad shape."""
    if value is None:
        return None
    if isinstance(value, result_type):
        return value
    if isinstance(value, WireModel):
        return result_type.model_validate(value.model_dump())
    return result_type.model_validate(value)
