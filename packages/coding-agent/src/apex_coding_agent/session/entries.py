"""Session file records: the header and every entry type.

Wire names are camelCase (`parentId`, `firstKeptEntryId`), Python attributes snake_case (`parent_id`). Every entry
starts with `type`, `id`, `parentId`, `timestamp` in that order, which lets the loader read those four fields from a
line without parsing the rest (see `scanner`). `parentId` is always written (`null` for a root); other unset
optionals are left out. Unknown entry types and unknown fields are kept (`extra="allow"`).
"""

from __future__ import annotations

import uuid
from collections.abc import Container, Mapping
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeAlias, Union, get_args, get_origin

from pydantic import BaseModel, Field, GetCoreSchemaHandler, TypeAdapter, ValidationError
from pydantic_core import CoreSchema, core_schema

from apex_agent.messages import AgentMessage, UnknownMessage, dump_message
from apex_ai._wire import WireModel, json_text
from apex_ai.types import (
    AssistantMessage,
    SystemMessage,
    ToolResultMessage,
    Usage,
    UserContent,
    UserMessage,
)
from apex_coding_agent.messages import CODING_AGENT_ROLES, coding_agent_registry

CURRENT_SESSION_VERSION = 3
_CONTENT_ROLES = frozenset({"user", "assistant", "toolResult"})


def iso_now() -> str:
    """Current UTC time as `2024-12-03T14:00:00.000Z` (the format of header and entry timestamps)."""
    return iso_from_datetime(datetime.now(UTC))


