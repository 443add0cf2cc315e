"""System-message replay: the current prompt and tool list of a transcript.

The leading system message of a transcript declares the initial prompt and tools; later system
messages are deltas (append text, set or delete named sections, add or remove tools) or, with
`replace=True`, a new baseline. Replaying them in order gives the current state. Every function
that takes messages ignores non-system roles, so lists of agent messages (custom roles included)
work as well as provider `Message` lists.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import NamedTuple, Protocol, TypeVar

from pydantic import BaseModel

from apex_ai.types import Context, Message, SystemMessage, Tool, ToolReference


class _HasRole(Protocol):
    @property
    def role(self) -> str: ...


M = TypeVar("M", bound=_HasRole)


def content_text(content: str | Sequence[object] | None) -> str:
    """The text of message content: a string as is, else its text blocks joined by `\\n` (images skipped)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if getattr(block, "type", None) == "text":
            parts.append(str(getattr(block, "text", "")))
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "\n".join(parts)


def _as_system(message: _HasRole) -> SystemMessage:
    if isinstance(message, SystemMessage):
        return message
    # A host may carry system messages in its own model class; read it through the wire shape.
    if isinstance(message, BaseModel):
        return SystemMessage.model_validate(message.model_dump(by_alias=True))
    return SystemMessage.model_validate(message)


def _system_messages(messages: Iterable[_HasRole]) -> Iterable[SystemMessage]:
    return (_as_system(m) for m in messages if m.role == "system")


def _replay(messages: Iterable[_HasRole]) -> tuple[bool, list[str], dict[str, str], dict[str, Tool], int | None]:
    content: list[str] = []
    sections: dict[str, str] = {}
    tools: dict[str, Tool] = {}
    timestamp: int | None = None
    seen = False
    for message in _system_messages(messages):
        if message.replace:
            content, sections, tools, timestamp = [], {}, {}, None
        seen = True
        if timestamp is None:
            timestamp = message.timestamp
        if text := content_text(message.content):
            content.append(text)
        for name, value in (message.sections or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value  # assignment to an existing key keeps its position
        # Removals before additions: removing and re-adding a tool in one delta moves it to the end.
        for ref in message.tools_removed or []:
            tools.pop(ref.name, None)
        for tool in message.tools_added or []:
            tools[tool.name] = tool
    return seen, content, sections, tools, timestamp


def current_system_message(messages: Iterable[_HasRole]) -> SystemMessage | None:
    """Replay every system message in order into one baseline message; None if there is none.

    The result has the accumulated `content` (non-empty texts joined by a blank line), the live
    `sections` (in first-set order) and the current tools as `tools_added`; its timestamp is the
    one of the first system message since the last `replace`.
    """
    seen, content, sections, tools, timestamp = _replay(messages)
    if not seen and not tools:
        return None
    return SystemMessage(
        content="\n\n".join(content),
        sections=dict[str, str | None](sections) or None,
        tools_added=list(tools.values()) or None,
        timestamp=timestamp or 0,
    )


def current_tools(messages: Iterable[_HasRole]) -> list[Tool]:
    """The tools declared by replaying the system messages, in declaration order."""
    return list(_replay(messages)[3].values())


def render_system_prompt(system_message: SystemMessage | None) -> str:
    """The prompt text a provider receives: content, then each non-empty section value, joined by a blank line."""
    if system_message is None:
        return ""
    parts = [content_text(system_message.content)]
    parts.extend(value for value in (system_message.sections or {}).values() if value)
    return "\n\n".join(part for part in parts if part)


def collapse_system_messages(messages: Sequence[M]) -> list[M | SystemMessage]:
    """`[current system message] + the non-system messages`, in order (no leading message if there is none)."""
    rest: list[M | SystemMessage] = [m for m in messages if m.role != "system"]
    current = current_system_message(messages)
    return rest if current is None else [current, *rest]


def initial_system_message(prompt: str | None, tools: Sequence[Tool] | None) -> SystemMessage | None:
    """The leading system message for a prompt and tool list; None when both are empty."""
    if not prompt and not tools:
        return None
    return SystemMessage(content=prompt or "", tools_added=list(tools) if tools else None, timestamp=0)


def normalize_context(context: Context) -> Context:
    """Fold `context.system_prompt` and `context.tools` into a leading system message.

    Only when the messages hold no system message: otherwise the transcript is authoritative and
    the two fields are ignored. The returned context (a new object; the input is not changed)
    always has `system_prompt` and `tools` unset, so the messages alone carry the state.
    """
    messages: list[Message] = list(context.messages)
    if not any(m.role == "system" for m in messages):
        initial = initial_system_message(context.system_prompt, context.tools)
        if initial is not None:
            messages.insert(0, initial)
    return Context(messages=messages)


def system_prompt_and_tools(context: Context) -> tuple[str, list[Tool]]:
    """What a v1 adapter sends as the one prompt and tool list of a request (normalize, then collapse).

    Adapters send the non-system messages of `context.messages` after this; later system
    messages never reach the wire on their own.
    """
    current = current_system_message(normalize_context(context).messages)
    if current is None:
        return "", []
    return render_system_prompt(current), list(current.tools_added or [])


class ToolStateChanges(NamedTuple):
    """A system-message delta turning one tool list into another."""

    tools_added: list[Tool]
    tools_removed: list[ToolReference]


def _tool_key(tool: Tool) -> str:
    # Key order inside a schema carries no meaning, so sort it out of the comparison.
    return json.dumps(
        {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
        sort_keys=True,
        default=str,
    )


def tool_state_changes(prev: Sequence[Tool], cur: Sequence[Tool]) -> ToolStateChanges:
    """The delta from `prev` to `cur`: added = new or changed tools (in `cur` order), removed = gone or changed
    tools (in `prev` order). A changed definition is both removed and added."""
    before = {tool.name: _tool_key(tool) for tool in prev}
    after = {tool.name: _tool_key(tool) for tool in cur}
    added = [tool for tool in cur if before.get(tool.name) != after[tool.name]]
    removed = [ToolReference(name=tool.name) for tool in prev if after.get(tool.name) != before[tool.name]]
    return ToolStateChanges(tools_added=added, tools_removed=removed)


__all__ = [
    "ToolStateChanges",
    "collapse_system_messages",
    "content_text",
    "current_system_message",
    "current_tools",
    "initial_system_message",
    "normalize_context",
    "render_system_prompt",
    "system_prompt_and_tools",
    "tool_state_changes",
]
