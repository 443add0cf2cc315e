"""Building the session runtime for the interactive app, over the CLI's shared startup path.

`apex_coding_agent.cli.startup.build_runtime_from_args` does the work (extensions, trust, project settings and
packages, models, session, permission gate, resources). The app adds: trust asked with its selector
(`trust_prompt`), problems shown as transcript warnings instead of printed, a missing model that is not an error
(the app shows how to add one), `-r` opening the resume picker once the app runs, and its approval responder.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from apex_coding_agent import (
    AgentSessionRuntime,
    Args,
    ModelRuntime,
    Responder,
    SettingsManager,
    TrustFileError,
    TrustPrompt,
    TrustStore,
    build_runtime_from_args,
    get_agent_dir,
    parse_args,
    resolve_project_trusted,
)


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
    """Project trust alone, asking with `prompt` when the flow gets that far.

    Extensions' `project_trust` handlers are not asked here: the app's startup decides trust inside
    `build_startup` (`trust_prompt`), after loading them.
    """
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
    trust_prompt: TrustPrompt | None = None,
    model_runtime: ModelRuntime | None = None,
    responder: Responder | None = None,
) -> Startup:
    """Create the session runtime from parsed flags; its extensions are loaded, not started (the app
    emits `session_start` once its UI is bound).

    Raises StartupError, carrying every message so far, for what must stop the app.
    """
    cwd = cwd or os.getcwd()
    agent_dir = agent_dir or Path(get_agent_dir())
    resume_picker = bool(args.resume)
    # `-r` starts a fresh session; the picker, shown once the app runs, switches away from it.
    args.resume = False
    # With mode "tui" the session's context messages are left unprojected: `_app` shows the newest first.
    build = await build_runtime_from_args(
        args,
        cwd=cwd,
        agent_dir=agent_dir,
        mode="tui",
        trust_prompt=trust_prompt,
        responder=responder,
        no_model_is_error=False,
        model_runtime=model_runtime,
    )
    if build.runtime is None or build.settings is None:
        raise StartupError("\n".join([*build.warnings, *build.errors]) or build.output)
    # The transcript marks these as warnings already.
    warnings = [line.removeprefix("Warning: ") for line in build.warnings]
    return Startup(build.runtime, args, cwd, agent_dir, build.settings, warnings, resume_picker=resume_picker)


def no_model_help(agent_dir: Path) -> str:
    """Markdown shown when no model is usable (no key, no models.json provider)."""
    models_json = agent_dir / "models.json"
    return (
        "**No model available.** Apex Code needs a provider key or a custom provider.\n\n"
        "Set a key in the environment before starting, e.g. `export ANTHROPIC_API_KEY=...` or "
        f"`export OPENAI_API_KEY=...`, or add a provider to `{models_json}`, for example:\n\n"
        # An indented code block (outside any list): the renderer shows a fenced one with its ``` marks, which a new
        # user would copy along.
        '    {"providers": {"local": {"baseUrl": "http://localhost:8080/v1", "api": "openai-completions",\n'
        '      "apiKey": "none", "models": [{"id": "my-model"}]}}}\n\n'
        "Then restart, or run `/model` after `/reload`. `/quit` leaves."
    )
