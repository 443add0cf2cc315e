"""Building the session runtime from parsed flags: one path for print, JSON, RPC and the interactive app.

Startup order: global + CLI extensions -> `--help` -> project trust (`project_trust`
handlers, the saved answer, `defaultProjectTrust`, then the interactive selector when one is given) -> project
settings, extensions and packages -> models (`--model`, `--models` or the `enabledModels` setting) -> session ->
permission gate -> resources -> `create_agent_session`.

Nothing here prints or exits: messages come back in `RuntimeBuild` for the caller to show (the CLI on stderr, the
app in its transcript). `-r` is the caller's: the app clears `args.resume` and opens its picker itself.
"""

from __future__ import annotations

import fnmatch
import io
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from apex_ai.thinking import MODEL_THINKING_LEVELS
from apex_coding_agent.cli.args import Args
from apex_coding_agent.cli.help import help_text
from apex_coding_agent.cli.models import ModelArgumentError, ModelChoice, list_models, resolve_model
from apex_coding_agent.cli.session import SessionArgumentError, choose_session
from apex_coding_agent.core.auth_storage import AuthError
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate, Responder
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.core.trust import TrustFileError, TrustPrompt
from apex_coding_agent.extensions.bindings import Mode, UiBinding
from apex_coding_agent.extensions.llama.catalog import CACHE_FILE
from apex_coding_agent.extensions.llama.extension import create_llama_extension
from apex_coding_agent.extensions.llama.hub import HF_BASE_URL
from apex_coding_agent.extensions.runner import ExtensionRunner
from apex_coding_agent.mcp_servers import McpHost, bind_mcp_runtime, create_mcp_extension
from apex_coding_agent.package_manager import ResolvedPackages
from apex_coding_agent.paths import resolve_session_dir
from apex_coding_agent.resources import ResourceFlags, ResourceLoader
from apex_coding_agent.resources.loader import PackageResource
from apex_coding_agent.runtime import AgentSessionRuntime, ScopedModel, create_agent_session
from apex_coding_agent.runtime.extension_startup import (
    StartupExtensions,
    decide_project_trust,
    discover_startup_resources,
    load_project_extensions,
    load_startup_extensions,
)
from apex_coding_agent.session.file_errors import SessionFileError, SessionLockedError


@dataclass
class RuntimeBuild:
    """The outcome of `build_runtime_from_args`.

    `runtime` is None when the run stops here: `exit_code` says how (0 after `--help` / `--list-models`, whose
    text is in `output`; 1 after an error). `warnings` and `errors` are lines in the order they arose, worded as
    the CLI writes them to stderr (warnings may start with `Warning: `, errors with `Error: `).
    """

    runtime: AgentSessionRuntime | None = None
    exit_code: int = 0
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    output: str = ""
    settings: SettingsManager | None = None
    project_trusted: bool = False
    package_themes: list[PackageResource] = field(default_factory=list)
    """Themes of the installed packages (`ResolvedPackages.loader_resources("themes")`), for the app's theme
    catalog (`package_themes=`); empty when the run stopped before packages were resolved."""

    def fail(self, *lines: str) -> RuntimeBuild:
        self.errors.extend(lines)
        self.exit_code = 1
        return self


def _settings_type_errors(build: RuntimeBuild, settings: SettingsManager) -> bool:
    """Fail the build when a known setting has a value of the wrong type: the run would otherwise go on with a
    value the user did not ask for. The files are left as they are. True when the build failed."""
    problems = settings.type_errors
    if not problems:
        return False
    wrong = {e.message for e in problems}
    build.warnings.extend(str(e) for e in settings.drain_errors() if e.message not in wrong)
    build.fail(*(f"Error: {e.message}" for e in problems))
    return True


BOOLEAN_WORDS = {
    "true": True,
    "1": True,
    "yes": True,
    "on": True,
    "false": False,
    "0": False,
    "no": False,
    "off": False,
}
"""The values a boolean extension flag takes from the argument after it (`--fast false`); any other argument there
is a message (`--fast "do the task"`)."""


