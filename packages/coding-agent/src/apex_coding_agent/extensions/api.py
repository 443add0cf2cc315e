"""`pi`, the `ExtensionAPI` handed to each extension's `extension(pi)` factory.

Registration methods (`on`, `register_*`) record into that extension's `Extension`. Action methods
(`send_message`, `set_model`, ...) delegate to the `SessionBinding` the host binds into the shared
`ExtensionRuntime`; before binding they raise `ExtensionNotBoundError`. Provider registrations are queued
until `ExtensionRuntime.flush_providers(target)` (after every factory ran), then apply immediately. The target is
the session's `ModelRuntime` (configs parsed like models.json entries, kept across its `reload()`) or a bare
`ModelRegistry`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

from apex_agent.tools import AgentTool
from apex_ai.abort import AbortSignal
from apex_ai.models import ModelRegistry
from apex_ai.types import ImageContent, Model, TextContent
from apex_coding_agent.core.model_runtime import ModelRuntime, parse_extension_provider
from apex_coding_agent.extensions.bindings import DeliverAs, ExtensionNotBoundError, RuntimeActions, SessionBinding
from apex_coding_agent.extensions.events import EVENT_NAMES, CustomMessageInput
from apex_coding_agent.extensions.exec_command import ExecResult, exec_command
from apex_coding_agent.extensions.types import (
    CommandHandler,
    Extension,
    FlagType,
    FlagValue,
    Handler,
    ProviderRegistration,
    RegisteredCommand,
    RegisteredFlag,
    RegisteredShortcut,
    RegisteredTool,
    ShortcutHandler,
    ToolDefinition,
)

F = TypeVar("F", bound=Callable[..., Any])
ErrorReporter = Callable[[str, str, BaseException], None]
"""`(extension_path, event, error)`: where failures of fire-and-forget work are reported."""


class EventBus:
    """`pi.events`: a channel -> listeners bus shared by all extensions (for extension-to-extension messages)."""

    def __init__(self, report: ErrorReporter | None = None) -> None:
        self._listeners: dict[str, list[Callable[[Any], Any]]] = {}  # Any: payloads are extension-defined
        self._report = report
        self._tasks: set[asyncio.Task[Any]] = set()

    def on(self, channel: str, listener: Callable[[Any], Any]) -> Callable[[], None]:
        """Listen on `channel`; returns an unsubscribe function."""
        self._listeners.setdefault(channel, []).append(listener)

        def unsubscribe() -> None:
            listeners = self._listeners.get(channel, [])
            if listener in listeners:
                listeners.remove(listener)

        return unsubscribe

    def emit(self, channel: str, data: Any = None) -> None:  # Any: extension-defined payload
        """Call every listener; coroutine results are scheduled, errors are reported and never raised."""
        for listener in list(self._listeners.get(channel, [])):
            try:
                result = listener(data)
                if inspect.isawaitable(result):
                    task = asyncio.ensure_future(result)
                    self._tasks.add(task)
                    task.add_done_callback(self._finished(channel))
            except Exception as exc:  # one listener's bug must not stop the others
                self._error(channel, exc)

    def _finished(self, channel: str) -> Callable[[asyncio.Task[Any]], None]:
        def done(task: asyncio.Task[Any]) -> None:
            self._tasks.discard(task)
            if not task.cancelled() and task.exception() is not None:
                self._error(channel, task.exception() or RuntimeError("listener failed"))

        return done

    def _error(self, channel: str, exc: BaseException) -> None:
        if self._report is not None:
            self._report("<events>", f"events:{channel}", exc)


class ExtensionRuntime:
    """State shared by every extension of one agent process: bindings, flag values, queued providers, the bus.

    Hosts call `bind_session()` once the session exists (and again after each session replacement, which
    invalidates contexts of the previous session), and `flush_providers()` after all factories ran.
    """

    def __init__(self, *, cwd: str = ".", report: ErrorReporter | None = None) -> None:
        self.cwd = cwd
        self.extensions: list[Extension] = []
        self.flag_values: dict[str, FlagValue] = {}
        self.pending_providers: list[ProviderRegistration] = []
        self.provider_target: ModelRuntime | ModelRegistry | None = None
        """Where provider registrations go; None while they are queued."""
        self.session: SessionBinding | None = None
        self.actions: RuntimeActions | None = None
        self.generation = 0
        """Bumped by every `bind_session`; a context remembers the generation it was built in."""
        self.report: ErrorReporter = report or (lambda _path, _event, _exc: None)
        self.events = EventBus(lambda path, event, exc: self.report(path, event, exc))

    def bind_session(self, session: SessionBinding, actions: RuntimeActions | None = None) -> None:
        self.session = session
        self.actions = actions
        self.generation += 1

    def require_session(self) -> SessionBinding:
        if self.session is None:
            raise ExtensionNotBoundError(
                "Extension runtime not initialized: session actions cannot be called from the extension factory "
                "(wait for session_start)"
            )
        return self.session

    def flush_providers(self, target: ModelRuntime | ModelRegistry) -> None:
        """Apply queued provider (un)registrations to `target`; later ones apply immediately."""
        self.provider_target = target
        pending, self.pending_providers = self.pending_providers, []
        for item in pending:
            self._apply_provider(item)

    def queue_provider(self, item: ProviderRegistration) -> None:
        if self.provider_target is None:
            self.pending_providers.append(item)
        else:
            self._apply_provider(item)

    def _apply_provider(self, item: ProviderRegistration) -> None:
        target = self.provider_target
        assert target is not None  # only called after flush_providers set it
        try:
            if item.config is None:
                unregister_provider(target, item.name)
            elif isinstance(target, ModelRuntime):
                target.register_extension_provider(item.name, item.config)
            else:
                apply_provider_config(target, item.name, item.config)
        except Exception as exc:  # a bad config must not break startup; it is reported like a handler error
            event = "register_provider" if item.config is not None else "unregister_provider"
            self.report(item.extension_path, event, exc)


def unregister_provider(target: ModelRuntime | ModelRegistry, name: str) -> None:
    """An extension's `unregister_provider(name)` on a provider target (see `ExtensionRuntime.flush_providers`)."""
    if isinstance(target, ModelRuntime):
        target.unregister_extension_provider(name)
    else:
        target.unregister_provider(name)


