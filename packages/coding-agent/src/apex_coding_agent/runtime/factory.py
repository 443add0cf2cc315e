"""Building sessions (spec modes.md §9, sessions.md §9): `create_agent_session` and `AgentSessionRuntime`.

Startup order: settings -> project trust -> project settings -> context files -> tools -> system prompt ->
model (session -> settings default -> first available) -> thinking level (session -> `defaultThinkingLevel` ->
`medium`, clamped) -> agent. A new session starts with `model_change` and `thinking_level_change` entries, as
the pi captures do.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, TypeAlias, TypeVar

from apex_agent.agent import Agent, AgentState
from apex_agent.messages import AgentMessage
from apex_agent.tools import AgentTool
from apex_agent.types import QueueMode, RunBudget
from apex_ai.api_registry import preload_api
from apex_ai.retry import Sleep, abortable_sleep_ms
from apex_ai.thinking import MODEL_THINKING_LEVELS, clamp_level
from apex_ai.types import Model, ModelThinkingLevel, SystemMessage
from apex_coding_agent.core.context_files import ContextFile, discover_context_files
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
    read_prompt_source,
)
from apex_coding_agent.core.trust import TrustStore, resolve_project_trusted
from apex_coding_agent.extensions import events as ext
from apex_coding_agent.extensions.loader import (
    ExtensionDiagnostic,
    ExtensionLoadError,
    InlineExtension,
    LoadExtensionsResult,
    load_extensions,
)
from apex_coding_agent.extensions.runner import DiscoveredResources, ExtensionRunner
from apex_coding_agent.extensions.tool_wrapper import ExtensionTool
from apex_coding_agent.messages import convert_to_llm
from apex_coding_agent.paths import get_agent_dir, resolve_session_dir
from apex_coding_agent.resources import ResourceFlags, ResourceLoader, SkillSearchTool, should_activate_skill_search
from apex_coding_agent.resources.skill_search import SKILL_SEARCH_TOOL_NAME
from apex_coding_agent.runtime.agent_session import AgentSession, PromptSetup, RunOptions, ScopedModel, SessionServices
from apex_coding_agent.runtime.extension_host import RuntimeExtensionActions, SessionExtensionBinding
from apex_coding_agent.runtime.extension_reload import (
    ExtensionResources,
    ReloadEntry,
    discover_startup_resources,
    entries_of,
    extension_resources,
    merge_rediscovered,
    reimport_extensions,
    replace_extension_resources,
)
from apex_coding_agent.session.context import LazyContextMessages, ModelRef
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
from apex_coding_agent.tools.output_accumulator import remove_output_logs

NoTools: TypeAlias = Literal["all", "builtin"]
BUILTIN_TOOL_TYPES: tuple[type[AgentTool], ...] = (ReadTool, BashTool, EditTool, WriteTool, GrepTool, FindTool, LsTool)


@dataclass(frozen=True)
class PromptOverrides:
    system_prompt: str | None = None
    append_system_prompt: tuple[str, ...] | None = None
    no_context_files: bool = False


@dataclass
class CreateAgentSessionResult:
    session: AgentSession
    model_fallback_message: str | None = None
    """Set when the session's stored model could not be restored and another one was chosen."""
    extensions_result: LoadExtensionsResult | None = None
    """What loading the `extensions` option produced (errors, conflicts); None when none were given."""
    warnings: list[str] = field(default_factory=list)
    extension_runner: ExtensionRunner | None = None
    prompt_overrides: PromptOverrides = field(default_factory=lambda: PromptOverrides())
    """The `system_prompt`/`append_system_prompt`/`no_context_files` options, carried into replacements."""
    extension_theme_paths: list[str] = field(default_factory=list)
    """Theme paths the startup `resources_discover` round sent here returned (empty when the caller sent it)."""
    defer_messages: bool = False
    """The session's context messages were deferred (`create_agent_session(defer_messages=...)`); a runtime builds
    its replacement sessions the same way."""


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


def _stored_settings(manager: SessionManager) -> tuple[str | None, ModelRef | None]:
    """The active branch's last thinking level (None without a `thinking_level_change`) and model, read by the
    session layer's cheap scan (a reopened long session must not build its context more than once at startup)."""
    stored = manager.get_stored_model_and_thinking()
    return (stored.thinking_level if stored.has_thinking_change else None), stored.model


def _not_system(message: object) -> bool:
    return not isinstance(message, SystemMessage)


