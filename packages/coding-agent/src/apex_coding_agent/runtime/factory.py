"""Building sessions (spec modes.md §9, sessions.md §9): `create_agent_session` and `AgentSessionRuntime`.

Startup order: settings -> project trust -> project settings -> context files -> tools -> system prompt ->
model (session -> settings default -> first available) -> thinking level (session -> `defaultThinkingLevel` ->
`medium`, clamped) -> agent. A new session starts with `model_change` and `thinking_level_change` entries, as
the pi captures do.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias

from apex_agent.agent import Agent, AgentState
from apex_agent.tools import AgentTool
from apex_agent.types import QueueMode, RunBudget
from apex_ai.retry import Sleep, abortable_sleep_ms
from apex_ai.thinking import MODEL_THINKING_LEVELS, clamp_level
from apex_ai.types import Model, ModelThinkingLevel, SystemMessage
from apex_coding_agent.core.context_files import discover_context_files
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.core.system_prompt import (
    BUILTIN_PROMPT_INFO,
    PromptInputs,
    ToolPromptInfo,
    build_system_prompt,
    find_append_prompt,
    find_custom_prompt,
)
from apex_coding_agent.core.trust import TrustStore, resolve_project_trusted
from apex_coding_agent.export import import_session_jsonl
from apex_coding_agent.messages import convert_to_llm
from apex_coding_agent.paths import get_agent_dir, resolve_session_dir
from apex_coding_agent.resources import ResourceFlags, ResourceLoader, SkillSearchTool, should_activate_skill_search
from apex_coding_agent.resources.skill_search import SKILL_SEARCH_TOOL_NAME
from apex_coding_agent.runtime.agent_session import AgentSession, ScopedModel
from apex_coding_agent.session.entries import MessageEntry
from apex_coding_agent.session.session_manager import SessionManager, first_user_text
from apex_coding_agent.tools import (
    ALL_TOOL_NAMES,
    DEFAULT_TOOL_NAMES,
    BashTool,
    BashToolOptions,
    EditTool,
    FindTool,
    GrepTool,
    LsTool,
    ReadTool,
    SessionEnvironment,
    ToolsOptions,
    WriteTool,
    create_tool,
)

NoTools: TypeAlias = Literal["all", "builtin"]
BUILTIN_TOOL_TYPES: tuple[type[AgentTool], ...] = (ReadTool, BashTool, EditTool, WriteTool, GrepTool, FindTool, LsTool)


@dataclass
class CreateAgentSessionResult:
    session: AgentSession
    model_fallback_message: str | None = None
    """Set when the session's stored model could not be restored and another one was chosen."""
    extensions_result: object | None = None
    """Reserved for the extension loader (not part of this build yet)."""
    warnings: list[str] = field(default_factory=list)


class _SessionEnvironmentCell:
    """Lets bash tools built before the session read its current facts when each command starts."""

    def __init__(self) -> None:
        self.session: AgentSession | None = None

    def __call__(self) -> SessionEnvironment | None:
        return self.session.session_environment() if self.session is not None else None


def select_tools(
    builtins: dict[str, AgentTool],
    custom_tools: Sequence[AgentTool] = (),
    tools: Sequence[str] | None = None,
    exclude_tools: Sequence[str] | None = None,
    no_tools: NoTools | None = None,
) -> list[AgentTool]:
    """The active tools (spec tools.md §1): allowlist over built-ins and custom tools, then the denylist.

    Without an allowlist the default built-ins (read, bash, edit, write) plus every custom tool are active;
    `no_tools="builtin"` drops the built-ins, `"all"` drops everything. A custom tool overrides a built-in of
    the same name.
    """
    if no_tools == "all":
        return []
    by_name: dict[str, AgentTool] = {} if no_tools == "builtin" else dict(builtins)
    for tool in custom_tools:
        by_name[tool.name] = tool
    custom_names = [t.name for t in custom_tools]
    if tools is not None:
        names = [n for n in tools if n in by_name]
    elif no_tools == "builtin":
        names = custom_names
    else:
        names = [n for n in DEFAULT_TOOL_NAMES if n in by_name] + [
            n for n in custom_names if n not in DEFAULT_TOOL_NAMES
        ]
    excluded = set(exclude_tools or ())
    seen: set[str] = set()
    out: list[AgentTool] = []
    for name in names:
        if name in excluded or name in seen:
            continue
        seen.add(name)
        out.append(by_name[name])
    return out


def _prompt_info(tool: AgentTool) -> ToolPromptInfo:
    known = BUILTIN_PROMPT_INFO.get(tool.name)
    if known is not None and isinstance(tool, BUILTIN_TOOL_TYPES):
        return known
    snippet = getattr(tool, "prompt_snippet", None)
    guidelines = getattr(tool, "prompt_guidelines", None) or ()
    return ToolPromptInfo(tool.name, snippet if isinstance(snippet, str) else None, tuple(guidelines))


