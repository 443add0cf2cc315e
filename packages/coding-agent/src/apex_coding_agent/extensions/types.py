"""Records of what extensions register: tools, commands, shortcuts, flags, renderers, providers.

An `Extension` is one loaded module (or inline factory) with everything its factory registered, in
registration order. `ExtensionRuntime` (in `api.py`) holds what all extensions share.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel

from apex_agent.tools import AgentTool, AgentToolResult, ExecutionMode, ToolUpdateCallback
from apex_ai.abort import AbortSignal
from apex_coding_agent.resources.diagnostics import SourceInfo

Handler: TypeAlias = Callable[[Any, Any], Any]
"""`(event, ctx) -> result | Awaitable[result]`; Any: events and contexts of every kind, results of any shape."""

CommandHandler: TypeAlias = Callable[[str, Any], "Awaitable[None] | None"]
"""`(args, ctx)` where ctx is an `ExtensionCommandContext` (Any: defined in context.py, which imports this)."""

ShortcutHandler: TypeAlias = Callable[[Any], "Awaitable[None] | None"]
"""`(ctx)` where ctx is an `ExtensionContext`."""

ToolExecute: TypeAlias = Callable[
    [str, dict[str, Any], AbortSignal | None, ToolUpdateCallback | None, Any],
    Awaitable["AgentToolResult | dict[str, Any] | str"],
]
"""`async (tool_call_id, params, signal, on_update, ctx)`; returns an `AgentToolResult`, a `{content, details}`
dict, or plain text. Raise to fail the call. Any: params are JSON values; ctx is an `ExtensionContext`."""

FlagType: TypeAlias = Literal["boolean", "string"]
FlagValue: TypeAlias = bool | str


@dataclass
class ToolDefinition:
    """A tool as an extension declares it; the runner wraps it into an `AgentTool` whose execute gets a `ctx`.

    `parameters` is a JSON schema dict or a pydantic model class (its JSON schema is sent to the model).
    """

    name: str
    description: str
    execute: ToolExecute
    parameters: dict[str, Any] | type[BaseModel] = field(  # Any: JSON schema
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    label: str = ""
    prompt_snippet: str | None = None
    """One line for the system prompt's tool list; without it the tool is left out of that list."""
    prompt_guidelines: list[str] = field(default_factory=list)
    execution_mode: ExecutionMode | None = None
    render_call: Callable[..., Any] | None = None  # Any: TUI renderer signature, owned by the TUI
    render_result: Callable[..., Any] | None = None  # Any: TUI renderer signature, owned by the TUI


@dataclass
class RegisteredTool:
    definition: ToolDefinition | AgentTool
    extension_path: str

    @property
    def name(self) -> str:
        return self.definition.name


@dataclass
class RegisteredCommand:
    name: str
    handler: CommandHandler
    extension_path: str
    source_info: SourceInfo
    description: str | None = None
    get_argument_completions: Callable[[str], Any] | None = None  # Any: list of completion items or awaitable
    invocation_name: str = ""
    """Unique name used to invoke it: `name`, or `name:N` when several extensions register `name`."""


@dataclass
class RegisteredShortcut:
    key: str
    handler: ShortcutHandler
    extension_path: str
    description: str | None = None


@dataclass
class RegisteredFlag:
    name: str
    type: FlagType
    extension_path: str
    default: FlagValue | None = None
    description: str | None = None


@dataclass
class ProviderRegistration:
    """A queued `register_provider` (config set) or `unregister_provider` (config None)."""

    name: str
    config: dict[str, Any] | None  # Any: provider config JSON (models, baseUrl, api, apiKey, headers, compat)
    extension_path: str


@dataclass
class Extension:
    """One loaded extension and its registrations (dicts keep registration order)."""

    path: str
    """As shown to users: the file path, or `<inline:N>` / the inline name."""
    resolved_path: str
    source_info: SourceInfo
    hidden: bool = False
    handlers: dict[str, list[Handler]] = field(default_factory=dict)
    tools: dict[str, RegisteredTool] = field(default_factory=dict)
    commands: dict[str, RegisteredCommand] = field(default_factory=dict)
    shortcuts: dict[str, RegisteredShortcut] = field(default_factory=dict)
    flags: dict[str, RegisteredFlag] = field(default_factory=dict)
    message_renderers: dict[str, Callable[..., Any]] = field(default_factory=dict)  # Any: TUI renderers
    entry_renderers: dict[str, Callable[..., Any]] = field(default_factory=dict)  # Any: TUI renderers
    markdown_transformers: list[Callable[[str], str]] = field(default_factory=list)

    @classmethod
    def create(cls, path: str, source_info: SourceInfo | None = None, *, hidden: bool = False) -> Extension:
        info = source_info or SourceInfo(Path(path), "local", "temporary")
        return cls(path=path, resolved_path=path, source_info=info, hidden=hidden)


__all__ = [
    "CommandHandler",
    "Extension",
    "FlagType",
    "FlagValue",
    "Handler",
    "ProviderRegistration",
    "RegisteredCommand",
    "RegisteredFlag",
    "RegisteredShortcut",
    "RegisteredTool",
    "ShortcutHandler",
    "ToolDefinition",
    "ToolExecute",
]
