"""Building a session: `create_agent_session`.

Startup order: settings -> project trust -> project settings -> context files -> tools -> system prompt ->
model (session -> settings default -> first available) -> thinking level (session -> `defaultThinkingLevel` ->
`medium`, clamped) -> agent. A new session starts with `model_change` and `thinking_level_change` entries.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias

from apex_agent.agent import Agent, AgentState
from apex_agent.messages import AgentMessage
from apex_agent.tools import AgentTool
from apex_agent.types import QueueMode, RunBudget
from apex_ai.api_registry import preload_api
from apex_ai.retry import Sleep, abortable_sleep_ms
from apex_ai.thinking import MODEL_THINKING_LEVELS, clamp_level
from apex_ai.types import Model, ModelThinkingLevel, SystemMessage
from apex_coding_agent.core.context_files import discover_context_files
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.core.system_prompt import (
    PromptInputs,
    build_system_prompt,
)
from apex_coding_agent.core.trust import TrustStore, resolve_project_trusted
from apex_coding_agent.extensions.loader import (
    InlineExtension,
    LoadExtensionsResult,
    load_extensions,
)
from apex_coding_agent.extensions.runner import ExtensionRunner
from apex_coding_agent.messages import convert_to_llm
from apex_coding_agent.paths import get_agent_dir, resolve_session_dir
from apex_coding_agent.resources import ResourceFlags, ResourceLoader, SkillSearchTool, should_activate_skill_search
from apex_coding_agent.resources.skill_search import SKILL_SEARCH_TOOL_NAME
from apex_coding_agent.runtime.agent_session import AgentSession
from apex_coding_agent.runtime.extension_binding import SessionExtensionBinding
from apex_coding_agent.runtime.extension_reload import (
    ExtensionResources,
    discover_startup_resources,
    replace_extension_resources,
)
from apex_coding_agent.runtime.model_selector import ScopedModel
from apex_coding_agent.runtime.prompt_sources import BUILTIN_TOOL_TYPES, PromptSources, prompt_info, prompt_options
from apex_coding_agent.runtime.session_parts import PromptSetup, RunOptions, SessionServices
from apex_coding_agent.session.context import LazyContextMessages, ModelRef
from apex_coding_agent.session.session_manager import SessionManager
from apex_coding_agent.tools import (
    ALL_TOOL_NAMES,
    DEFAULT_TOOL_NAMES,
    BashToolOptions,
    SessionEnvironment,
    ToolsOptions,
    create_tool,
)

NoTools: TypeAlias = Literal["all", "builtin"]


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
    """The active tools: allowlist over built-ins and custom tools, then the denylist.

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
        extension_runner.flush_providers(model_runtime)
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

    sources = PromptSources(
        resolved_cwd, resolved_agent_dir, trusted, system_prompt, append_system_prompt, no_context_files, context_files
    )
    sources.read_prompt_files()
    loader_for_prompt = resource_loader

    def build_prompt(selected: Sequence[AgentTool]) -> str:
        return build_system_prompt(
            PromptInputs(
                cwd=resolved_cwd,
                tools=[prompt_info(tool) for tool in selected],
                custom_prompt=sources.custom_prompt,
                append=sources.append_parts,
                context_files=sources.context_files,
                skills_catalog=loader_for_prompt.skills_catalog(),
                tool_selection_given=tools is not None,
            )
        )

    system_prompt_text = build_prompt(active)
    options_for_hooks = prompt_options(
        resolved_cwd, active, sources.custom_prompt, sources.append_parts, sources.context_files, resource_loader
    )

    def reload_prompt_sources() -> list[str]:
        warnings = sources.reload()
        fresh = prompt_options(
            resolved_cwd, [], sources.custom_prompt, sources.append_parts, sources.context_files, loader_for_prompt
        )
        options_for_hooks.custom_prompt = fresh.custom_prompt
        options_for_hooks.append_system_prompt = fresh.append_system_prompt
        options_for_hooks.context_files = fresh.context_files
        options_for_hooks.skills = fresh.skills
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
            system_prompt_options=options_for_hooks,
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


__all__ = [
    "BUILTIN_TOOL_TYPES",
    "CreateAgentSessionResult",
    "NoTools",
    "PromptOverrides",
    "create_agent_session",
    "select_tools",
]
