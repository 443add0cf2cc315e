"""`ExtensionRunner`: delivers events to handlers in load order with the result rules

Handler failures never propagate: each is reported as an `ExtensionErrorEvent` (`{extensionPath, event, error}`)
to the `on_error` listeners and the run continues — except in `tool_call`, where a raising handler also blocks
the call. Result rules per event:

- `project_trust`: first `yes`/`no` wins (`undecided` passes); only non-project extensions are asked.
- `input`: `transform` results chain (each handler sees the previous text); the first `handled` wins.
- `before_agent_start`: every returned message is collected; `systemPrompt` chains.
- `context`: `{messages}` replaces the list for the next handler; `before_provider_request`: non-None replaces
  the payload; `before_provider_headers`: in-place mutation, None values deleted at the end.
- `message_end`: `{message}` replaces the message if it keeps the role (otherwise reported and ignored).
- `tool_call`: first `block` wins; `tool_result`: partial patches chain.
- `session_before_*`: first `cancel` wins, otherwise the last result; `user_bash`: first result wins.
"""

from __future__ import annotations

import copy
import inspect
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from apex_agent.tools import AgentTool
from apex_ai._wire import WireModel
from apex_ai.models import ModelRegistry
from apex_ai.types import ImageContent
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.trust import TrustHandlerResult
from apex_coding_agent.events import MessageEndEvent
from apex_coding_agent.extensions.api import ExtensionRuntime, command_infos
from apex_coding_agent.extensions.bindings import Mode, NoUi, UiBinding
from apex_coding_agent.extensions.context import ExtensionCommandContext, ExtensionContext, ProjectTrustContext
from apex_coding_agent.extensions.events import (
    BeforeAgentStartEvent,
    BeforeAgentStartResult,
    BeforeProviderHeadersEvent,
    BeforeProviderRequestEvent,
    CancelResult,
    ContextEvent,
    ContextResult,
    CustomMessageInput,
    ExtensionErrorEvent,
    HandlerEvent,
    InputEvent,
    InputRejectedError,
    InputResult,
    InputSource,
    MessageEndResult,
    ProjectTrustEvent,
    ProjectTrustResult,
    ResourcesDiscoverEvent,
    ResourcesDiscoverResult,
    SessionBeforeCompactEvent,
    SessionBeforeCompactResult,
    SessionBeforeForkEvent,
    SessionBeforeForkResult,
    SessionBeforeSwitchEvent,
    SessionBeforeTreeEvent,
    SessionBeforeTreeResult,
    SystemPromptOptions,
    ToolCallEvent,
    ToolCallResult,
    ToolResultEvent,
    ToolResultPatch,
    UserBashEvent,
    UserBashResult,
    parse_result,
)
from apex_coding_agent.extensions.tool_wrapper import ExtensionTool
from apex_coding_agent.extensions.types import (
    Extension,
    FlagValue,
    Handler,
    RegisteredCommand,
    RegisteredFlag,
    RegisteredShortcut,
    ToolDefinition,
)

R = TypeVar("R", bound=WireModel)
ErrorListener = Callable[[ExtensionErrorEvent], None]

_BEFORE_RESULTS: dict[str, type[Any]] = {  # Any: the four session_before_* result models
    "session_before_switch": CancelResult,
    "session_before_fork": SessionBeforeForkResult,
    "session_before_compact": SessionBeforeCompactResult,
    "session_before_tree": SessionBeforeTreeResult,
}


@dataclass
class DiscoveredResources:
    """`resources_discover` answers: `(path, extension path)` pairs per kind, in load order."""

    skill_paths: list[tuple[str, str]] = field(default_factory=list)
    prompt_paths: list[tuple[str, str]] = field(default_factory=list)
    theme_paths: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class BeforeAgentStartOutcome:
    messages: list[CustomMessageInput] = field(default_factory=list)
    system_prompt: str | None = None
    """The chained replacement, or None when no handler changed it."""


