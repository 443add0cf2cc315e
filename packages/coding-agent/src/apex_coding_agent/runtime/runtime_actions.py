"""`RuntimeExtensionActions`: the session-replacing actions of extension command handlers (`new_session`, `fork`,
`switch_session`, `navigate_tree`, `reload`) over the runtime that owns the sessions.

The runtime is seen through the `ReplacingRuntime` protocol: session_runtime.py builds these actions, so this
module must not import it back.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from apex_coding_agent.extensions.runner import ExtensionRunner

if TYPE_CHECKING:
    from apex_coding_agent.runtime.agent_session import AgentSession


class ForkOutcome(Protocol):
    @property
    def cancelled(self) -> bool: ...


class ReplacingRuntime(Protocol):
    """What the actions need of `AgentSessionRuntime`."""

    @property
    def session(self) -> AgentSession: ...

    @property
    def extension_runner(self) -> ExtensionRunner | None: ...

    @property
    def last_change_cancelled(self) -> bool: ...

    async def new_session(self, parent_session: str | None = None) -> AgentSession: ...

    async def switch_session(self, path: str | Path) -> AgentSession: ...

    async def fork(self, entry_id: str, position: Literal["before", "at"] = "before") -> ForkOutcome: ...

    async def reload(self) -> object: ...


async def _maybe_await(value: object) -> object:
    if inspect.isawaitable(value):
        return await value
    return value


class RuntimeExtensionActions:
    """`RuntimeActions` over an `AgentSessionRuntime`: the session-replacing command-handler actions."""

    def __init__(self, runtime: ReplacingRuntime) -> None:
        self._runtime = runtime

    def get_system_prompt_options(self) -> Any:  # Any: SystemPromptOptions
        return self._runtime.session.system_prompt_options

    async def wait_for_idle(self) -> None:
        await self._runtime.session.wait_for_idle()

    async def _with_session(self, with_session: Callable[[Any], Any] | None) -> None:
        runner = self._runtime.extension_runner
        if with_session is not None and runner is not None:
            await _maybe_await(with_session(runner.create_command_context()))

    async def new_session(
        self,
        parent_session: str | None,
        setup: Callable[[Any], Any] | None,  # Any: receives the new SessionManager
        with_session: Callable[[Any], Any] | None,  # Any: receives the new command context
    ) -> dict[str, Any]:  # Any: {cancelled}
        await self._runtime.new_session(parent_session)
        if self._runtime.last_change_cancelled:
            return {"cancelled": True}
        if setup is not None:
            await _maybe_await(setup(self._runtime.session.session_manager))
            self._runtime.session.reload_messages()
        await self._with_session(with_session)
        return {"cancelled": False}

    async def fork(
        self, entry_id: str, position: Literal["before", "at"], with_session: Callable[[Any], Any] | None
    ) -> dict[str, Any]:  # Any: {cancelled}
        result = await self._runtime.fork(entry_id, position)
        if result.cancelled:
            return {"cancelled": True}
        await self._with_session(with_session)
        return {"cancelled": False}

    async def navigate_tree(
        self,
        target_id: str,
        summarize: bool,
        custom_instructions: str | None,
        replace_instructions: bool | None,
        label: str | None,
    ) -> dict[str, Any]:  # Any: {cancelled}
        result = await self._runtime.session.navigate_tree(
            target_id, summarize, custom_instructions, bool(replace_instructions), label
        )
        return {"cancelled": result.cancelled}

    async def switch_session(self, path: str, with_session: Callable[[Any], Any] | None) -> dict[str, Any]:
        await self._runtime.switch_session(path)
        if self._runtime.last_change_cancelled:
            return {"cancelled": True}
        await self._with_session(with_session)
        return {"cancelled": False}

    async def reload(self) -> None:
        await self._runtime.reload()


__all__ = ["ForkOutcome", "ReplacingRuntime", "RuntimeExtensionActions"]