def _as_level(value: object) -> ModelThinkingLevel | None:
    if isinstance(value, str) and value in MODEL_THINKING_LEVELS:
        return value
    return None


def _restore_model(
    runtime: ModelRuntime, settings: SettingsManager, manager: SessionManager, explicit: Model | None
) -> tuple[Model | None, str | None]:
    if explicit is not None:
        return explicit, None
    stored = manager.build_session_context().model
    fallback_message: str | None = None
    if stored is not None:
        model = runtime.registry.get_model(stored.provider, stored.model_id)
        if model is not None and runtime.is_available(model):
            return model, None
        fallback_message = f"Could not restore model {stored.provider}/{stored.model_id}."
    provider, model_id = settings.get("defaultProvider"), settings.get("defaultModel")
    chosen: Model | None = None
    if isinstance(provider, str) and isinstance(model_id, str):
        candidate = runtime.registry.get_model(provider, model_id)
        if candidate is not None and runtime.is_available(candidate):
            chosen = candidate
    if chosen is None:
        available = runtime.available_models()
        chosen = available[0] if available else None
    if fallback_message is not None:
        fallback_message += f" Using {chosen.provider}/{chosen.id}." if chosen is not None else " No model available."
    return chosen, fallback_message


def _restore_thinking(
    settings: SettingsManager, manager: SessionManager, model: Model | None, explicit: ModelThinkingLevel | None
) -> ModelThinkingLevel:
    if model is None:
        return "off"
    context = manager.build_session_context()
    level = explicit
    if level is None and context.has_thinking_change:
        level = _as_level(context.thinking_level)
    if level is None:
        level = _as_level(settings.get("defaultThinkingLevel"))
    return clamp_level(model, level or "medium")


def _run_budget(settings: SettingsManager, explicit: RunBudget | None) -> RunBudget | None:
    if explicit is not None:
        return explicit
    raw = settings.get("runBudget")
    return RunBudget.model_validate(raw) if isinstance(raw, dict) else None


def _queue_mode(settings: SettingsManager, key: str) -> QueueMode:
    return "all" if settings.get(key) == "all" else "one-at-a-time"