def iso_from_datetime(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def iso_to_ms(text: str) -> int:
    """Unix ms of an ISO timestamp (entry timestamps -> message timestamps); 0 when unparsable."""
    try:
        return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return 0


def new_entry_id(existing: Container[str]) -> str:
    """8 lowercase hex chars, unique within `existing` (100 tries, then a full UUID)."""
    for _ in range(100):
        candidate = uuid.uuid4().hex[:8]
        if candidate not in existing:
            return candidate
    return str(uuid.uuid4())


def parse_agent_message(value: object) -> object:
    """Parse a stored message through the coding agent's registry.

    `user`/`assistant`/`toolResult` with `content: null` or missing get `[]`. A message of a known role that fails
    validation is kept as an `UnknownMessage` (its line on disk is never rewritten, so nothing is lost).
    """
    if isinstance(value, BaseModel):
        return value
    if not isinstance(value, Mapping):
        raise ValueError("message must be an object")
    data = dict(value)
    if data.get("role") in _CONTENT_ROLES and data.get("content") is None:
        data["content"] = []
    try:
        return coding_agent_registry.parse(data)
    except ValidationError:
        return UnknownMessage.model_validate(data)


def _dump_agent_message(value: object) -> object:
    if isinstance(value, BaseModel):
        # AgentMessage includes a Protocol; every concrete message is a pydantic model.
        return dump_message(value)  # type: ignore[arg-type]
    return value


class _StoredMessageSchema:
    """The validation schema of a stored message: the known roles first, the registry as the fallback.

    A message of a role whose model is fixed at import (the four provider roles and the coding agent's roles, as
    `coding_agent_registry` holds them) is validated by a union tagged on `role`, which pydantic resolves straight
    from JSON text (`model_validate_json`) without building Python dicts first. Anything that union rejects (a
    role registered later by an extension, an unknown role, `content: null`, a malformed known role) is handed to
    `parse_agent_message` as before, so both paths give the same message for every input the tagged union accepts
    and the registry's answer for every other input.
    """

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        # `source` is `Any` (see StoredMessage); the schema is built from the models themselves.
        models = tuple(model for model in map(_model_for, _KNOWN_ROLES) if model is not None)
        # A Union of models known only at run time (`X | Y` needs them spelled out).
        fast = handler.generate_schema(Annotated[Union[models], Field(discriminator="role")])  # noqa: UP007
        lenient = core_schema.no_info_before_validator_function(parse_agent_message, core_schema.any_schema())
        return core_schema.union_schema(
            [fast, lenient],
            mode="left_to_right",
            serialization=core_schema.plain_serializer_function_ser_schema(_dump_agent_message, when_used="always"),
        )


_KNOWN_ROLES = ("system", "user", "assistant", "toolResult", *CODING_AGENT_ROLES)


def _model_for(role: str) -> type[BaseModel] | None:
    """The model `coding_agent_registry.parse` validates `role` with, if that role's field is `Literal[role]`
    (what a union tagged on `role` needs); None leaves the role to the registry fallback."""
    model = _BASE_MODELS.get(role) or coding_agent_registry.model_for(role)
    if model is None:
        return None
    field = model.model_fields.get("role")
    if field is None or get_origin(field.annotation) is not Literal or get_args(field.annotation) != (role,):
        return None
    return model


_BASE_MODELS: dict[str, type[BaseModel]] = {
    "system": SystemMessage,
    "user": UserMessage,
    "assistant": AssistantMessage,
    "toolResult": ToolResultMessage,
}

# `Any` because AgentMessage contains a Protocol pydantic cannot build a schema for; the schema makes it a model.
StoredMessage: TypeAlias = Annotated[Any, _StoredMessageSchema()]


class SessionHeader(WireModel):
    """First line of a session file; not part of the entry tree."""

    type: Literal["session"] = "session"
    version: int | None = None
    id: str
    timestamp: str
    cwd: str | None = None
    parent_session: str | None = None
    delegation_depth: int | None = None


class EntryBase(WireModel):
    """Fields every entry has. `parent_id` is required but nullable, so `parentId: null` is always written."""

    type: str
    id: str
    parent_id: str | None
    timestamp: str


class MessageEntry(EntryBase):
    type: Literal["message"] = "message"
    message: StoredMessage

    @property
    def agent_message(self) -> AgentMessage:
        # The validator guarantees a parsed message model.
        msg: AgentMessage = self.message
        return msg


class ModelChangeEntry(EntryBase):
    type: Literal["model_change"] = "model_change"
    provider: str
    model_id: str


class ThinkingLevelChangeEntry(EntryBase):
    type: Literal["thinking_level_change"] = "thinking_level_change"
    thinking_level: str


class CompactionEntry(EntryBase):
    type: Literal["compaction"] = "compaction"
    summary: str
    first_kept_entry_id: str | None = None
    tokens_before: int = 0
    retained_tail: list[StoredMessage] | None = None
    # Summary-producer defined (built-ins: {"readFiles": [...], "modifiedFiles": [...]}).
    details: Any = None
    usage: Usage | None = None
    from_hook: bool | None = None
    # Apex bookkeeping, absent from files written by the original product (and then never written back):
    # what started the compaction ("manual" | "threshold" | "overflow"), the estimated context size once applied,
    # and the summarizer as `provider/id`. Typed loosely so a foreign writer's values still load as a compaction.
    trigger: str | None = None
    tokens_after: int | None = None
    model: str | None = None


class BranchSummaryEntry(EntryBase):
    type: Literal["branch_summary"] = "branch_summary"
    from_id: str | None = None
    summary: str
    # Summary-producer defined, like CompactionEntry.details.
    details: Any = None
    usage: Usage | None = None
    from_hook: bool | None = None


class CustomEntry(EntryBase):
    """Extension state; never part of model context."""

    type: Literal["custom"] = "custom"
    custom_type: str
    # Extension-defined JSON value.
    data: Any = None


class CustomMessageEntry(EntryBase):
    """An extension message that joins model context as a `custom` message."""

    type: Literal["custom_message"] = "custom_message"
    custom_type: str
    content: str | list[UserContent]
    display: bool = True
    # Extension-defined JSON value; never sent to the model.
    details: Any = None


class LabelEntry(EntryBase):
    type: Literal["label"] = "label"
    target_id: str
    label: str | None = None


class SessionInfoEntry(EntryBase):
    type: Literal["session_info"] = "session_info"
    name: str | None = None


class EvidenceEntry(EntryBase):
    """Apex audit record of a tool's evidence; carried, not interpreted."""

    type: Literal["evidence"] = "evidence"
    tool_name: str | None = None
    # Tool-defined audit records.
    records: Any = None


class EvidenceDiagnosticEntry(EntryBase):
    type: Literal["evidence_diagnostic"] = "evidence_diagnostic"
    tool_name: str | None = None
    # Tool-defined diagnostic payload.
    diagnostic: Any = None


class UnknownEntry(EntryBase):
    """An entry of a type this version does not know (or one whose line failed to validate): kept as is."""


KnownEntry: TypeAlias = Annotated[
    MessageEntry
    | ModelChangeEntry
    | ThinkingLevelChangeEntry
    | CompactionEntry
    | BranchSummaryEntry
    | CustomEntry
    | CustomMessageEntry
    | LabelEntry
    | SessionInfoEntry
    | EvidenceEntry
    | EvidenceDiagnosticEntry,
    Field(discriminator="type"),
]
KnownEntryAdapter: TypeAdapter[EntryBase] = TypeAdapter(KnownEntry)

ENTRY_TYPES: dict[str, type[EntryBase]] = {
    "message": MessageEntry,
    "model_change": ModelChangeEntry,
    "thinking_level_change": ThinkingLevelChangeEntry,
    "compaction": CompactionEntry,
    "branch_summary": BranchSummaryEntry,
    "custom": CustomEntry,
    "custom_message": CustomMessageEntry,
    "label": LabelEntry,
    "session_info": SessionInfoEntry,
    "evidence": EvidenceEntry,
    "evidence_diagnostic": EvidenceDiagnosticEntry,
}


def parse_entry(data: Mapping[str, Any]) -> EntryBase:
    """Validate one entry dict: its known type's model, else `UnknownEntry`. Raises ValidationError when the
    base fields themselves are malformed."""
    kind = data.get("type")
    model = ENTRY_TYPES.get(kind, UnknownEntry) if isinstance(kind, str) else UnknownEntry
    return model.model_validate(data)


def parse_header(data: object) -> SessionHeader | None:
    """The header if `data` is `{"type": "session", "id": <str>, ...}`, else None."""
    if not isinstance(data, dict) or data.get("type") != "session" or not isinstance(data.get("id"), str):
        return None
    try:
        return SessionHeader.model_validate(data)
    except ValidationError:
        return None


def dump_line(record: WireModel) -> bytes:
    """One compact JSON line (with its `\\n`) for a header or entry."""
    return record.to_json().encode("utf-8") + b"\n"


def dump_dict_line(data: Mapping[str, Any]) -> bytes:
    """One compact JSON line for a raw dict (migrations), non-ASCII kept as UTF-8, lone surrogates escaped."""
    return json_text(data).encode("utf-8") + b"\n"


__all__ = [
    "CURRENT_SESSION_VERSION",
    "ENTRY_TYPES",
    "BranchSummaryEntry",
    "CompactionEntry",
    "CustomEntry",
    "CustomMessageEntry",
    "EntryBase",
    "EvidenceDiagnosticEntry",
    "EvidenceEntry",
    "KnownEntry",
    "KnownEntryAdapter",
    "LabelEntry",
    "MessageEntry",
    "ModelChangeEntry",
    "SessionHeader",
    "SessionInfoEntry",
    "StoredMessage",
    "ThinkingLevelChangeEntry",
    "UnknownEntry",
    "dump_dict_line",
    "dump_line",
    "iso_from_datetime",
    "iso_now",
    "iso_to_ms",
    "new_entry_id",
    "parse_agent_message",
    "parse_entry",
    "parse_header",
]
