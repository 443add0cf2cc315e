"""The `AgentMessage` union and its registry of custom roles.

TypeScript widens the message union by declaration merging; here a `MessageRegistry` maps extra
roles to pydantic models. `parse` tries the four provider roles, then registered roles, and keeps
anything else as an `UnknownMessage`, which round-trips unchanged: a host must tolerate roles it
does not know (a session file written by a richer host, say).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeAlias

from pydantic import BaseModel

from apex_ai._wire import WireModel
from apex_ai.types import (
    AssistantMessage,
    Message,
    MessageAdapter,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)

BASE_ROLES = frozenset({"system", "user", "assistant", "toolResult"})


class CustomAgentMessage(Protocol):
    """What every message of a registered role offers: a `role` tag and a ms `timestamp`."""

    @property
    def role(self) -> str: ...

    @property
    def timestamp(self) -> int: ...


class UnknownMessage(WireModel):
    """A message of a role nobody registered; every field is kept as given (`extra="allow"`)."""

    role: str
    timestamp: int


AgentMessage: TypeAlias = (
    SystemMessage | UserMessage | AssistantMessage | ToolResultMessage | UnknownMessage | CustomAgentMessage
)
"""Any message the agent keeps in its transcript: provider messages, registered roles, unknown roles."""


class MessageRegistry:
    """Role -> model table for messages beyond the four provider roles."""

    def __init__(self) -> None:
        self._models: dict[str, type[BaseModel]] = {}

    def register(self, role: str, model: type[BaseModel]) -> None:
        """Add a role. `model` declares `role: Literal[role]`; a base or already registered role is a ValueError."""
        if role in BASE_ROLES or role in self._models:
            raise ValueError(f"Message role already registered: {role}")
        if "role" not in model.model_fields:
            raise ValueError(f"Message model {model.__name__} has no 'role' field")
        self._models[role] = model

    def is_registered(self, role: str) -> bool:
        """True for the base roles and every registered role."""
        return role in BASE_ROLES or role in self._models

    def model_for(self, role: str) -> type[BaseModel] | None:
        """The model registered for `role` (None for base and unknown roles)."""
        return self._models.get(role)

    def copy(self) -> MessageRegistry:
        """A new registry with the same roles; later registrations do not affect this one."""
        clone = MessageRegistry()
        clone._models = dict(self._models)
        return clone

    def parse(self, data: Mapping[str, Any]) -> AgentMessage:
        """Validate one message dict. Raises pydantic's ValidationError for a malformed known role."""
        role = data.get("role")
        if role in BASE_ROLES:
            return MessageAdapter.validate_python(data)
        model = self._models.get(role) if isinstance(role, str) else None
        if model is not None:
            # Registered models are host classes; the registry only knows they carry role and timestamp.
            parsed: Any = model.model_validate(data)
            return parsed  # type: ignore[no-any-return]
        return UnknownMessage.model_validate(data)

    def parse_many(self, items: Iterable[Mapping[str, Any]]) -> list[AgentMessage]:
        return [self.parse(item) for item in items]

    def dump(self, msg: AgentMessage) -> dict[str, Any]:
        """The JSON-ready dict of a message (camelCase, unset optionals left out)."""
        return dump_message(msg)

    def dump_many(self, messages: Iterable[AgentMessage]) -> list[dict[str, Any]]:
        return [dump_message(m) for m in messages]


def dump_message(msg: AgentMessage) -> dict[str, Any]:
    """Dump any message model: `WireModel.to_wire` keeps required nulls (`fromId: null`), other models
    are dumped by alias without None values."""
    if isinstance(msg, WireModel):
        return msg.to_wire()
    if isinstance(msg, BaseModel):
        return msg.model_dump(mode="json", by_alias=True, exclude_none=True)
    raise TypeError(f"Not a message model: {type(msg).__name__}")


def is_llm_message(msg: AgentMessage) -> bool:
    """True for the four provider roles (what a provider can be sent)."""
    return isinstance(msg, SystemMessage | UserMessage | AssistantMessage | ToolResultMessage)


def default_convert_to_llm(messages: Iterable[AgentMessage]) -> list[Message]:
    """Keep system/user/assistant/toolResult messages, drop every other role. Never raises."""
    return [m for m in messages if isinstance(m, SystemMessage | UserMessage | AssistantMessage | ToolResultMessage)]


default_registry = MessageRegistry()
"""The process-wide registry; hosts register their roles here once at import time."""

__all__ = [
    "BASE_ROLES",
    "AgentMessage",
    "CustomAgentMessage",
    "MessageRegistry",
    "UnknownMessage",
    "default_convert_to_llm",
    "default_registry",
    "dump_message",
    "is_llm_message",
]
