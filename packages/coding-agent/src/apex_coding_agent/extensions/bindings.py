"""What the extension layer needs from its hosts, as protocols the hosts implement.

- `SessionBinding`: the session runtime (`AgentSession`) side. `pi.send_message`, `pi.set_model`, ... and most
  `ctx` members delegate to it. Until `ExtensionRuntime.bind_session()` is called those methods raise
  `ExtensionNotBoundError` (factories run before the session exists).
- `RuntimeActions`: the session-replacing actions of command handlers (`ctx.new_session`, `ctx.fork`, ...), which
  belong to `AgentSessionRuntime` rather than one session. Optional: without it those methods raise.
- `UiBinding`: `ctx.ui`. The TUI and RPC (`RpcUi`) implement it; print/json modes use `NoUi`, whose dialogs
  return their defaults at once.

Binding methods are synchronous unless they return an awaitable below; a binding that needs async work for a
synchronous method (e.g. `send_user_message` starting a run) schedules it itself and reports failures itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, Protocol, TypeAlias

from apex_ai.abort import AbortSignal
from apex_ai.models import ModelRegistry
from apex_ai.types import ImageContent, Model, TextContent

Mode: TypeAlias = Literal["tui", "rpc", "json", "print"]
DeliverAs: TypeAlias = Literal["steer", "followUp", "nextTurn"]
NotifyType: TypeAlias = Literal["info", "warning", "error"]


class ExtensionNotBoundError(RuntimeError):
    """An extension called a session method before the session was bound (e.g. from its factory)."""


class StaleContextError(RuntimeError):
    """A `ctx` (or `pi` action) used after the session it belonged to was replaced."""


class SessionBinding(Protocol):
    """The session runtime as extensions see it. Implemented by the runtime; see the module docstring."""

    # ----------------------------------------------------------------- pi actions

    def send_message(
        self, message: dict[str, Any], deliver_as: DeliverAs | None, trigger_turn: bool
    ) -> None:  # Any: {customType, content, display, details} JSON record
        """Queue/append a custom message (`deliver_as` None = append now, or next turn when idle)."""

    def send_user_message(self, content: str | list[TextContent | ImageContent], deliver_as: DeliverAs | None) -> None:
        """Send a user message as if typed; `deliver_as` is required while streaming (raise otherwise)."""

    def append_entry(self, custom_type: str, data: Any) -> None:  # Any: extension-defined JSON
        """Append a `custom` session entry (extension state, never in model context)."""

    def set_session_name(self, name: str) -> None: ...

    def get_session_name(self) -> str | None: ...

    def set_label(self, entry_id: str, label: str | None) -> None: ...

    def get_active_tools(self) -> list[str]: ...

    def get_all_tools(self) -> list[dict[str, Any]]:  # Any: {name, description, parameters, sourceInfo?}
        """Every known tool (built-ins and extension tools), active or not."""

    def set_active_tools(self, names: Sequence[str]) -> None: ...

    def refresh_tools(self) -> None:
        """An extension registered a tool after startup: rebuild the tool set (new tools become active)."""

    def set_model(self, model: Model) -> Awaitable[bool]:
        """Switch model; resolves False when the model has no auth."""

    def get_thinking_level(self) -> str: ...

    def set_thinking_level(self, level: str) -> None: ...

    def get_resource_commands(self) -> list[dict[str, Any]]:  # Any: get_commands records (JSON)
        """Prompt-template and skill commands, in the `get_commands` shape."""

    # ----------------------------------------------------------------- ctx members

    @property
    def cwd(self) -> str: ...

    @property
    def session_manager(self) -> Any: ...  # Any: read-only SessionManager (a runtime type, not imported here)

    @property
    def model_registry(self) -> ModelRegistry: ...

    @property
    def model(self) -> Model | None: ...

    @property
    def scoped_models(self) -> list[Any]: ...  # Any: the runtime's ScopedModel records

    @property
    def signal(self) -> AbortSignal | None:
        """The current run's abort signal, None when idle."""

    def is_project_trusted(self) -> bool: ...

    def is_idle(self) -> bool: ...

    def abort(self) -> None: ...

    def has_pending_messages(self) -> bool: ...

    def shutdown(self) -> None:
        """Request shutdown, deferred until idle; a no-op in print mode."""

    def get_context_usage(self) -> Any: ...  # Any: the runtime's ContextUsage record or None

    def compact(
        self,
        custom_instructions: str | None,
        on_complete: Callable[[Any], None] | None,  # Any: CompactionResult of the runtime
        on_error: Callable[[BaseException], None] | None,
    ) -> None:
        """Start a compaction in the background and report through the callbacks."""

    def get_system_prompt(self) -> str: ...