async def create_agent_session(
    cwd: str | None = None,
    agent_dir: str | None = None,
    model: Model | None = None,
    thinking_level: ModelThinkingLevel | None = None,
    scoped_models: Sequence[ScopedModel] = (),
    tools: Sequence[str] | None = None,
    exclude_tools: Sequence[str] | None = None,
    no_tools: NoTools | None = None,
    custom_tools: Sequence[AgentTool] = (),
    session_manager: SessionManager | None = None,
    settings_manager: SettingsManager | None = None,
    model_runtime: ModelRuntime | None = None,
    permission_gate: PermissionGate | None = None,
    run_budget: RunBudget | None = None,
    project_trusted: bool | None = None,
    sleep: Sleep = abortable_sleep_ms,
    resource_loader: ResourceLoader | None = None,
    resource_flags: ResourceFlags | None = None,
) -> CreateAgentSessionResult:
    """Build a ready session; every collaborator not passed is created from `cwd` and `agent_dir`.

    Without `resource_loader` one is built from the settings, the project trust and `resource_flags` (the CLI's
    `--skill`/`--no-skills`/`--prompt-template`/`--no-prompt-templates`). Its skills catalog joins the system
    prompt, and `skill_search` is activated when skills are loaded and `read` is active (unless excluded).
    """
    resolved_cwd = str(Path(cwd if cwd is not None else os.getcwd()).absolute())
    resolved_agent_dir = str(agent_dir if agent_dir is not None else get_agent_dir())
    warnings: list[str] = []

    if settings_manager is None:
        settings_manager = SettingsManager.create(resolved_cwd, resolved_agent_dir, project_trusted=False)
        if project_trusted is None:
            decision = resolve_project_trusted(
                resolved_cwd,
                TrustStore(Path(resolved_agent_dir) / "trust.json"),
                default_trust=settings_manager.get("defaultProjectTrust"),
                warn=warnings.append,
            )
            project_trusted = decision.trusted
        settings_manager.set_project_trusted(project_trusted)
    trusted = settings_manager.project_trusted if project_trusted is None else project_trusted
    warnings.extend(str(error) for error in settings_manager.drain_errors())

    if model_runtime is None:
        model_runtime = ModelRuntime.create(resolved_agent_dir)
    warnings.extend(model_runtime.drain_warnings())
    if session_manager is None:
        directory = resolve_session_dir(resolved_cwd, None, settings_manager.get("sessionDir"))
        session_manager = SessionManager.create(resolved_cwd, directory)
    if permission_gate is None:
        permission_gate = PermissionGate.load(resolved_cwd, resolved_agent_dir, project_trusted=trusted)

    context_files = discover_context_files(resolved_cwd, resolved_agent_dir, warn=warnings.append)

    env_cell = _SessionEnvironmentCell()
    shell_path = settings_manager.get("shellPath")
    prefix = settings_manager.get("shellCommandPrefix")
    options = ToolsOptions(
        bash=BashToolOptions(
            shell_path=os.path.expanduser(shell_path) if isinstance(shell_path, str) else None,
            command_prefix=prefix if isinstance(prefix, str) else None,
            agent_dir=resolved_agent_dir,
            session_environment=env_cell,
        ),
        agent_dir=resolved_agent_dir,
    )
    if resource_loader is None:
        resource_loader = ResourceLoader(
            resolved_cwd, resolved_agent_dir, settings_manager, project_trusted=trusted, flags=resource_flags
        )
        warnings.extend(str(d) for d in resource_loader.diagnostics)

    builtins = {name: create_tool(name, resolved_cwd, options) for name in ALL_TOOL_NAMES}
    active = select_tools(builtins, custom_tools, tools, exclude_tools, no_tools)
    skill_source = resource_loader
    if (
        no_tools != "all"
        and SKILL_SEARCH_TOOL_NAME not in set(exclude_tools or ())
        and all(t.name != SKILL_SEARCH_TOOL_NAME for t in active)
        and should_activate_skill_search(skill_source.skills, [t.name for t in active])
    ):
        active.append(SkillSearchTool(lambda: skill_source.skills))

    append = find_append_prompt(resolved_cwd, resolved_agent_dir, project_trusted=trusted)
    system_prompt = build_system_prompt(
        PromptInputs(
            cwd=resolved_cwd,
            tools=[_prompt_info(tool) for tool in active],
            custom_prompt=find_custom_prompt(resolved_cwd, resolved_agent_dir, project_trusted=trusted),
            append=[append] if append else [],
            context_files=context_files,
            skills_catalog=resource_loader.skills_catalog(),
            tool_selection_given=tools is not None,
        )
    )

    chosen, fallback_message = _restore_model(model_runtime, settings_manager, session_manager, model)
    level = _restore_thinking(settings_manager, session_manager, chosen, thinking_level)
    context = session_manager.build_session_context()
    messages = [m for m in context.messages if not isinstance(m, SystemMessage)]
    budgets = settings_manager.get("thinkingBudgets")
    agent = Agent(
        AgentState(system_prompt=system_prompt, model=chosen, thinking_level=level, tools=active, messages=messages),
        convert_to_llm=convert_to_llm,
        steering_mode=_queue_mode(settings_manager, "steeringMode"),
        follow_up_mode=_queue_mode(settings_manager, "followUpMode"),
        thinking_budgets=budgets if isinstance(budgets, dict) else None,
        max_retry_delay_ms=settings_manager.get_int("retry.provider.maxRetryDelayMs", 60000, minimum=0),
        system_messages=False,
    )
    session = AgentSession(
        agent=agent,
        session_manager=session_manager,
        settings_manager=settings_manager,
        model_runtime=model_runtime,
        cwd=resolved_cwd,
        agent_dir=resolved_agent_dir,
        permission_gate=permission_gate,
        run_budget=_run_budget(settings_manager, run_budget),
        scoped_models=scoped_models,
        sleep=sleep,
        resource_loader=resource_loader,
    )
    env_cell.session = session

    if not session_manager.get_entries():
        if chosen is not None:
            session_manager.append_model_change(chosen.provider, chosen.id)
        session_manager.append_thinking_level_change(level)
    elif not context.has_thinking_change or context.thinking_level != level:
        session_manager.append_thinking_level_change(level)
    if model is not None and context.model is not None:
        if (context.model.provider, context.model.model_id) != (model.provider, model.id):
            session_manager.append_model_change(model.provider, model.id)
    return CreateAgentSessionResult(session, fallback_message, None, warnings)


@dataclass
class ForkResult:
    """`selected_text` is the forked user message's text (for the editor); empty for `position="at"`."""

    selected_text: str
    cancelled: bool = False


