"""`AgentSessionRuntime`: owns the current `AgentSession` and replaces it on new/switch/fork/import, reloads
extensions and resources, and `create_agent_session_runtime`, the SDK's runtime constructor."""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, TypeAlias, TypeVar

from apex_ai.retry import Sleep, abortable_sleep_ms
from apex_ai.types import Model, ModelThinkingLevel
from apex_coding_agent.extensions import events as ext
from apex_coding_agent.extensions.loader import (
    ExtensionDiagnostic,
    ExtensionLoadError,
)
from apex_coding_agent.extensions.runner import DiscoveredResources, ExtensionRunner
from apex_coding_agent.extensions.tool_wrapper import ExtensionTool
from apex_coding_agent.paths import get_agent_dir, resolve_session_dir
from apex_coding_agent.resources import SkillSearchTool
from apex_coding_agent.runtime.agent_session import AgentSession
from apex_coding_agent.runtime.create import BUILTIN_TOOL_TYPES, CreateAgentSessionResult, create_agent_session
from apex_coding_agent.runtime.extension_binding import SessionExtensionBinding
from apex_coding_agent.runtime.extension_reload import (
    ReloadEntry,
    entries_of,
    extension_resources,
    merge_rediscovered,
    reimport_extensions,
    replace_extension_resources,
)
from apex_coding_agent.runtime.runtime_actions import RuntimeExtensionActions
from apex_coding_agent.session.entries import MessageEntry
from apex_coding_agent.session.session_manager import SessionManager, first_user_text
from apex_coding_agent.tools.output_accumulator import remove_output_logs


class ExtensionReloadError(Exception):
    """How a reload reports an extension that failed to import (message: `Failed to load extension ...`)."""


@dataclass
class ReloadResult:
    """What `AgentSessionRuntime.reload` met: extension load errors and conflicts, resource warnings."""

    errors: list[ExtensionLoadError] = field(default_factory=list)
    diagnostics: list[ExtensionDiagnostic] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class ForkResult:
    """`selected_text` is the forked user message's text (for the editor); empty for `position="at"`."""

    selected_text: str
    cancelled: bool = False


_T = TypeVar("_T")


class RuntimeFactory(Protocol):
    """Builds a runtime's session for a session manager (SDK `create_agent_session_runtime(factory, ...)`).

    Called once when the runtime is created and again on every replacement (new, switch, fork, clone, import)
    with the new manager and its cwd; whatever it returns becomes `runtime.session`.
    """

    def __call__(
        self, *, cwd: str, agent_dir: str, session_manager: SessionManager
    ) -> Awaitable[CreateAgentSessionResult]: ...


SessionSetup: TypeAlias = Callable[[SessionManager], Awaitable[None] | None]
"""`new_session(setup=...)`: fills the fresh manager (e.g. appends entries) before its session is built."""
WithSession: TypeAlias = Callable[[AgentSession], Awaitable[None] | None]
"""`new_session(with_session=...)`: runs against the replacement session once it is in place."""


async def _call(callback: Callable[[_T], Awaitable[None] | None], value: _T) -> None:
    """Run a sync or async callback."""
    outcome = callback(value)
    if inspect.isawaitable(outcome):
        await outcome


