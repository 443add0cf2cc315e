"""`ctx`: what handlers, tools and commands receive.

A context belongs to the session bound when it was made: after the host re-binds (a session replacement)
every member but `cwd`/`mode`/`has_ui`/`ui` raises `StaleContextError`. `ProjectTrustContext` is the limited
context of `project_trust`, which runs before any session exists.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from apex_ai.abort import AbortSignal
from apex_ai.models import ModelRegistry
from apex_ai.types import Model
from apex_coding_agent.extensions.api import ExtensionRuntime
from apex_coding_agent.extensions.bindings import (
    Mode,
    NotifyType,
    RuntimeActions,
    SessionBinding,
    StaleContextError,
    UiBinding,
)


@dataclass
class ProjectTrustContext:
    """`cwd`, `mode`, `has_ui` and the dialogs (select/confirm/input/notify through `ui`)."""

    cwd: str
    mode: Mode
    has_ui: bool
    ui: UiBinding

    def notify(self, message: str, notify_type: NotifyType | None = None) -> None:
        self.ui.notify(message, notify_type)


class ExtensionContext:
    """The `ctx` of event handlers, tools and shortcuts."""

    def __init__(self, runtime: ExtensionRuntime, ui: UiBinding, mode: Mode) -> None:
        self._runtime = runtime
        self._generation = runtime.generation
        self.ui = ui
        self.mode: Mode = mode
        self.has_ui = mode in ("tui", "rpc")

    def _session(self) -> SessionBinding:
        session = self._runtime.require_session()
        if self._runtime.generation != self._generation:
            raise StaleContextError("This extension context belongs to a replaced session; use the new ctx")
        return session

    @property
    def cwd(self) -> str:
        session = self._runtime.session
        return session.cwd if session is not None else self._runtime.cwd

    def is_project_trusted(self) -> bool:
        return self._session().is_project_trusted()

    @property
    def session_manager(self) -> Any:  # Any: the runtime's read-only SessionManager
        return self._session().session_manager

    @property
    def model_registry(self) -> ModelRegistry:
        return self._session().model_registry

    @property
    def model(self) -> Model | None:
        return self._session().model

    @property
    def thinking_level(self) -> str:
        return self._session().get_thinking_level()

    @property
    def scoped_models(self) -> list[Any]:  # Any: the runtime's ScopedModel records
        return self._session().scoped_models

    @property
    def signal(self) -> AbortSignal | None:
        return self._session().signal

    def is_idle(self) -> bool:
        return self._session().is_idle()

    def abort(self) -> None:
        self._session().abort()

    def has_pending_messages(self) -> bool:
        return self._session().has_pending_messages()

    def shutdown(self) -> None:
        self._session().shutdown()

    def get_context_usage(self) -> Any:  # Any: the runtime's ContextUsage record or None
        return self._session().get_context_usage()

    def compact(
        self,
        custom_instructions: str | None = None,
        on_complete: Callable[[Any], None] | None = None,  # Any: CompactionResult
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self._session().compact(custom_instructions, on_complete, on_error)

    def get_system_prompt(self) -> str:
        return self._session().get_system_prompt()


class ExtensionCommandContext(ExtensionContext):
    """The `ctx` of command handlers: adds waiting and the session-replacing actions."""

    def _actions(self) -> RuntimeActions:
        self._session()
        actions = self._runtime.actions
        if actions is None:
            raise RuntimeError("Session replacement is not available in this mode")
        return actions

    def get_system_prompt_options(self) -> Any:  # Any: SystemPromptOptions of the runtime
        return self._actions().get_system_prompt_options()

    async def wait_for_idle(self) -> None:
        await self._actions().wait_for_idle()

    async def new_session(
        self,
        parent_session: str | None = None,
        setup: Callable[[Any], Any] | None = None,  # Any: receives the new SessionManager
        with_session: Callable[[Any], Any] | None = None,  # Any: receives the new ExtensionCommandContext
    ) -> dict[str, Any]:  # Any: {cancelled}
        return await self._actions().new_session(parent_session, setup, with_session)

    async def fork(
        self,
        entry_id: str,
        position: Literal["before", "at"] = "before",
        with_session: Callable[[Any], Any] | None = None,  # Any: receives the new ExtensionCommandContext
    ) -> dict[str, Any]:  # Any: {cancelled}
        return await self._actions().fork(entry_id, position, with_session)

    async def navigate_tree(
        self,
        target_id: str,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool | None = None,
        label: str | None = None,
    ) -> dict[str, Any]:  # Any: {cancelled}
        return await self._actions().navigate_tree(
            target_id, summarize, custom_instructions, replace_instructions, label
        )

    async def switch_session(
        self, path: str, with_session: Callable[[Any], Any] | None = None
    ) -> dict[str, Any]:  # Any: {cancelled}
        return await self._actions().switch_session(path, with_session)

    async def reload(self) -> None:
        await self._actions().reload()


__all__ = ["ExtensionCommandContext", "ExtensionContext", "ProjectTrustContext"]