def apply_provider_config(registry: ModelRegistry, name: str, config: dict[str, Any]) -> None:  # Any: JSON config
    """`register_provider(name, config)` on a bare registry (no `ModelRuntime`): the config is parsed as the
    session does it, but `headers` go to the models as written and `authHeader` has no effect."""
    provider = parse_extension_provider(name, config)
    registry.register_provider(
        name,
        api=provider.api,
        base_url=provider.base_url,
        models=provider.models,
        api_key=provider.api_key,
        headers=provider.headers or None,
        compat=provider.compat,
    )


class ExtensionAPI:
    """The `pi` object of one extension. See the module docstring for the binding rules."""

    def __init__(self, extension: Extension, runtime: ExtensionRuntime) -> None:
        self._extension = extension
        self._runtime = runtime

    @property
    def extension(self) -> Extension:
        return self._extension

    @property
    def events(self) -> EventBus:
        return self._runtime.events

    # ----------------------------------------------------------------- registration

    @overload
    def on(self, event: str) -> Callable[[F], F]: ...

    @overload
    def on(self, event: str, handler: F) -> F: ...

    def on(self, event: str, handler: F | None = None) -> F | Callable[[F], F]:
        """Subscribe `handler(event, ctx)` (sync or async) to `event`; usable as a decorator."""
        if event not in EVENT_NAMES:
            raise ValueError(f"Unknown extension event: {event}")

        def register(fn: F) -> F:
            handlers: list[Handler] = self._extension.handlers.setdefault(event, [])
            handlers.append(fn)
            return fn

        return register(handler) if handler is not None else register

    def register_tool(self, tool: ToolDefinition | AgentTool) -> None:
        """Add a tool (works after startup too: the session then refreshes its tool set)."""
        self._extension.tools[tool.name] = RegisteredTool(tool, self._extension.path)
        if self._runtime.session is not None:
            self._runtime.session.refresh_tools()

    @overload
    def register_command(
        self,
        name: str,
        handler: None = None,
        *,
        description: str | None = None,
        get_argument_completions: Callable[[str], Any] | None = None,
    ) -> Callable[[F], F]: ...

    @overload
    def register_command(
        self,
        name: str,
        handler: F,
        *,
        description: str | None = None,
        get_argument_completions: Callable[[str], Any] | None = None,
    ) -> F: ...

    def register_command(
        self,
        name: str,
        handler: F | None = None,
        *,
        description: str | None = None,
        get_argument_completions: Callable[[str], Any] | None = None,  # Any: completion items
    ) -> F | Callable[[F], F]:
        """Register `/name` with `handler(args, ctx)`; usable as a decorator."""

        def register(fn: F) -> F:
            command_handler: CommandHandler = fn
            self._extension.commands[name] = RegisteredCommand(
                name=name,
                handler=command_handler,
                extension_path=self._extension.path,
                source_info=self._extension.source_info,
                description=description,
                get_argument_completions=get_argument_completions,
                invocation_name=name,
            )
            return fn

        return register(handler) if handler is not None else register

    def register_shortcut(self, key: str, handler: ShortcutHandler, *, description: str | None = None) -> None:
        self._extension.shortcuts[key] = RegisteredShortcut(key, handler, self._extension.path, description)

    def register_flag(
        self,
        name: str,
        *,
        type: FlagType = "boolean",  # the spec's keyword name
        default: FlagValue | None = None,
        description: str | None = None,
    ) -> None:
        """Declare CLI flag `--name`; its default becomes the value until the CLI sets one."""
        self._extension.flags[name] = RegisteredFlag(name, type, self._extension.path, default, description)
        if default is not None and name not in self._runtime.flag_values:
            self._runtime.flag_values[name] = default

    def get_flag(self, name: str) -> FlagValue | None:
        """The value of a flag this extension registered (None for flags it did not register)."""
        if name not in self._extension.flags:
            return None
        return self._runtime.flag_values.get(name)

    def register_provider(self, name_or_provider: str | Any, config: dict[str, Any] | None = None) -> None:
        """`register_provider(name, config)` or `register_provider(provider)` (an object with `name`, `config`).

        Any: the single-argument form takes any object exposing those attributes, or a dict with `name`.
        """
        if isinstance(name_or_provider, str):
            name, cfg = name_or_provider, config or {}
        elif isinstance(name_or_provider, dict):
            cfg = {k: v for k, v in name_or_provider.items() if k != "name"}
            name = str(name_or_provider["name"])
        else:
            name, cfg = str(name_or_provider.name), dict(getattr(name_or_provider, "config", {}) or {})
        self._runtime.queue_provider(ProviderRegistration(name, cfg, self._extension.path))

    def unregister_provider(self, name: str) -> None:
        self._runtime.queue_provider(ProviderRegistration(name, None, self._extension.path))

    def register_message_renderer(self, custom_type: str, renderer: Callable[..., Any]) -> None:
        self._extension.message_renderers[custom_type] = renderer

    def register_entry_renderer(self, custom_type: str, renderer: Callable[..., Any]) -> None:
        self._extension.entry_renderers[custom_type] = renderer

    def register_markdown_transformer(self, transformer: Callable[[str], str]) -> None:
        self._extension.markdown_transformers.append(transformer)

    # ----------------------------------------------------------------- session actions

    def send_message(
        self,
        message: CustomMessageInput | dict[str, Any],  # Any: {customType, content, display, details}
        *,
        deliver_as: DeliverAs | None = None,
        trigger_turn: bool = False,
    ) -> None:
        """Add a custom message to the session (validated first: a bad shape raises here)."""
        parsed = message if isinstance(message, CustomMessageInput) else CustomMessageInput.model_validate(message)
        self._runtime.require_session().send_message(parsed.to_wire(), deliver_as, trigger_turn)

    def send_user_message(
        self, content: str | list[TextContent | ImageContent], *, deliver_as: DeliverAs | None = None
    ) -> None:
        self._runtime.require_session().send_user_message(content, deliver_as)

    def append_entry(self, custom_type: str, data: Any = None) -> None:  # Any: extension-defined JSON
        self._runtime.require_session().append_entry(custom_type, data)

    def set_session_name(self, name: str) -> None:
        self._runtime.require_session().set_session_name(name)

    def get_session_name(self) -> str | None:
        return self._runtime.require_session().get_session_name()

    def set_label(self, entry_id: str, label: str | None) -> None:
        self._runtime.require_session().set_label(entry_id, label)

    def get_commands(self) -> list[dict[str, Any]]:  # Any: JSON records of the get_commands shape
        """Extension commands (invocation names), then prompt templates and skills."""
        commands = command_infos(self._runtime.extensions)
        if self._runtime.session is not None:
            commands.extend(self._runtime.session.get_resource_commands())
        return commands

    async def exec(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        signal: AbortSignal | None = None,
        timeout: float | None = None,
        cwd: str | None = None,
    ) -> ExecResult:
        """Run a program (no shell) in the session cwd; `timeout` in ms → `{stdout, stderr, code, killed}`."""
        return await exec_command(command, args, signal=signal, timeout=timeout, cwd=cwd or self._runtime.cwd)

    def get_active_tools(self) -> list[str]:
        return self._runtime.require_session().get_active_tools()

    def get_all_tools(self) -> list[dict[str, Any]]:  # Any: {name, description, parameters, sourceInfo?}
        return self._runtime.require_session().get_all_tools()

    def set_active_tools(self, names: Sequence[str]) -> None:
        self._runtime.require_session().set_active_tools(list(names))

    async def set_model(self, model: Model) -> bool:
        """Switch the session model; False when it has no auth."""
        return await self._runtime.require_session().set_model(model)

    def get_thinking_level(self) -> str:
        return self._runtime.require_session().get_thinking_level()

    def set_thinking_level(self, level: str) -> None:
        self._runtime.require_session().set_thinking_level(level)