def _context_messages(manager: SessionManager) -> LazyContextMessages:
    """The active branch's context messages without system messages (the agent gets those from its prompt),
    equal to `build_session_context().messages` filtered, projected on demand."""
    return LazyContextMessages(manager.get_branch_records(), keep=_not_system)


def _restore_model(
    runtime: ModelRuntime, settings: SettingsManager, stored: ModelRef | None, explicit: Model | None
) -> tuple[Model | None, str | None]:
    if explicit is not None:
        return explicit, None
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
    settings: SettingsManager, stored: str | None, model: Model | None, explicit: ModelThinkingLevel | None
) -> ModelThinkingLevel:
    if model is None:
        return "off"
    level = explicit
    if level is None and stored is not None:
        level = _as_level(stored)
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
    extension_runner: ExtensionRunner | None = None,
    extensions: Sequence[InlineExtension] = (),
    system_prompt: str | None = None,
    append_system_prompt: Sequence[str] | None = None,
    no_context_files: bool = False,
    defer_messages: bool = False,
) -> CreateAgentSessionResult:
    """Build a ready session; every collaborator not passed is created from `cwd` and `agent_dir`.

    Extensions: `extension_runner` (already loaded, e.g. by the CLI) or `extensions` (inline factories loaded
    here into a new runner). Their providers are flushed into the model registry, their tools join the active
    set, and the session is bound to the runtime (`session_start` is the host's to emit, once its UI is set).
    When `extensions` are loaded here, `resources_discover{reason: "startup"}` is sent (unless the runner's startup
    round already went out, as the CLI sends it itself) and its skill/prompt paths join the resource loader's
    package resources, its theme paths `extension_theme_paths` of the result.
    `system_prompt` replaces the custom prompt and `append_system_prompt` the `APPEND_SYSTEM.md` discovery
    (values naming a file are read); `no_context_files` skips AGENTS.md/CLAUDE.md.

    Without `resource_loader` one is built from the settings, the project trust and `resource_flags` (the CLI's
    `--skill`/`--no-skills`/`--prompt-template`/`--no-prompt-templates`). Its skills catalog joins the system
    prompt, and `skill_search` is activated when skills are loaded and `read` is active (unless excluded).

    `defer_messages` leaves the context's messages unprojected: the agent gets the full list on the first use of
    `session.agent`, and a host may show `session.deferred_messages`' newest ones first and complete them in slices
    (`session.load_messages_step`). Otherwise the context is built here, as `build_session_context` builds it.
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
    extensions_result: LoadExtensionsResult | None = None
    if extensions:
        ext_runtime = extension_runner.runtime if extension_runner is not None else None
        loaded_runtime, extensions_result = await load_extensions((), ext_runtime, inline=extensions)
        if extension_runner is None:
            extension_runner = ExtensionRunner(loaded_runtime)
        warnings.extend(error.message() for error in extensions_result.errors)
    if extension_runner is not None:
        extension_runner.runtime.cwd = resolved_cwd
        extension_runner.flush_providers(model_runtime.registry)
    discovered = ExtensionResources()
    if extensions and extension_runner is not None:
        # Sent once every extension is loaded and before the resource loader reads its paths, as the CLI does.
        discovered = await discover_startup_resources(extension_runner, resolved_cwd)
    if session_manager is None:
        directory = resolve_session_dir(resolved_cwd, None, settings_manager.get("sessionDir"))
        session_manager = SessionManager.create(resolved_cwd, directory)
    if permission_gate is None:
        permission_gate = PermissionGate.load(resolved_cwd, resolved_agent_dir, project_trusted=trusted)
    stored_level, stored_model = _stored_settings(session_manager)
    chosen, fallback_message = _restore_model(model_runtime, settings_manager, stored_model, model)
    if chosen is not None:
        # The provider SDK import (anthropic: ~1 s) runs in a daemon thread while the rest of startup and the
        # host (RPC reading stdin, the app drawing) go on; the first `get_api` waits for it.
        preload_api(chosen.api)

    context_files = (
        []
        if no_context_files
        else discover_context_files(resolved_cwd, resolved_agent_dir, warn=warnings.append, project_trusted=trusted)
    )

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
        read_filter=permission_gate.read_filter,
    )
    if resource_loader is None:
        resource_loader = ResourceLoader(
            resolved_cwd,
            resolved_agent_dir,
            settings_manager,
            project_trusted=trusted,
            flags=resource_flags,
            package_skills=discovered.skills,
            package_prompts=discovered.prompts,
        )
        warnings.extend(str(d) for d in resource_loader.diagnostics)
    elif discovered.skills or discovered.prompts:
        # A caller's loader already read its paths: the discovered ones join as `/reload` applies them.
        resource_loader.package_skills = replace_extension_resources(resource_loader.package_skills, discovered.skills)
        resource_loader.package_prompts = replace_extension_resources(
            resource_loader.package_prompts, discovered.prompts
        )
        resource_loader.reload()
        warnings.extend(str(d) for d in resource_loader.diagnostics)

    builtins = {name: create_tool(name, resolved_cwd, options) for name in ALL_TOOL_NAMES}
    all_custom = [*custom_tools]
    if extension_runner is not None:
        names = {t.name for t in all_custom}
        all_custom.extend(t for t in extension_runner.get_tools() if t.name not in names)
    active = select_tools(builtins, all_custom, tools, exclude_tools, no_tools)
    skill_source = resource_loader
    if (
        no_tools != "all"
        and SKILL_SEARCH_TOOL_NAME not in set(exclude_tools or ())
        and all(t.name != SKILL_SEARCH_TOOL_NAME for t in active)
        and should_activate_skill_search(skill_source.skills, [t.name for t in active])
    ):
        active.append(SkillSearchTool(lambda: skill_source.skills))
    registry: dict[str, AgentTool] = {**builtins, **{t.name: t for t in all_custom}, **{t.name: t for t in active}}

    sources = _PromptSources(
        resolved_cwd, resolved_agent_dir, trusted, system_prompt, append_system_prompt, no_context_files, context_files
    )
    sources.read_prompt_files()
    loader_for_prompt = resource_loader

    def build_prompt(selected: Sequence[AgentTool]) -> str:
        return build_system_prompt(
            PromptInputs(
                cwd=resolved_cwd,
                tools=[_prompt_info(tool) for tool in selected],
                custom_prompt=sources.custom_prompt,
                append=sources.append_parts,
                context_files=sources.context_files,
                skills_catalog=loader_for_prompt.skills_catalog(),
                tool_selection_given=tools is not None,
            )
        )

    system_prompt_text = build_prompt(active)
    prompt_options = _prompt_options(
        resolved_cwd, active, sources.custom_prompt, sources.append_parts, sources.context_files, resource_loader
    )

    def reload_prompt_sources() -> list[str]:
        warnings = sources.reload()
        fresh = _prompt_options(
            resolved_cwd, [], sources.custom_prompt, sources.append_parts, sources.context_files, loader_for_prompt
        )
        prompt_options.custom_prompt = fresh.custom_prompt
        prompt_options.append_system_prompt = fresh.append_system_prompt
        prompt_options.context_files = fresh.context_files
        prompt_options.skills = fresh.skills
        return warnings

    level = _restore_thinking(settings_manager, stored_level, chosen, thinking_level)
    if defer_messages:
        # Projected on demand: the session hands the agent the full list before anything uses the agent.
        deferred: LazyContextMessages | None = _context_messages(session_manager)
        messages: list[AgentMessage] = []
    else:
        deferred = None
        context = session_manager.build_session_context()  # the only full build: it projects every message
        messages = [m for m in context.messages if not isinstance(m, SystemMessage)]
    budgets = settings_manager.get("thinkingBudgets")
    agent = Agent(
        AgentState(
            system_prompt=system_prompt_text, model=chosen, thinking_level=level, tools=active, messages=messages
        ),
        convert_to_llm=convert_to_llm,
        steering_mode=_queue_mode(settings_manager, "steeringMode"),
        follow_up_mode=_queue_mode(settings_manager, "followUpMode"),
        thinking_budgets=budgets if isinstance(budgets, dict) else None,
        max_retry_delay_ms=settings_manager.get_int("retry.provider.maxRetryDelayMs", 60000, minimum=0),
        system_messages=False,
    )
    session = AgentSession(
        agent,
        SessionServices(
            session_manager=session_manager,
            settings_manager=settings_manager,
            model_runtime=model_runtime,
            cwd=resolved_cwd,
            agent_dir=resolved_agent_dir,
            permission_gate=permission_gate,
            resource_loader=resource_loader,
            extension_runner=extension_runner,
            project_trusted=trusted,
        ),
        prompt=PromptSetup(
            tool_registry=registry,
            system_prompt_builder=build_prompt,
            system_prompt_options=prompt_options,
            prompt_sources_reloader=reload_prompt_sources,
        ),
        run=RunOptions(run_budget=_run_budget(settings_manager, run_budget), scoped_models=scoped_models, sleep=sleep),
        deferred_messages=deferred,
    )
    env_cell.session = session
    if extension_runner is not None:
        extension_runner.runtime.bind_session(SessionExtensionBinding(session))

    if next(session_manager.iter_records(), None) is None:  # no entry parsed: a reopened long session stays cheap
        if chosen is not None:
            session_manager.append_model_change(chosen.provider, chosen.id)
        session_manager.append_thinking_level_change(level)
    elif stored_level != level:
        session_manager.append_thinking_level_change(level)
    if model is not None and stored_model is not None:
        if (stored_model.provider, stored_model.model_id) != (model.provider, model.id):
            session_manager.append_model_change(model.provider, model.id)
    overrides = PromptOverrides(
        system_prompt, tuple(append_system_prompt) if append_system_prompt else None, no_context_files
    )
    return CreateAgentSessionResult(
        session,
        fallback_message,
        extensions_result,
        warnings,
        extension_runner,
        overrides,
        extension_theme_paths=discovered.theme_paths,
        defer_messages=defer_messages,
    )


class _PromptSources:
    """The files the system prompt is built from (custom prompt, append parts, context files); `reload()` reads
    them again for `/reload` (resources.md §1-2). Explicit `system_prompt`/`append_system_prompt` values that name
    files are re-read too."""

    def __init__(
        self,
        cwd: str,
        agent_dir: str,
        trusted: bool,
        system_prompt: str | None,
        append_system_prompt: Sequence[str] | None,
        no_context_files: bool,
        context_files: list[ContextFile],
    ) -> None:
        self._cwd, self._agent_dir, self._trusted = cwd, agent_dir, trusted
        self._system_prompt, self._append = system_prompt, append_system_prompt
        self._no_context_files = no_context_files
        self.context_files = context_files
        self.custom_prompt: str | None = None
        self.append_parts: list[str] = []

    def read_prompt_files(self) -> None:
        if self._system_prompt is not None:
            self.custom_prompt = read_prompt_source(self._system_prompt, self._cwd)
        else:
            self.custom_prompt = find_custom_prompt(self._cwd, self._agent_dir, project_trusted=self._trusted)
        if self._append:
            self.append_parts = [read_prompt_source(value, self._cwd) for value in self._append]
        else:
            found = find_append_prompt(self._cwd, self._agent_dir, project_trusted=self._trusted)
            self.append_parts = [found] if found else []

    def reload(self) -> list[str]:
        """Read everything again; returns the context-file warnings."""
        warnings: list[str] = []
        self.read_prompt_files()
        if not self._no_context_files:
            self.context_files = discover_context_files(
                self._cwd, self._agent_dir, warn=warnings.append, project_trusted=self._trusted
            )
        return warnings


def _prompt_options(
    cwd: str,
    active: Sequence[AgentTool],
    custom_prompt: str | None,
    append_parts: Sequence[str],
    context_files: Sequence[ContextFile],
    loader: ResourceLoader,
) -> ext.SystemPromptOptions:
    """What the system prompt was built from, for `before_agent_start` handlers."""
    infos = [_prompt_info(tool) for tool in active]
    return ext.SystemPromptOptions(
        custom_prompt=custom_prompt,
        selected_tools=[tool.name for tool in active],
        tool_snippets={info.name: info.snippet for info in infos if info.snippet},
        prompt_guidelines=[line for info in infos for line in info.guidelines],
        append_system_prompt="\n\n".join(append_parts) or None,
        cwd=cwd,
        context_files=[{"path": str(f.path), "content": f.content} for f in context_files],
        skills=[{"name": s.name, "description": s.description} for s in loader.skills],
    )


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
    """Owns the current `AgentSession` and replaces it on new/switch/fork (spec sessions.md §9).

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
        """`/reload` and `ctx.reload()` (resources.md §1, §5): `session_shutdown{reason: "reload"}`, re-import the
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
    """The SDK's runtime constructor (modes.md §9).

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
    "BUILTIN_TOOL_TYPES",
    "AgentSessionRuntime",
    "CreateAgentSessionResult",
    "ForkResult",
    "NoTools",
    "PromptOverrides",
    "ReloadResult",
    "RuntimeFactory",
    "SessionSetup",
    "WithSession",
    "create_agent_session",
    "create_agent_session_runtime",
    "select_tools",
]