class AgentSessionRuntime:
    """Owns the current `AgentSession` and replaces it on new/switch/fork.

    After any replacement `runtime.session` is a new object: the old one is disposed and its subscribers get
    nothing more, so callers re-subscribe. Settings, models and the permission gate carry over while the cwd
    stays the same; a new cwd rebuilds them.
    """

    def __init__(
        self,
        result: CreateAgentSessionResult,
        *,
        sleep: Sleep = abortable_sleep_ms,
        factory: RuntimeFactory | None = None,
    ) -> None:
        self._result = result
        self._sleep = sleep
        self._factory = factory
        """When set, every replacement session is built by it instead of from the old session's collaborators."""
        self.diagnostics: list[str] = list(result.warnings)
        self.extension_runner: ExtensionRunner | None = result.extension_runner
        self.shutdown_handler: Callable[[], None] | None = None
        """The mode's deferred shutdown for `ctx.shutdown()` (RPC); None makes it a no-op (print mode)."""
        self.last_change_cancelled = False
        """Whether the last `new_session`/`switch_session` was cancelled by a `session_before_switch` handler."""
        self._extensions_started = False
        self._reload_entries: list[ReloadEntry] | None = None
        self._extension_providers: list[str] = []
        self.extension_theme_paths: list[str] = list(result.extension_theme_paths)
        """Theme paths the extensions' `resources_discover` handlers returned at startup or the last reload (for the
        host)."""
        self.bind_extensions()

    def bind_extensions(self) -> None:
        """Bind the extension runtime to the current session (contexts of a previous session become stale)."""
        runner = self.extension_runner
        if runner is not None:
            binding = SessionExtensionBinding(self.session, lambda: self._request_shutdown())
            runner.runtime.bind_session(binding, RuntimeExtensionActions(self))

    def _request_shutdown(self) -> None:
        if self.shutdown_handler is not None:
            self.shutdown_handler()

    async def start_extensions(self) -> None:
        """Emit `session_start{reason: "startup"}` once (hosts call it after setting the runner's UI)."""
        if self.extension_runner is None or self._extensions_started:
            return
        self._extensions_started = True
        await self.extension_runner.emit(ext.SessionStartEvent(reason="startup"))

    async def shutdown_extensions(self) -> None:
        """Emit `session_shutdown{reason: "quit"}` (at most once, and only after `start_extensions`)."""
        if self.extension_runner is None or not self._extensions_started:
            return
        self._extensions_started = False
        await self.extension_runner.emit(ext.SessionShutdownEvent(reason="quit"))

    async def reload(self) -> ReloadResult:
        """`/reload` and `ctx.reload()`: `session_shutdown{reason: "reload"}`, re-import the
        extensions (see `extension_reload`), `resources_discover{reason: "reload"}`, re-read skills, prompt
        templates and context files, rebuild the system prompt, `session_start{reason: "reload"}`.

        The session, its transcript and its model stay. Extensions that fail to load are reported to the runner's
        error listeners (event `load`) and returned; the rest of the reload still happens. Lifecycle events are only
        emitted once the extensions were started (`start_extensions`).
        """
        out = ReloadResult()
        runner = self.extension_runner
        session = self.session
        started = runner is not None and self._extensions_started
        if runner is not None:
            if started:
                await runner.emit(ext.SessionShutdownEvent(reason="reload"))
            old_tools = {tool.name: tool for tool in runner.get_tools()}
            if self._reload_entries is None:
                self._reload_entries = entries_of(runner.extensions)
            # Imported here: the startup loader (and the package manager behind it) is not needed by an SDK session.
            from apex_coding_agent.runtime.extension_startup import rediscover_sources

            phases = rediscover_sources(runner)
            if phases is not None:
                self._reload_entries = merge_rediscovered(self._reload_entries, phases)
            loaded = await reimport_extensions(runner, self._reload_entries, self._extension_providers)
            self._extension_providers = loaded.providers
            out.errors, out.diagnostics = loaded.errors, loaded.diagnostics
            for error in loaded.errors:
                runner.report_error(error.path, "load", ExtensionReloadError(error.message()))
            session.replace_extension_tools(old_tools)
            discovered = await runner.emit_resources_discover(session.cwd, "reload")
            self._apply_discovered(session, discovered)
        out.warnings = await session.reload_resources()
        if runner is not None and started:
            await runner.emit(ext.SessionStartEvent(reason="reload"))
        return out

    def _apply_discovered(self, session: AgentSession, discovered: DiscoveredResources) -> None:
        """Hand the skill/prompt paths of `resources_discover` to the resource loader (it reads them next); the
        previous discovery's paths (startup or last reload) are replaced, package resources stay."""
        found = extension_resources(discovered, session.cwd)
        self.extension_theme_paths = found.theme_paths
        loader = session.resource_loader
        if loader is None:
            return
        loader.package_skills = replace_extension_resources(loader.package_skills, found.skills)
        loader.package_prompts = replace_extension_resources(loader.package_prompts, found.prompts)

    async def _before_switch(self, reason: Literal["new", "resume"], target: str | None) -> bool:
        """True when a `session_before_switch` handler cancelled the change."""
        runner = self.extension_runner
        if runner is None:
            return False
        decision = await runner.emit_session_before(
            ext.SessionBeforeSwitchEvent(reason=reason, target_session_file=target)
        )
        return bool(decision is not None and decision.cancel)

    @classmethod
    async def create(cls, *, sleep: Sleep = abortable_sleep_ms, **kwargs: object) -> AgentSessionRuntime:
        """`create_agent_session(**kwargs)` wrapped in a runtime."""
        # kwargs are create_agent_session's keyword arguments; mypy cannot check a forwarded **kwargs.
        result = await create_agent_session(sleep=sleep, **kwargs)  # type: ignore[arg-type]
        return cls(result, sleep=sleep)

    @property
    def session(self) -> AgentSession:
        return self._result.session

    @property
    def model_fallback_message(self) -> str | None:
        return self._result.model_fallback_message

    async def _replace(
        self,
        manager: SessionManager,
        *,
        model: Model | None = None,
        thinking_level: ModelThinkingLevel | None = None,
        reason: Literal["new", "resume", "fork"] = "new",
    ) -> AgentSession:
        old = self.session
        runner = self.extension_runner
        previous_file = old.session_file
        if runner is not None and self._extensions_started:
            target = manager.session_file
            await runner.emit(
                ext.SessionShutdownEvent(reason=reason, target_session_file=str(target) if target else None)
            )
        await old.abort()
        old.dispose()
        if old.session_manager is not manager:
            old.session_manager.close()
        if self._factory is not None:
            result = await self._factory(cwd=manager.cwd, agent_dir=old.agent_dir, session_manager=manager)
            if result.extension_runner is not None:
                if result.extension_runner is not runner:  # a fresh runner: its startup round's themes now apply
                    self.extension_theme_paths = list(result.extension_theme_paths)
                runner = self.extension_runner = result.extension_runner
            return await self._install(result, runner, reason, previous_file)
        same_cwd = os.path.realpath(manager.cwd) == os.path.realpath(old.cwd)
        result = await create_agent_session(
            cwd=manager.cwd,
            agent_dir=old.agent_dir,
            model=model,
            thinking_level=thinking_level,
            scoped_models=old.scoped_models,
            tools=[t.name for t in old.agent_tools],
            # Built-ins (and skill_search) are rebuilt for the new cwd; every other tool the caller supplied carries over.
            # Extension tools come back from the runner.
            custom_tools=[
                t for t in old.agent_tools if not isinstance(t, (*BUILTIN_TOOL_TYPES, SkillSearchTool, ExtensionTool))
            ],
            session_manager=manager,
            settings_manager=old.settings_manager if same_cwd else None,
            model_runtime=old.model_runtime,
            permission_gate=old.permission_gate if same_cwd else None,
            run_budget=old.run_budget,
            sleep=self._sleep,
            resource_loader=old.resource_loader if same_cwd else None,
            resource_flags=old.resource_loader.flags if old.resource_loader is not None else None,
            extension_runner=runner,
            system_prompt=self._result.prompt_overrides.system_prompt,
            append_system_prompt=self._result.prompt_overrides.append_system_prompt,
            no_context_files=self._result.prompt_overrides.no_context_files,
            defer_messages=self._result.defer_messages,
        )
        return await self._install(result, runner, reason, previous_file)

    async def _install(
        self,
        result: CreateAgentSessionResult,
        runner: ExtensionRunner | None,
        reason: Literal["new", "resume", "fork"],
        previous_file: str | None,
    ) -> AgentSession:
        """Make `result` the current session, re-bind the extensions and tell them it started."""
        previous = self._result.session
        if result.session is not previous:
            # The runtime's connections outlive its sessions: `/new` talks to the same provider.
            result.session.connection_pool = previous.connection_pool
        self._result = result
        self.diagnostics.extend(result.warnings)
        self.bind_extensions()
        if runner is not None and self._extensions_started:
            await runner.emit(ext.SessionStartEvent(reason=reason, previous_session_file=previous_file))
        return result.session

    @staticmethod
    def _fresh_manager(old: SessionManager, parent_session: str | None) -> SessionManager:
        """A new session in the same place as `old` (in memory stays in memory); `old` is left untouched."""
        if old.is_persisted:
            fresh = SessionManager.create(old.cwd, old.session_dir)
        else:
            fresh = SessionManager.in_memory(old.cwd)
        if parent_session is not None:
            fresh.new_session(parent_session=parent_session)
        return fresh

    async def new_session(
        self,
        parent_session: str | None = None,
        setup: SessionSetup | None = None,
        with_session: WithSession | None = None,
    ) -> AgentSession:
        """A fresh session in the same session dir (in memory stays in memory), keeping model and thinking.

        `setup(manager)` runs on the fresh manager before its session is built (entries it appends are part of
        the new session's context); `with_session(session)` runs once the replacement is `runtime.session`.
        Neither runs when a `session_before_switch` handler cancels.
        """
        old = self.session
        self.last_change_cancelled = await self._before_switch("new", None)
        if self.last_change_cancelled:
            return old
        manager = self._fresh_manager(old.session_manager, parent_session)
        if setup is not None:
            await _call(setup, manager)
        session = await self._replace(manager, model=old.model, thinking_level=old.thinking_level, reason="new")
        if with_session is not None:
            await _call(with_session, session)
        return session

    async def switch_session(self, path: str | Path) -> AgentSession:
        """Open another session file; its cwd must exist. A `session_before_switch` cancel keeps the current one."""
        old = self.session
        self.last_change_cancelled = await self._before_switch("resume", str(path))
        if self.last_change_cancelled:
            return old
        manager = SessionManager.open(path, old.session_manager.session_dir)
        if not os.path.isdir(manager.cwd):
            manager.close()
            raise FileNotFoundError(f"Stored session working directory does not exist: {manager.cwd}")
        current = old.session_manager.session_file
        if current is None or not _same_file(current, manager.session_file):
            manager.lock_for_writing()  # another process writing it: refused now, while the old session stays
        return await self._replace(manager, reason="resume")

    async def fork(self, entry_id: str, position: Literal["before", "at"] = "before") -> ForkResult:
        """`before`: a new session ending just before user message `entry_id` (its text is returned);
        `at`: a new session holding the path up to and including `entry_id` (clone)."""
        old = self.session
        current = old.session_manager
        entry = current.get_entry(entry_id)
        text = self._user_text(entry) if position == "before" else ""
        if entry is None or text is None:
            raise ValueError("Invalid entry ID for forking")
        runner = self.extension_runner
        if runner is not None:
            decision = await runner.emit_session_before(
                ext.SessionBeforeForkEvent(entry_id=entry_id, position=position)
            )
            if decision is not None and decision.cancel:
                return ForkResult("", cancelled=True)
        if position == "before" and entry.parent_id is None:
            manager = self._fresh_manager(current, old.session_file)
        else:
            # A persisted session is re-read so the old session's manager never changes under it.
            file = current.session_file
            source = SessionManager.open(file, current.session_dir) if file is not None and current.is_written else None
            manager = source if source is not None else current
            manager.create_branched_session(entry_id if position == "at" else entry.parent_id or "")
        await self._replace(manager, model=old.model, thinking_level=old.thinking_level, reason="fork")
        return ForkResult(text)

    async def import_from_jsonl(self, path: str | Path, cwd_override: str | None = None) -> AgentSession:
        """Copy a session JSONL into the session dir (same base name; never overwriting another file) and switch
        to it. Bad lines are kept and skipped on load; a missing or non-session file raises `ExportError`."""
        old = self.session
        directory = old.session_manager.session_dir
        if directory is None:
            directory = resolve_session_dir(old.cwd, None, old.settings_manager.get("sessionDir"))
        # Imported here: the export package (HTML renderer included) is not needed by a run that never imports.
        from apex_coding_agent.export import import_session_jsonl

        imported = import_session_jsonl(path, directory)
        manager = SessionManager.open(imported.path, directory, cwd_override)
        if not os.path.isdir(manager.cwd):
            manager.close()
            raise FileNotFoundError(f"Stored session working directory does not exist: {manager.cwd}")
        return await self._replace(manager, reason="resume")

    @staticmethod
    def _user_text(entry: object) -> str | None:
        if isinstance(entry, MessageEntry):
            return first_user_text(entry.message)
        return None

    async def dispose(self) -> None:
        """Stop the session (extensions get `session_shutdown` first when they were started) and close it."""
        await self.shutdown_extensions()
        session = self.session
        await session.abort()
        session.dispose()
        session.session_manager.close()
        await session.close_connections()
        remove_output_logs()  # the session is over: the logs its commands' results pointed to go with it