class _HandlerFailed(Exception):
    """Internal: a handler raised (already reported); carries the original error."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class ExtensionRunner:
    """Emits events to the handlers of `runtime.extensions`; see the module docstring."""

    def __init__(self, runtime: ExtensionRuntime, *, ui: UiBinding | None = None, mode: Mode = "print") -> None:
        self.runtime = runtime
        self.ui: UiBinding = ui if ui is not None else NoUi()
        self.mode: Mode = mode
        self._error_listeners: list[ErrorListener] = []
        self.errors: list[ExtensionErrorEvent] = []
        """Every reported error, also kept here so a host that subscribes late can still show them."""
        runtime.report = self._report_exception

    # ----------------------------------------------------------------- plumbing

    @property
    def extensions(self) -> list[Extension]:
        return self.runtime.extensions

    def set_ui(self, ui: UiBinding, mode: Mode) -> None:
        self.ui, self.mode = ui, mode

    def on_error(self, listener: ErrorListener) -> Callable[[], None]:
        """Listen for `extension_error` records; returns an unsubscribe function."""
        self._error_listeners.append(listener)
        return lambda: self._error_listeners.remove(listener) if listener in self._error_listeners else None

    def report_error(self, extension_path: str, event: str, error: BaseException) -> None:
        self._report_exception(extension_path, event, error)

    def _report_exception(self, extension_path: str, event: str, error: BaseException) -> None:
        stack = "".join(traceback.format_exception(error))
        record = ExtensionErrorEvent(extension_path=extension_path, event=event, error=str(error), stack=stack)
        self.errors.append(record)
        for listener in list(self._error_listeners):
            try:
                listener(record)
            except Exception:  # a failing error sink must not turn reporting into a crash
                pass

    def create_context(self) -> ExtensionContext:
        return ExtensionContext(self.runtime, self.ui, self.mode)

    def create_command_context(self) -> ExtensionCommandContext:
        return ExtensionCommandContext(self.runtime, self.ui, self.mode)

    def has_handlers(self, event: str) -> bool:
        return any(event in e.handlers and e.handlers[event] for e in self.extensions)

    def _handlers(self, event: str, extensions: Sequence[Extension] | None = None) -> list[tuple[Extension, Handler]]:
        return [
            (e, h) for e in (self.extensions if extensions is None else extensions) for h in e.handlers.get(event, [])
        ]

    async def _call(self, extension: Extension, handler: Handler, event: HandlerEvent, ctx: object) -> object:
        """Run one handler; a raise is reported and re-raised as `_HandlerFailed` (an `input` handler's
        `InputRejectedError` is its answer, not a failure: it goes on to the caller of the prompt)."""
        try:
            value = handler(event, ctx)
            if inspect.isawaitable(value):
                value = await value
            return value
        except Exception as exc:
            if isinstance(exc, InputRejectedError) and event.type == "input":
                raise
            # Reported here; callers decide whether the failure means anything more.
            self._report_exception(extension.path, event.type, exc)
            raise _HandlerFailed(exc) from exc

    async def _results(self, event: HandlerEvent, result_type: type[Any]) -> list[tuple[Extension, Any]]:
        """Every handler's parsed result (failing or malformed ones reported and skipped). Any: result models."""
        ctx = self.create_context()
        out: list[tuple[Extension, Any]] = []
        for extension, handler in self._handlers(event.type):
            parsed = await self._parsed(extension, handler, event, ctx, result_type)
            if parsed is not None:
                out.append((extension, parsed))
        return out

    async def _parsed(
        self, extension: Extension, handler: Handler, event: HandlerEvent, ctx: object, result_type: type[R]
    ) -> R | None:
        try:
            value = await self._call(extension, handler, event, ctx)
        except _HandlerFailed:
            return None
        try:
            return parse_result(result_type, value)
        except Exception as exc:  # a malformed result is the extension's bug: report it, ignore the result
            self._report_exception(extension.path, event.type, exc)
            return None

    # ----------------------------------------------------------------- plain events

    async def emit(self, event: HandlerEvent) -> None:
        """Deliver a notification event (results ignored), e.g. `session_start`, `agent_end`, `model_select`."""
        ctx = self.create_context()
        for extension, handler in self._handlers(event.type):
            try:
                await self._call(extension, handler, event, ctx)
            except _HandlerFailed:
                continue

    # ----------------------------------------------------------------- events with results

    async def emit_project_trust(self, cwd: str) -> TrustHandlerResult | None:
        """First `yes`/`no` from a user/global/CLI extension, as `core.trust` expects it (None: undecided).

        Hosts pass `handlers=[lambda _cwd: result]` to `resolve_project_trusted`. Errors are reported with
        event `project_trust`; the caller words the warning (`Extension "<path>" project_trust error: <msg>`).
        """
        event = ProjectTrustEvent(cwd=cwd)
        ctx = ProjectTrustContext(cwd=cwd, mode=self.mode, has_ui=self.mode in ("tui", "rpc"), ui=self.ui)
        eligible = [e for e in self.extensions if e.source_info.scope != "project"]
        for extension, handler in self._handlers("project_trust", eligible):
            result = await self._parsed(extension, handler, event, ctx, ProjectTrustResult)
            if result is not None and result.trusted != "undecided":
                return TrustHandlerResult(result.trusted, result.remember)
        return None

    async def emit_resources_discover(self, cwd: str, reason: str = "startup") -> DiscoveredResources:
        event = ResourcesDiscoverEvent.model_validate({"cwd": cwd, "reason": reason})
        found = DiscoveredResources()
        for extension, result in await self._results(event, ResourcesDiscoverResult):
            found.skill_paths.extend((p, extension.path) for p in result.skill_paths or [])
            found.prompt_paths.extend((p, extension.path) for p in result.prompt_paths or [])
            found.theme_paths.extend((p, extension.path) for p in result.theme_paths or [])
        return found

    async def emit_session_before(
        self,
        event: SessionBeforeSwitchEvent | SessionBeforeForkEvent | SessionBeforeCompactEvent | SessionBeforeTreeEvent,
    ) -> Any:  # Any: the event's result model (see _BEFORE_RESULTS) or None
        """First result with `cancel` wins; otherwise the last non-None result."""
        result_type = _BEFORE_RESULTS[event.type]
        ctx = self.create_context()
        last: Any = None  # Any: see return
        for extension, handler in self._handlers(event.type):
            result = await self._parsed(extension, handler, event, ctx, result_type)
            if result is None:
                continue
            if result.cancel:
                return result
            last = result
        return last

    async def emit_input(
        self,
        text: str,
        images: list[ImageContent] | None = None,
        source: InputSource = "interactive",
        streaming_behavior: str | None = None,
    ) -> InputResult:
        """`continue` (nothing changed), `transform` (final text/images) or `handled` (skip the LLM)."""
        current_text, current_images, transformed = text, images, False
        ctx = self.create_context()
        for extension, handler in self._handlers("input"):
            event = InputEvent.model_validate(
                {
                    "text": current_text,
                    "images": current_images,
                    "source": source,
                    "streamingBehavior": streaming_behavior,
                }
            )
            result = await self._parsed(extension, handler, event, ctx, InputResult)
            if result is None or result.action == "continue":
                continue
            if result.action == "handled":
                return result
            current_text = result.text if result.text is not None else current_text
            current_images = result.images if result.images is not None else current_images
            transformed = True
        if transformed:
            return InputResult(action="transform", text=current_text, images=current_images)
        return InputResult(action="continue")

    async def emit_before_agent_start(
        self,
        prompt: str,
        system_prompt: str,
        *,
        images: list[ImageContent] | None = None,
        options: SystemPromptOptions | None = None,
    ) -> BeforeAgentStartOutcome:
        outcome = BeforeAgentStartOutcome()
        current = system_prompt
        ctx = self.create_context()
        for extension, handler in self._handlers("before_agent_start"):
            event = BeforeAgentStartEvent(
                prompt=prompt,
                images=images,
                system_prompt=current,
                system_prompt_options=options or SystemPromptOptions(),
            )
            result = await self._parsed(extension, handler, event, ctx, BeforeAgentStartResult)
            if result is None:
                continue
            if result.message is not None:
                outcome.messages.append(result.message)
            if result.system_prompt is not None:
                current = result.system_prompt
                outcome.system_prompt = current
        return outcome

    async def emit_context(self, messages: list[Any]) -> list[Any]:  # Any: AgentMessage values
        """The messages to send: a deep copy, replaced by each handler's `{messages}` in turn."""
        current = copy.deepcopy(messages)
        ctx = self.create_context()
        for extension, handler in self._handlers("context"):
            event = ContextEvent(messages=current)
            result = await self._parsed(extension, handler, event, ctx, ContextResult)
            if result is not None and result.messages is not None:
                current = list(result.messages)
            else:
                current = list(event.messages)  # handlers may also edit the list in place
        return current

    async def emit_before_provider_headers(self, headers: dict[str, str]) -> dict[str, str]:
        """Headers after in-place edits by every handler; keys set to None are removed."""
        event = BeforeProviderHeadersEvent(headers=dict(headers))
        await self.emit(event)
        return {k: v for k, v in event.headers.items() if v is not None}

    async def emit_before_provider_request(self, payload: Any) -> Any:  # Any: provider JSON body
        """The payload to send: each non-None handler result replaces it."""
        ctx = self.create_context()
        for extension, handler in self._handlers("before_provider_request"):
            try:
                value = await self._call(extension, handler, BeforeProviderRequestEvent(payload=payload), ctx)
            except _HandlerFailed:
                continue
            if value is not None:
                payload = value
        return payload

    async def emit_message_end(self, message: Any) -> Any:  # Any: AgentMessage value
        """The message after `{message}` replacements; one with a different role is reported and ignored."""
        ctx = self.create_context()
        for extension, handler in self._handlers("message_end"):
            result = await self._parsed(extension, handler, MessageEndEvent(message=message), ctx, MessageEndResult)
            if result is None or result.message is None:
                continue
            new_role, old_role = getattr(result.message, "role", None), getattr(message, "role", None)
            if new_role != old_role:
                error = ValueError(f"message_end replacement must keep role {old_role!r}, got {new_role!r}")
                self._report_exception(extension.path, "message_end", error)
                continue
            message = result.message
        return message

    async def emit_tool_call(self, event: ToolCallEvent) -> ToolCallResult | None:
        """The first blocking result (a raising handler blocks too), else None. `event.input` may be mutated."""
        ctx = self.create_context()
        for extension, handler in self._handlers("tool_call"):
            try:
                value = await self._call(extension, handler, event, ctx)
            except _HandlerFailed as failed:
                return ToolCallResult(block=True, reason=f"Extension failed, blocking execution: {failed.error}")
            try:
                result = parse_result(ToolCallResult, value)
            except Exception as exc:  # malformed result: reported, not a block
                self._report_exception(extension.path, "tool_call", exc)
                continue
            if result is not None and result.block:
                return result
        return None

    async def emit_tool_result(self, event: ToolResultEvent) -> ToolResultPatch | None:
        """The accumulated patch (each handler sees the patched event), or None when nobody changed anything."""
        ctx = self.create_context()
        patch: dict[str, Any] = {}  # Any: patched field values
        current = event
        for extension, handler in self._handlers("tool_result"):
            result = await self._parsed(extension, handler, current, ctx, ToolResultPatch)
            if result is None:
                continue
            changes = {name: getattr(result, name) for name in result.model_fields_set if name in _PATCH_FIELDS}
            changes = {k: v for k, v in changes.items() if v is not None or k == "details"}
            if not changes:
                continue
            patch.update(changes)
            current = current.model_copy(update=changes)
        return ToolResultPatch(**patch) if patch else None

    async def emit_user_bash(self, event: UserBashEvent) -> UserBashResult | None:
        ctx = self.create_context()
        for extension, handler in self._handlers("user_bash"):
            result = await self._parsed(extension, handler, event, ctx, UserBashResult)
            if result is not None and (result.operations is not None or result.result is not None):
                return result
        return None

    # ----------------------------------------------------------------- registrations

    def get_tools(self) -> list[AgentTool]:
        """Extension tools as `AgentTool`s (first registration of a name wins), in load order."""
        out: dict[str, AgentTool] = {}
        for extension in self.extensions:
            for name, registered in extension.tools.items():
                if name in out:
                    continue
                definition = registered.definition
                if isinstance(definition, ToolDefinition):
                    out[name] = ExtensionTool(definition, extension.path, self.create_context)
                else:
                    out[name] = definition
        return list(out.values())

    def get_commands(self) -> list[RegisteredCommand]:
        command_infos(self.extensions)  # refreshes invocation names
        return [c for e in self.extensions for c in e.commands.values()]

    def get_command_infos(self) -> list[dict[str, Any]]:  # Any: JSON records (RPC `extension_commands`)
        return command_infos(self.extensions)

    def get_command(self, invocation_name: str) -> RegisteredCommand | None:
        return next((c for c in self.get_commands() if c.invocation_name == invocation_name), None)

    async def execute_command(self, invocation_name: str, args: str = "") -> bool:
        """Run `/invocation_name args`; False when no such command. Handler errors are reported, not raised."""
        command = self.get_command(invocation_name)
        if command is None:
            return False
        try:
            value = command.handler(args, self.create_command_context())
            if inspect.isawaitable(value):
                await value
        except Exception as exc:  # a command's bug is reported like a handler's
            self._report_exception(command.extension_path, f"command:{command.name}", exc)
        return True

    def get_shortcuts(self) -> list[RegisteredShortcut]:
        return [s for e in self.extensions for s in e.shortcuts.values()]

    def get_flags(self) -> list[RegisteredFlag]:
        seen: dict[str, RegisteredFlag] = {}
        for extension in self.extensions:
            for name, flag in extension.flags.items():
                seen.setdefault(name, flag)
        return list(seen.values())

    def set_flag_value(self, name: str, value: FlagValue) -> None:
        """The CLI's value for `--name` (read by `pi.get_flag`)."""
        self.runtime.flag_values[name] = value

    def get_message_renderer(self, custom_type: str) -> Callable[..., Any] | None:  # Any: TUI renderer
        return next(
            (e.message_renderers[custom_type] for e in self.extensions if custom_type in e.message_renderers), None
        )

    def get_entry_renderer(self, custom_type: str) -> Callable[..., Any] | None:  # Any: TUI renderer
        return next((e.entry_renderers[custom_type] for e in self.extensions if custom_type in e.entry_renderers), None)

    def flush_providers(self, target: ModelRuntime | ModelRegistry) -> None:
        """Apply queued provider registrations; pass the session's `ModelRuntime` so they outlive its `reload()`."""
        self.runtime.flush_providers(target)


def trust_warning(error: ExtensionErrorEvent) -> str:
    """The startup warning for a failed `project_trust` handler."""
    return f'Extension "{error.extension_path}" project_trust error: {error.error}'


_PATCH_FIELDS = frozenset({"content", "details", "is_error", "usage"})

__all__ = ["BeforeAgentStartOutcome", "DiscoveredResources", "ErrorListener", "ExtensionRunner", "trust_warning"]