def assign_invocation_names(extensions: Sequence[Extension]) -> None:
    """Give each command its invocation name: `name`, or `name:1`, `name:2` (load order) when shared."""
    counts: dict[str, int] = {}
    for extension in extensions:
        for command in extension.commands.values():
            counts[command.name] = counts.get(command.name, 0) + 1
    seen: dict[str, int] = {}
    for extension in extensions:
        for command in extension.commands.values():
            if counts[command.name] > 1:
                seen[command.name] = seen.get(command.name, 0) + 1
                command.invocation_name = f"{command.name}:{seen[command.name]}"
            else:
                command.invocation_name = command.name


def command_infos(extensions: Sequence[Extension]) -> list[dict[str, Any]]:  # Any: JSON records
    """`get_commands` records of the extension commands, in load order."""
    assign_invocation_names(extensions)
    out: list[dict[str, Any]] = []  # Any: JSON records
    for extension in extensions:
        for command in extension.commands.values():
            record: dict[str, Any] = {"name": command.invocation_name}  # Any: JSON values
            if command.description:
                record["description"] = command.description
            record["source"] = "extension"
            record["sourceInfo"] = command.source_info.to_json()
            out.append(record)
    return out


__all__ = [
    "ErrorReporter",
    "EventBus",
    "ExtensionAPI",
    "ExtensionRuntime",
    "apply_provider_config",
    "assign_invocation_names",
    "command_infos",
]