def apply_extension_flags(args: Args, runner: ExtensionRunner) -> None:
    """Record `--name[=value]` values for the flags extensions registered (`pi.get_flag`).

    The parser cannot know which flags are boolean, so `--flag word` took `word` as the value; for a boolean flag a
    `word` that is no boolean goes back to `args.messages` where it stood, and the flag is set."""
    registered = {flag.name: flag for flag in runner.get_flags()}
    returned: list[tuple[int, str]] = []
    for name, value in list(args.extension_flags.items()):
        flag = registered.get(name)
        if flag is None:
            continue
        position = args.extension_flag_positions.pop(name, None)
        if flag.type == "boolean" and isinstance(value, str):
            word = BOOLEAN_WORDS.get(value.lower())
            if word is None and position is not None:
                returned.append((position, value))
                args.extension_flags[name] = True
            runner.set_flag_value(name, word if word is not None else True)
        else:
            runner.set_flag_value(name, value)
    for offset, (position, text) in enumerate(sorted(returned)):
        args.messages.insert(position + offset, text)


def unknown_flag_warnings(args: Args, runner: ExtensionRunner) -> list[str]:
    """One warning per `--name` that neither the CLI nor any loaded extension knows (a typo, a missing `-e`): such a
    flag may have taken the prompt after it as its value, and the run would otherwise send nothing, silently."""
    known = {flag.name for flag in runner.get_flags()}
    out: list[str] = []
    for name, value in args.extension_flags.items():
        if name in known:
            continue
        taken = f'; "{value}" was taken as its value' if name in args.extension_flag_positions else ""
        out.append(f"Warning: unknown option --{name} (no extension registers it){taken}")
    return out


def resolve_scoped_models(
    models: ModelRuntime, patterns: Sequence[str], warn: Callable[[str], None]
) -> list[ScopedModel]:
    """`--models` / `enabledModels`: each pattern (`id`, `provider/id` or a glob, optional `:<thinking level>`)
    names available models, in first-match order without repeats; a pattern naming none calls `warn` with
    `No models match pattern "<pattern>"`."""
    out: list[ScopedModel] = []
    seen: set[tuple[str, str]] = set()
    for raw in patterns:
        head, sep, tail = raw.rpartition(":")
        level = next((candidate for candidate in MODEL_THINKING_LEVELS if sep and candidate == tail), None)
        pattern = head if level is not None else raw
        if any(c in pattern for c in "*?["):
            lowered = pattern.lower()
            found = [
                m
                for m in models.available_models()
                if fnmatch.fnmatchcase(m.id.lower(), lowered)
                or fnmatch.fnmatchcase(f"{m.provider}/{m.id}".lower(), lowered)
            ]
        else:
            try:
                choice = resolve_model(models, None, pattern)
            except ModelArgumentError:
                choice = None
            found = [choice.model] if choice is not None and models.is_available(choice.model) else []
        if not found:
            warn(f'No models match pattern "{raw}"')
        for model in found:
            if (model.provider, model.id) not in seen:
                seen.add((model.provider, model.id))
                out.append(ScopedModel(model, level))
    return out


def no_model_error(agent_dir: str | Path) -> str:
    """The error of a headless run without a usable model."""
    return (
        "Error: no model available. Set a provider key (e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY), "
        f"add a provider to {Path(agent_dir) / 'models.json'}, or pass --provider/--model."
    )