class RuntimeActions(Protocol):
    """Command-handler actions that replace the session; implemented by `AgentSessionRuntime`.

    `with_session` receives the new session's fresh `ExtensionCommandContext` (built by the runner after the
    host re-binds); objects of the old session raise `StaleContextError` afterwards.
    """

    def get_system_prompt_options(self) -> Any: ...  # Any: SystemPromptOptions of the runtime

    async def wait_for_idle(self) -> None: ...

    async def new_session(
        self, parent_session: str | None, setup: Callable[[Any], Any] | None, with_session: Callable[[Any], Any] | None
    ) -> dict[str, Any]:  # Any: {cancelled} and the session manager handed to `setup`
        """Start a new session; returns `{"cancelled": bool}`."""

    async def fork(
        self, entry_id: str, position: Literal["before", "at"], with_session: Callable[[Any], Any] | None
    ) -> dict[str, Any]: ...  # Any: {cancelled}

    async def navigate_tree(
        self,
        target_id: str,
        summarize: bool,
        custom_instructions: str | None,
        replace_instructions: bool | None,
        label: str | None,
    ) -> dict[str, Any]: ...  # Any: {cancelled}

    async def switch_session(self, path: str, with_session: Callable[[Any], Any] | None) -> dict[str, Any]: ...

    async def reload(self) -> None: ...


class UiBinding(Protocol):
    """`ctx.ui`; signatures match `modes/rpc/rpc_ui.py:RpcUi`. Dialog timeouts are in milliseconds."""

    async def select(
        self, title: str, options: list[str], *, timeout: int | None = None, signal: AbortSignal | None = None
    ) -> str | None: ...

    async def confirm(
        self, title: str, message: str, *, timeout: int | None = None, signal: AbortSignal | None = None
    ) -> bool: ...

    async def input(
        self,
        title: str,
        placeholder: str | None = None,
        *,
        timeout: int | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None: ...

    async def editor(
        self, title: str, prefill: str | None = None, *, timeout: int | None = None, signal: AbortSignal | None = None
    ) -> str | None: ...

    def notify(self, message: str, notify_type: NotifyType | None = None) -> None: ...

    def set_status(self, key: str, text: str | None = None) -> None: ...

    def set_widget(
        self, key: str, lines: list[str] | None = None, placement: Literal["aboveEditor", "belowEditor"] | None = None
    ) -> None: ...

    def set_title(self, title: str) -> None: ...

    def set_editor_text(self, text: str) -> None: ...

    def get_editor_text(self) -> str: ...


class NoUi:
    """`ctx.ui` of print and json modes: dialogs resolve with their defaults, everything else does nothing.

    `notify` messages are kept in `notifications` so a host (or a test) can surface them.
    """

    def __init__(self) -> None:
        self.notifications: list[tuple[str, NotifyType | None]] = []

    async def select(
        self, title: str, options: list[str], *, timeout: int | None = None, signal: AbortSignal | None = None
    ) -> str | None:
        return None

    async def confirm(
        self, title: str, message: str, *, timeout: int | None = None, signal: AbortSignal | None = None
    ) -> bool:
        return False

    async def input(
        self,
        title: str,
        placeholder: str | None = None,
        *,
        timeout: int | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None:
        return None

    async def editor(
        self, title: str, prefill: str | None = None, *, timeout: int | None = None, signal: AbortSignal | None = None
    ) -> str | None:
        return None

    def notify(self, message: str, notify_type: NotifyType | None = None) -> None:
        self.notifications.append((message, notify_type))

    def set_status(self, key: str, text: str | None = None) -> None:
        return None

    def set_widget(
        self, key: str, lines: list[str] | None = None, placement: Literal["aboveEditor", "belowEditor"] | None = None
    ) -> None:
        return None

    def set_title(self, title: str) -> None:
        return None

    def set_editor_text(self, text: str) -> None:
        return None

    def paste_to_editor(self, text: str) -> None:
        return None

    def get_editor_text(self) -> str:
        return ""

    async def custom(self, *args: Any, **kwargs: Any) -> None:  # Any: signature of the TUI's custom()
        return None

    def get_tools_expanded(self) -> bool:
        return False

    def set_tools_expanded(self, expanded: bool) -> None:
        return None

    def set_working_message(self, message: str | None = None) -> None:
        return None

    def get_all_themes(self) -> list[Any]:  # Any: theme objects exist only in the TUI
        return []

    def get_theme(self) -> None:
        return None

    def set_theme(self, theme: Any) -> dict[str, Any]:  # Any: name or theme object; result is JSON-like
        return {"success": False, "error": "Theme switching needs the interactive mode"}


__all__ = [
    "DeliverAs",
    "ExtensionNotBoundError",
    "Mode",
    "NoUi",
    "NotifyType",
    "RuntimeActions",
    "SessionBinding",
    "StaleContextError",
    "UiBinding",
]
