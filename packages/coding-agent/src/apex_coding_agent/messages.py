"""The coding agent's own message roles and its `convert_to_llm`.

Four roles extend `AgentMessage`: `bashExecution` (a `!` command the user ran), `custom` (an extension's context
message), `branchSummary` and `compactionSummary` (projections of the session entries of the same name; never
stored as `message` entries). Importing this module registers them in apex_agent's process-wide `default_registry`
(the agent layer's convention: hosts register their roles there once, at import time).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from apex_agent.messages import AgentMessage, MessageRegistry, default_registry
from apex_ai._wire import WireModel
from apex_ai.types import (
    AssistantMessage,
    ImageContent,
    Message,
    SystemMessage,
    TextContent,
    ToolResultMessage,
    UserContent,
    UserMessage,
)

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUMMARY_SUFFIX = "</summary>"


class BashExecutionMessage(WireModel):
    """A shell command the user ran directly (`!cmd`, RPC `bash`); not a tool result."""

    role: Literal["bashExecution"] = "bashExecution"
    command: str
    output: str = ""
    exit_code: int | None = None
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = None
    exclude_from_context: bool | None = None
    timestamp: int


class CustomMessage(WireModel):
    """An extension's context message; `display` steers rendering, `details` never reaches the model."""

    role: Literal["custom"] = "custom"
    custom_type: str
    content: str | list[UserContent]
    display: bool = True
    # Extension-defined payload: any JSON value.
    details: Any = None
    timestamp: int


class BranchSummaryMessage(WireModel):
    """Context projection of a `branch_summary` entry. `fromId` is required but nullable (always written)."""

    role: Literal["branchSummary"] = "branchSummary"
    summary: str
    from_id: str | None
    timestamp: int


class CompactionSummaryMessage(WireModel):
    """Context projection of a `compaction` entry."""

    role: Literal["compactionSummary"] = "compactionSummary"
    summary: str
    tokens_before: int
    timestamp: int


CODING_AGENT_ROLES: dict[str, type[WireModel]] = {
    "bashExecution": BashExecutionMessage,
    "custom": CustomMessage,
    "branchSummary": BranchSummaryMessage,
    "compactionSummary": CompactionSummaryMessage,
}


def register_roles(registry: MessageRegistry) -> MessageRegistry:
    """Register the four coding-agent roles in `registry` (skipping roles it already has); returns it."""
    for role, model in CODING_AGENT_ROLES.items():
        if not registry.is_registered(role):
            registry.register(role, model)
    return registry


coding_agent_registry = register_roles(default_registry)
"""The registry session files and the coding agent parse messages with (apex_agent's default registry)."""


def bash_execution_to_text(msg: BashExecutionMessage) -> str:
    """The user text a bash execution becomes for the model."""
    text = f"Ran `{msg.command}`\n"
    text += f"```\n{msg.output}\n```" if msg.output else "(no output)"
    if msg.cancelled:
        text += "\n\n(command cancelled)"
    elif msg.exit_code is not None and msg.exit_code != 0:
        text += f"\n\nCommand exited with code {msg.exit_code}"
    if msg.truncated and msg.full_output_path:
        text += f"\n\n[Output truncated. Full output: {msg.full_output_path}]"
    return text


def _user_text(text: str, timestamp: int) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=timestamp)


def _custom_content(content: str | list[TextContent | ImageContent]) -> list[TextContent | ImageContent]:
    return [TextContent(text=content)] if isinstance(content, str) else list(content)


def _convert_one(msg: AgentMessage) -> Message | None:
    if isinstance(msg, UserMessage | AssistantMessage | ToolResultMessage):
        return msg
    if isinstance(msg, BashExecutionMessage):
        return None if msg.exclude_from_context else _user_text(bash_execution_to_text(msg), msg.timestamp)
    if isinstance(msg, CustomMessage):
        return UserMessage(content=_custom_content(msg.content), timestamp=msg.timestamp)
    if isinstance(msg, BranchSummaryMessage):
        return _user_text(BRANCH_SUMMARY_PREFIX + msg.summary + BRANCH_SUMMARY_SUFFIX, msg.timestamp)
    if isinstance(msg, CompactionSummaryMessage):
        return _user_text(COMPACTION_SUMMARY_PREFIX + msg.summary + COMPACTION_SUMMARY_SUFFIX, msg.timestamp)
    # system: the coding agent sends its freshly built prompt instead; unknown roles are dropped.
    return None


def convert_to_llm(messages: Iterable[AgentMessage]) -> list[Message]:
    """Project coding-agent messages to provider messages. Never raises: a message that
    cannot be converted is dropped."""
    result: list[Message] = []
    for msg in messages:
        try:
            converted = _convert_one(msg)
        except Exception:  # the contract is "never raise"; a broken message is left out
            converted = None
        if converted is not None:
            result.append(converted)
    return result


def is_system_message(msg: AgentMessage) -> bool:
    """True for `system` messages (filtered out when the coding agent rebuilds its transcript)."""
    return isinstance(msg, SystemMessage)


__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "CODING_AGENT_ROLES",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "BashExecutionMessage",
    "BranchSummaryMessage",
    "CompactionSummaryMessage",
    "CustomMessage",
    "bash_execution_to_text",
    "coding_agent_registry",
    "convert_to_llm",
    "is_system_message",
    "register_roles",
]