async def _extensions_and_trust(
    build: RuntimeBuild,
    args: Args,
    *,
    cwd: str,
    agent_dir: str,
    settings: SettingsManager,
    models: ModelRuntime,
    mode: Mode,
    ui: UiBinding | None,
    trust_prompt: TrustPrompt | None,
    mcp_host: McpHost,
) -> tuple[StartupExtensions, ResolvedPackages] | None:
    """Extensions, `--help`, trust, project settings and packages; None when the run stops (see `build`)."""
    startup = await load_startup_extensions(
        cwd=cwd,
        agent_dir=agent_dir,
        settings=settings,
        cli_sources=args.extensions,
        no_extensions=args.no_extensions,
        # None: the extension registers `/llama` only when `session_start` reports the interactive app.
        inline=[
            create_llama_extension(
                get_credential=models.auth.get,
                interactive=None,
                cache_path=Path(agent_dir) / CACHE_FILE,
                # A Hugging Face mirror, named the way the Hugging Face tools name it.
                hub_url=os.environ.get("HF_ENDPOINT") or HF_BASE_URL,
            ),
            create_mcp_extension(mcp_host),
        ],
        ui=ui,
        mode=mode,
    )
    runner = startup.runner
    apply_extension_flags(args, runner)
    if args.help:
        build.output = help_text(runner)
        return None
    build.warnings.extend(f"Warning: {warning}" for warning in startup.warnings)
    try:
        decision = await decide_project_trust(
            runner,
            cwd,
            agent_dir,
            approve=args.approve,
            default_trust=settings.get("defaultProjectTrust"),
            warn=build.warnings.append,
            prompt=trust_prompt,
        )
    except TrustFileError as exc:
        build.fail(f"Error: {exc}")
        return None
    build.project_trusted = decision.trusted
    settings.set_project_trusted(decision.trusted)
    if _settings_type_errors(build, settings):
        return None
    build.warnings.extend(str(error) for error in settings.drain_errors())
    packages = await load_project_extensions(
        startup,
        cwd=cwd,
        agent_dir=agent_dir,
        settings=settings,
        project_trusted=decision.trusted,
        no_extensions=args.no_extensions,
    )
    build.warnings.extend(f"Warning: {warning}" for warning in packages.warnings if warning not in startup.warnings)
    apply_extension_flags(args, runner)
    build.warnings.extend(unknown_flag_warnings(args, runner))
    build.warnings.extend(f"Warning: {d.message} ({d.path})" for d in startup.diagnostics)
    if startup.errors:
        build.fail(*startup.error_lines())
        return None
    return startup, packages


def _choose_model(build: RuntimeBuild, args: Args, models: ModelRuntime) -> tuple[bool, ModelChoice | None]:
    """`--provider`/`--model`/`--api-key`: (whether the run goes on, the chosen model or None)."""
    try:
        choice = resolve_model(models, args.provider, args.model)
    except ModelArgumentError as exc:
        build.fail(f"Error: {exc}")
        return False, None
    if args.api_key is not None:
        if choice is None:
            build.fail("Error: --api-key needs a model: pass --model (and --provider)")
            return False, None
        models.auth.set_runtime_key(choice.model.provider, args.api_key)
    return True, choice


