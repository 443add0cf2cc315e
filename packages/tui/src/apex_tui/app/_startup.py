"""Building the session runtime for the interactive app (the interactive twin of the CLI's `_build_runtime`).

Differences from the headless path: trust may be asked with a picker (`trust_prompt`), problems are collected as
transcript warnings instead of printed, and a missing model is not an error (the app shows how to add one).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from apex_ai.thinking import MODEL_THINKING_LEVELS
from apex_coding_agent.cli_args import Args, parse_args
from apex_coding_agent.cli_models import ModelArgumentError, resolve_model
from apex_coding_agent.cli_session import SessionArgumentError, choose_session
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate, Responder
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.core.trust import TrustFileError, TrustPrompt, TrustStore, resolve_project_trusted
from apex_coding_agent.paths import get_agent_dir, resolve_session_dir
from apex_coding_agent.runtime import AgentSessionRuntime, ScopedModel, create_agent_session
from apex_coding_agent.session.session_file import SessionFileError, SessionLockedError


class StartupError(Exception):
    """The app cannot start (bad flags, unreadable trust file, locked session); the message is printed."""


@dataclass
class Startup:
    """What the app needs from startup: the runtime, where things live, and warnings to show."""

    runtime: AgentSessionRuntime
    args: Args
    cwd: str
    agent_dir: Path
    settings: SettingsManager
    warnings: list[str] = field(default_factory=list)
    resume_picker: bool = False
    """`-r`: the app opens the resume picker over a fresh session once it runs."""


def parse_interactive_args(argv: Sequence[str]) -> Args:
    """Parse flags; raises StartupError on errors."""
    args = parse_args(list(argv))
    if args.errors:
        raise StartupError("\n".join(f"Error: {e}" for e in args.errors))
    return args


def resolve_trust(args: Args, cwd: str, agent_dir: Path, prompt: TrustPrompt | None) -> tuple[bool, list[str]]:
    """Project trust (settings-and-trust.md §6), asking with `prompt` when the flow gets that far."""
    warnings: list[str] = []
    settings = SettingsManager.create(cwd, str(agent_dir), project_trusted=False)
    try:
        decision = resolve_project_trusted(
            cwd,
            TrustStore(agent_dir / "trust.json"),
            approve=args.approve,
            default_trust=settings.get("defaultProjectTrust"),
            prompt=prompt,
            warn=warnings.append,
        )
    except TrustFileError as exc:
        raise StartupError(f"Error: {exc}") from exc
    return decision.trusted, warnings


async def build_startup(
    args: Args,
    *,
    cwd: str | None = None,
    agent_dir: Path | None = None,
    trusted: bool = True,
    model_runtime: ModelRuntime | None = None,
    responder: Responder | None = None,
) -> Startup:
    """Create the session runtime from parsed flags. Raises StartupError for what must stop the app."""
    cwd = cwd or os.getcwd()
    agent_dir = agent_dir or get_agent_dir()
    warnings: list[str] = []
    settings = SettingsManager.create(cwd, str(agent_dir), project_trusted=trusted)
    warnings.extend(str(error) for error in settings.drain_errors())
    models = model_runtime or ModelRuntime.create(agent_dir)
    warnings.extend(models.drain_warnings())
    try:
        choice = resolve_model(models, args.provider, args.model)
    except ModelArgumentError as exc:
        warnings.append(str(exc))
        choice = None
    if args.api_key is not None and choice is not None:
        models.auth.set_runtime_key(choice.model.provider, args.api_key)
    session_dir = resolve_session_dir(cwd, args.session_dir, settings.get("sessionDir"))
    resume_picker = bool(args.resume)
    # `-r` starts a fresh session; the picker, shown once the app runs, switches away from it.
    args.resume = False
    try:
        chosen = choose_session(args, cwd, session_dir)
    except (SessionArgumentError, SessionFileError, SessionLockedError) as exc:
        raise StartupError(str(exc) if isinstance(exc, SessionArgumentError) else f"Error: {exc}") from exc
    warnings.extend(chosen.warnings)
    gate = PermissionGate.load(
        cwd,
        agent_dir,
        flag_mode=args.permission_mode,  # type: ignore[arg-type]  # validated by the argument parser
        allowed_tools=args.allowed_tools,
        project_trusted=trusted,
        responder=responder,
    )
    no_tools = "all" if args.no_tools else ("builtin" if args.no_builtin_tools else None)
    patterns = args.models or settings.get("enabledModels") or []
    scoped = scoped_models(models, [str(p) for p in patterns], warnings.append) if patterns else []
    result = await create_agent_session(
        cwd=cwd,
        agent_dir=str(agent_dir),
        model=choice.model if choice is not None else None,
        thinking_level=args.thinking or (choice.thinking if choice is not None else None),  # type: ignore[arg-type]
        tools=args.tools,
        exclude_tools=args.exclude_tools,
        no_tools=no_tools,  # type: ignore[arg-type]  # one of the two literals or None
        session_manager=chosen.manager,
        settings_manager=settings,
        model_runtime=models,
        permission_gate=gate,
        project_trusted=trusted,
        scoped_models=scoped,
        system_prompt=args.system_prompt,
        append_system_prompt=args.append_system_prompt or None,
        no_context_files=args.no_context_files,
    )
    warnings.extend(result.warnings)
    if result.model_fallback_message:
        warnings.append(result.model_fallback_message)
    runtime = AgentSessionRuntime(result)
    if args.name is not None:
        runtime.session.set_session_name(args.name)
    return Startup(runtime, args, cwd, agent_dir, settings, warnings, resume_picker=resume_picker)


def scoped_models(models: ModelRuntime, patterns: Sequence[str], warn: Callable[[str], None]) -> list[ScopedModel]:
    """`--models` / `enabledModels`: each pattern (`id`, `provider/id` or a glob, optional `:<thinking level>`)
    names available models, first match order, no repeats; a pattern naming none gives a warning."""
    out: list[ScopedModel] = []
    seen: set[str] = set()
    for raw in patterns:
        head, sep, tail = raw.rpartition(":")
        pattern, level = (head, tail) if sep and tail in MODEL_THINKING_LEVELS else (raw, None)
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
            key = f"{model.provider}/{model.id}"
            if key not in seen:
                seen.add(key)
                out.append(ScopedModel(model, level))
    return out


def no_model_help(agent_dir: Path) -> str:
    """Markdown shown when no model is usable (no key, no models.json provider)."""
    models_json = agent_dir / "models.json"
    return (
        "**No model available.** Apex Code needs a provider key or a custom provider.\n\n"
        "- Set a key in the environment before starting, e.g. `export ANTHROPIC_API_KEY=...` or "
        "`export OPENAI_API_KEY=...`\n"
        f"- Or add a provider to `{models_json}`, for example:\n\n"
        "```json\n"
        '{"providers": {"local": {"baseUrl": "http://localhost:8080/v1", "api": "openai-completions",\n'
        '  "apiKey": "none", "models": [{"id": "my-model"}]}}}\n'
        "```\n\n"
        "Then restart, or run `/model` after `/reload`. `/quit` leaves."
    )