class AgentSessionRuntime:
    """Owns the current `AgentSession` and replaces it on new/switch/fork (spec sessions.md §9).

    After any replacement `runtime.session` is a new object: the old one is disposed and its subscribers get
    nothing more, so callers re-subscribe. Settings, models and the permission gate carry over while the cwd
    stays the same; a new cwd rebuilds them.
    """

    def __init__(self, result: CreateAgentSessionResult, *, sleep: Sleep = abortable_sleep_ms) -> None:
        self._result = result
        self._sleep = sleep
        self.diagnostics: list[str] = list(result.warnings)

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
    ) -> AgentSession:
        old = self.session
        await old.abort()
        old.dispose()
        if old.session_manager is not manager:
            old.session_manager.close()
        same_cwd = os.path.realpath(manager.cwd) == os.path.realpath(old.cwd)
        result = await create_agent_session(
            cwd=manager.cwd,
            agent_dir=old.agent_dir,
            model=model,
            thinking_level=thinking_level,
            scoped_models=old.scoped_models,
            tools=[t.name for t in old.agent.state.tools],
            # Built-ins (and skill_search) are rebuilt for the new cwd; every other tool the caller supplied carries over.
            custom_tools=[
                t for t in old.agent.state.tools if not isinstance(t, (*BUILTIN_TOOL_TYPES, SkillSearchTool))
            ],
            session_manager=manager,
            settings_manager=old.settings_manager if same_cwd else None,
            model_runtime=old.model_runtime,
            permission_gate=old.permission_gate if same_cwd else None,
            run_budget=old.run_budget,
            sleep=self._sleep,
            resource_loader=old.resource_loader if same_cwd else None,
            resource_flags=old.resource_loader.flags if old.resource_loader is not None else None,
        )
        self._result = result
        self.diagnostics.extend(result.warnings)
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

    async def new_session(self, parent_session: str | None = None) -> AgentSession:
        """A fresh session in the same session dir (in memory stays in memory), keeping model and thinking."""
        old = self.session
        manager = self._fresh_manager(old.session_manager, parent_session)
        return await self._replace(manager, model=old.model, thinking_level=old.thinking_level)

    async def switch_session(self, path: str | Path) -> AgentSession:
        """Open another session file; its cwd must exist."""
        old = self.session
        manager = SessionManager.open(path, old.session_manager.session_dir)
        if not os.path.isdir(manager.cwd):
            manager.close()
            raise FileNotFoundError(f"Stored session working directory does not exist: {manager.cwd}")
        return await self._replace(manager)

    async def fork(self, entry_id: str, position: Literal["before", "at"] = "before") -> ForkResult:
        """`before`: a new session ending just before user message `entry_id` (its text is returned);
        `at`: a new session holding the path up to and including `entry_id` (clone)."""
        old = self.session
        current = old.session_manager
        entry = current.get_entry(entry_id)
        text = self._user_text(entry) if position == "before" else ""
        if entry is None or text is None:
            raise ValueError("Invalid entry ID for forking")
        if position == "before" and entry.parent_id is None:
            manager = self._fresh_manager(current, old.session_file)
        else:
            # A persisted session is re-read so the old session's manager never changes under it.
            file = current.session_file
            source = SessionManager.open(file, current.session_dir) if file is not None and current.is_written else None
            manager = source if source is not None else current
            manager.create_branched_session(entry_id if position == "at" else entry.parent_id or "")
        await self._replace(manager, model=old.model, thinking_level=old.thinking_level)
        return ForkResult(text)

    async def import_from_jsonl(self, path: str | Path, cwd_override: str | None = None) -> AgentSession:
        """Copy a session JSONL into the session dir (same base name; never overwriting another file) and switch
        to it. Bad lines are kept and skipped on load; a missing or non-session file raises `ExportError`."""
        old = self.session
        directory = old.session_manager.session_dir
        if directory is None:
            directory = resolve_session_dir(old.cwd, None, old.settings_manager.get("sessionDir"))
        imported = import_session_jsonl(path, directory)
        manager = SessionManager.open(imported.path, directory, cwd_override)
        if not os.path.isdir(manager.cwd):
            manager.close()
            raise FileNotFoundError(f"Stored session working directory does not exist: {manager.cwd}")
        return await self._replace(manager)

    @staticmethod
    def _user_text(entry: object) -> str | None:
        if isinstance(entry, MessageEntry):
            return first_user_text(entry.message)
        return None

    async def dispose(self) -> None:
        session = self.session
        await session.abort()
        session.dispose()
        session.session_manager.close()


async def create_agent_session_runtime(*, sleep: Sleep = abortable_sleep_ms, **kwargs: object) -> AgentSessionRuntime:
    """Spec name for `AgentSessionRuntime.create`."""
    return await AgentSessionRuntime.create(sleep=sleep, **kwargs)


__all__ = [
    "BUILTIN_TOOL_TYPES",
    "AgentSessionRuntime",
    "CreateAgentSessionResult",
    "ForkResult",
    "NoTools",
    "create_agent_session",
    "create_agent_session_runtime",
    "select_tools",
]