async def build_runtime_from_args(
    args: Args,
    *,
    cwd: str,
    agent_dir: str | Path,
    mode: Mode,
    trust_prompt: TrustPrompt | None = None,
    responder: Responder | None = None,
    no_model_is_error: bool = True,
    model_runtime: ModelRuntime | None = None,
    ui: UiBinding | None = None,
) -> RuntimeBuild:
    """The session runtime for `args` (see the module docstring for the order); never prints.

    `mode` is the extensions' `ctx.mode` (`tui` for the app); `ui` their `ctx.ui` until the host sets its own.
    `trust_prompt` asks about an untrusted project (None: such a project stays untrusted). `responder` answers
    the permission gate's questions. With `no_model_is_error` False a runtime without a model is returned (the
    app explains how to add one). `model_runtime` replaces the one read from `agent_dir` (tests).
    Extensions are loaded but not started: the host calls `runtime.start_extensions()` once its UI is set.
    """
    agent_dir = str(agent_dir)
    build = RuntimeBuild()
    settings = SettingsManager.create(cwd, agent_dir, project_trusted=False)
    build.settings = settings
    if not args.help and _settings_type_errors(build, settings):
        return build
    models = model_runtime if model_runtime is not None else ModelRuntime.create(agent_dir)
    try:
        # An unreadable auth.json is a clear error now, not a failure deep in start-up; a bad entry is only a
        # warning: the run may well use another provider.
        build.warnings.extend(f"Warning: {problem}" for problem in models.auth.problems())
    except AuthError as exc:
        return build.fail(f"Error: {exc}")
    mcp_host = McpHost(agent_dir)
    loaded = await _extensions_and_trust(
        build,
        args,
        cwd=cwd,
        agent_dir=agent_dir,
        settings=settings,
        models=models,
        mode=mode,
        ui=ui,
        trust_prompt=trust_prompt,
        mcp_host=mcp_host,
    )
    if loaded is None:
        return build
    startup, packages = loaded
    trusted = build.project_trusted
    build.package_themes = packages.loader_resources("themes")

    startup.runner.flush_providers(models)
    build.warnings.extend(models.drain_warnings())
    if args.list_models:
        out = io.StringIO()
        build.exit_code = list_models(models, args.list_models_search, out)
        build.output = out.getvalue()
        return build
    go_on, choice = _choose_model(build, args, models)
    if not go_on:
        return build
    patterns = [str(p) for p in (args.models or settings.get("enabledModels") or [])]
    scoped = resolve_scoped_models(models, patterns, lambda text: build.warnings.append(f"Warning: {text}"))

    session_dir = resolve_session_dir(cwd, args.session_dir, settings.get("sessionDir"))
    try:
        chosen_session = choose_session(args, cwd, session_dir)
    except (SessionArgumentError, SessionFileError, SessionLockedError) as exc:
        return build.fail(str(exc) if isinstance(exc, SessionArgumentError) else f"Error: {exc}")
    build.warnings.extend(chosen_session.warnings)

    gate = PermissionGate.load(
        cwd,
        agent_dir,
        flag_mode=args.permission_mode,  # type: ignore[arg-type]  # validated by the argument parser
        allowed_tools=args.allowed_tools,
        project_trusted=trusted,
        responder=responder,
    )
    # Said at start-up: otherwise the first sign of a broken rule file is every tool call failing.
    build.warnings.extend(
        f"Warning: could not load {message}; every tool call is refused until it is fixed"
        for message in gate.load_error_messages
    )
    discovered = await discover_startup_resources(startup.runner, cwd)
    build.package_themes.extend(discovered.themes)
    loader = ResourceLoader(
        cwd,
        agent_dir,
        settings,
        project_trusted=trusted,
        flags=ResourceFlags.from_args(args),
        package_skills=[*packages.loader_resources("skills"), *discovered.skills],
        package_prompts=[*packages.loader_resources("prompts"), *discovered.prompts],
    )
    build.warnings.extend(str(diagnostic) for diagnostic in loader.diagnostics)
    no_tools = "all" if args.no_tools else ("builtin" if args.no_builtin_tools else None)
    result = await create_agent_session(
        cwd=cwd,
        agent_dir=agent_dir,
        model=choice.model if choice is not None else None,
        # validated by the argument parser / the model pattern's suffix
        thinking_level=args.thinking or (choice.thinking if choice is not None else None),  # type: ignore[arg-type]
        tools=args.tools,
        exclude_tools=args.exclude_tools,
        no_tools=no_tools,  # type: ignore[arg-type]  # one of the two literals or None
        session_manager=chosen_session.manager,
        settings_manager=settings,
        model_runtime=models,
        permission_gate=gate,
        project_trusted=trusted,
        scoped_models=scoped,
        resource_loader=loader,
        extension_runner=startup.runner,
        system_prompt=args.system_prompt,
        append_system_prompt=args.append_system_prompt or None,
        no_context_files=args.no_context_files,
        # The app shows a session's newest messages first and completes the rest once it runs: its sessions leave
        # their context messages unprojected until then (the runtime's replacement sessions too).
        defer_messages=mode == "tui",
    )
    build.warnings.extend(result.warnings)
    if result.model_fallback_message:
        build.warnings.append(f"Warning: {result.model_fallback_message}")
    runtime = AgentSessionRuntime(result)
    bind_mcp_runtime(mcp_host, runtime)
    runtime.extension_theme_paths = discovered.theme_paths
    if args.name is not None:
        runtime.session.set_session_name(args.name)
    if runtime.session.model is None and no_model_is_error:
        await runtime.dispose()
        return build.fail(no_model_error(agent_dir))
    build.runtime = runtime
    return build


__all__ = [
    "RuntimeBuild",
    "apply_extension_flags",
    "build_runtime_from_args",
    "unknown_flag_warnings",
    "no_model_error",
    "resolve_scoped_models",
]