def _same_file(a: Path, b: Path | None) -> bool:
    return b is not None and os.path.realpath(a) == os.path.realpath(b)


async def create_agent_session_runtime(
    factory: RuntimeFactory | None = None,
    cwd: str | None = None,
    agent_dir: str | None = None,
    session_manager: SessionManager | None = None,
    *,
    sleep: Sleep = abortable_sleep_ms,
    **kwargs: object,
) -> AgentSessionRuntime:
    """The SDK's runtime constructor.

    With `factory`: the first session is `await factory(cwd=..., agent_dir=..., session_manager=...)` (cwd defaults
    to the process cwd, the agent dir per settings, the manager to a new persisted session of cwd) and every later
    replacement is built by the same factory; `kwargs` are not allowed then. Without it this is
    `AgentSessionRuntime.create(cwd=..., agent_dir=..., session_manager=..., **kwargs)` (create_agent_session's
    options; replacements carry the old session's collaborators over).
    """
    if factory is None:
        given = {"cwd": cwd, "agent_dir": agent_dir, "session_manager": session_manager}
        kwargs.update({key: value for key, value in given.items() if value is not None})
        return await AgentSessionRuntime.create(sleep=sleep, **kwargs)
    if kwargs:
        raise TypeError(f"create_agent_session_runtime with a factory takes no options: {', '.join(sorted(kwargs))}")
    resolved_cwd = str(Path(cwd if cwd is not None else os.getcwd()).absolute())
    resolved_agent_dir = str(agent_dir if agent_dir is not None else get_agent_dir())
    manager = session_manager if session_manager is not None else SessionManager.create(resolved_cwd)
    result = await factory(cwd=resolved_cwd, agent_dir=resolved_agent_dir, session_manager=manager)
    return AgentSessionRuntime(result, sleep=sleep, factory=factory)


__all__ = [
    "AgentSessionRuntime",
    "ExtensionReloadError",
    "ForkResult",
    "ReloadResult",
    "RuntimeFactory",
    "SessionSetup",
    "WithSession",
    "create_agent_session_runtime",
]
