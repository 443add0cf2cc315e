"""The `apex-code` command (spec modes.md §1).

The module imports only the standard library at the top: `--version` and `--help` answer without
loading pydantic or a provider SDK, and a real run imports the rest once it needs it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from apex_coding_agent import __version__

# Type checkers treat a constant named TYPE_CHECKING as true; at run time nothing below is imported, and
# `typing` itself stays unloaded on the `--version` path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from apex_coding_agent.cli_args import Args
    from apex_coding_agent.core.model_runtime import ModelRuntime
    from apex_coding_agent.extensions.runner import ExtensionRunner
    from apex_coding_agent.runtime import AgentSessionRuntime, ScopedModel

INTERACTIVE_ENTRY_POINT_GROUP = "apex_code.interactive"
PACKAGE_COMMANDS = frozenset({"install", "remove", "uninstall", "update", "list", "config"})

HELP = """\
apex-code - a minimal terminal coding agent

Usage:
  apex-code [options] [@files...] [messages...]
  apex-code install|remove|update|list|config ...   manage packages

Modes:
  (default)                   interactive terminal app (package apex-tui)
  -p, --print [msg]           run the prompt(s), print the final answer, exit
      --mode text|json|rpc    text output, a JSON event stream, or a JSONL RPC server on stdin/stdout
      --permission-mode MODE  required without the terminal app: default, plan, acceptEdits,
                              bypassPermissions, dontAsk

Model:
      --provider NAME         provider of --model
      --model PATTERN         id, provider/id or a glob, with an optional :thinking suffix
      --api-key KEY           key for this run (not saved)
      --thinking LEVEL        off, minimal, low, medium, high, xhigh, max
      --models LIST           models to cycle through (comma separated)
      --list-models [TEXT]    list models that have a key, then exit

Sessions:
  -c, --continue              continue the most recent session of this directory
  -r, --resume                pick a session to resume (terminal app)
      --session PATH|ID       open a session file or id
      --session-id ID         open or create the session with exactly this id
      --fork PATH|ID          copy a session into a new one and continue there
      --session-dir DIR       where sessions are stored
      --no-session            keep the session in memory only
  -n, --name NAME             name the session
      --export FILE [OUT]     write a session as HTML, then exit

Tools and resources:
  -t, --tools LIST            only these tools (read, bash, edit, write, grep, find, ls, ...)
  -xt, --exclude-tools LIST   not these tools
  -nbt, --no-builtin-tools    no built-in tools
  -nt, --no-tools             no tools at all
      --allowed-tools LIST    allow these tools without asking
  -e, --extension SOURCE      load an extension (repeatable)
  -ne, --no-extensions        do not discover extensions
      --skill PATH            load a skill (repeatable);  -ns, --no-skills
      --prompt-template PATH  load prompt templates;      -np, --no-prompt-templates
      --theme PATH            load a theme;               --no-themes
  -nc, --no-context-files     do not read AGENTS.md / CLAUDE.md
      --system-prompt TEXT    replace the system prompt (text or a file)
      --append-system-prompt TEXT   add to it (repeatable)
  -a, --approve / -na, --no-approve   trust or ignore this project's own configuration for this run
      --tui-mode regular|fullscreen
      --offline               no network at startup
      --verbose
  -h, --help                  show this help
  -v, --version               show the version
"""


def _err(text: str) -> None:
    sys.stderr.write(text if text.endswith("\n") else text + "\n")
    sys.stderr.flush()


def _run_interactive(argv: Sequence[str]) -> int:
    # Imported here: entry point discovery costs a few milliseconds we do not spend on --version.
    from importlib.metadata import entry_points

    found = list(entry_points(group=INTERACTIVE_ENTRY_POINT_GROUP))
    if not found:
        _err(
            "apex-code: the interactive app is not installed.\n"
            "Install it with `pip install apex-tui`, or run headless with -p / --mode json / --mode rpc "
            "and --permission-mode."
        )
        return 1
    run = found[0].load()
    result = run(list(argv))
    return int(result) if result is not None else 0


def _read_stdin() -> str | None:
    try:
        data = sys.stdin.read()
    except (OSError, ValueError):
        return None
    return data if data.strip() else None


def _install_signal_handlers() -> None:
    """SIGTERM -> 143, SIGHUP -> 129: kill the commands we started, then leave without an envelope."""
    import signal

    from apex_coding_agent.tools.shell import kill_tracked_process_groups

    def leave(code: int) -> None:
        kill_tracked_process_groups()
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        os._exit(code)

    signal.signal(signal.SIGTERM, lambda *_: leave(143))
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, lambda *_: leave(129))


def _may_load_extensions(args: Args) -> bool:
    """Whether any extension could load (standard library only: `--help` stays fast without extensions)."""
    import json

    from apex_coding_agent.paths import get_agent_dir

    if args.extensions:
        return True
    if args.no_extensions:
        return False
    agent_dir = get_agent_dir()
    directory = agent_dir / "extensions"
    if directory.is_dir() and any(not p.name.startswith((".", "_")) for p in directory.iterdir()):
        return True
    try:
        data = json.loads((agent_dir / "settings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and bool(data.get("extensions") or data.get("packages"))


def _help_text(runner: ExtensionRunner | None = None) -> str:
    """The help, with the flags extensions registered (modes.md §1: printed after extensions load)."""
    flags = runner.get_flags() if runner is not None else []
    if not flags:
        return HELP
    lines = ["", "Extension flags:"]
    for flag in flags:
        name = f"--{flag.name}" + (" VALUE" if flag.type == "string" else "")
        lines.append(f"      {name:<22}  {flag.description or ''}".rstrip())
    return HELP + "\n".join(lines) + "\n"


def _apply_extension_flags(args: Args, runner: ExtensionRunner) -> None:
    """Record `--name[=value]` values for the flags extensions registered (`pi.get_flag`)."""
    registered = {flag.name: flag for flag in runner.get_flags()}
    for name, value in args.extension_flags.items():
        flag = registered.get(name)
        if flag is None:
            continue
        if flag.type == "boolean" and isinstance(value, str):
            runner.set_flag_value(name, value.lower() not in ("false", "0", "no", "off"))
        else:
            runner.set_flag_value(name, value)


def _scoped_models(models: ModelRuntime, patterns: Sequence[str]) -> list[ScopedModel]:
    """`--models`: each pattern (`id`, `provider/id`, glob, optional `:thinking`) -> the available models it names."""
    import fnmatch

    from apex_coding_agent.cli_models import ModelArgumentError, resolve_model
    from apex_coding_agent.runtime import ScopedModel

    out: list[ScopedModel] = []
    seen: set[tuple[str, str]] = set()
    levels = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
    for raw in patterns:
        head, sep, tail = raw.rpartition(":")
        pattern, thinking = (head, tail) if sep and tail in levels else (raw, None)
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
            _err(f'Warning: No models match pattern "{raw}"')
        for model in found:
            if (model.provider, model.id) not in seen:
                seen.add((model.provider, model.id))
                out.append(ScopedModel(model, thinking))  # type: ignore[arg-type]  # a member of `levels`
    return out


async def _build_runtime(args: Args, cwd: str, mode: str) -> tuple[AgentSessionRuntime | None, int]:
    """The runtime for a headless run, or (None, exit code) after printing why there is none.

    Startup order (settings-and-trust.md §6): global + CLI extensions -> `--help` -> project trust (asking
    `project_trust` handlers) -> project settings, extensions and packages -> resources -> session.
    """
    from pathlib import Path

    from apex_coding_agent.cli_models import ModelArgumentError, list_models, resolve_model
    from apex_coding_agent.cli_session import SessionArgumentError, choose_session
    from apex_coding_agent.core.model_runtime import ModelRuntime
    from apex_coding_agent.core.permissions import PermissionGate
    from apex_coding_agent.core.settings import SettingsManager
    from apex_coding_agent.core.trust import TrustFileError
    from apex_coding_agent.extensions.llama_extension import create_llama_extension
    from apex_coding_agent.paths import get_agent_dir, resolve_session_dir
    from apex_coding_agent.resources import ResourceFlags, ResourceLoader
    from apex_coding_agent.runtime import AgentSessionRuntime, create_agent_session
    from apex_coding_agent.runtime.extension_startup import (
        decide_project_trust,
        load_project_extensions,
        load_startup_extensions,
    )
    from apex_coding_agent.session.session_file import SessionFileError, SessionLockedError

    agent_dir = str(get_agent_dir())
    settings = SettingsManager.create(cwd, agent_dir, project_trusted=False)
    models = ModelRuntime.create(agent_dir)
    startup = await load_startup_extensions(
        cwd=cwd,
        agent_dir=agent_dir,
        settings=settings,
        cli_sources=args.extensions,
        no_extensions=args.no_extensions,
        inline=[create_llama_extension(get_credential=models.auth.get, interactive=False)],
        mode="rpc" if mode == "rpc" else ("json" if mode == "json" else "print"),
    )
    runner = startup.runner
    _apply_extension_flags(args, runner)
    if args.help:
        sys.stdout.write(_help_text(runner))
        return None, 0
    for warning in startup.warnings:
        _err(f"Warning: {warning}")
    try:
        trusted = (
            await decide_project_trust(
                runner,
                cwd,
                agent_dir,
                approve=args.approve,
                default_trust=settings.get("defaultProjectTrust"),
                warn=_err,
            )
        ).trusted
    except TrustFileError as exc:
        _err(f"Error: {exc}")
        return None, 1
    settings.set_project_trusted(trusted)
    for error in settings.drain_errors():
        _err(str(error))
    packages = await load_project_extensions(
        startup,
        cwd=cwd,
        agent_dir=agent_dir,
        settings=settings,
        project_trusted=trusted,
        no_extensions=args.no_extensions,
    )
    for warning in packages.warnings:
        if warning not in startup.warnings:
            _err(f"Warning: {warning}")
    _apply_extension_flags(args, runner)
    for diagnostic in startup.diagnostics:
        _err(f"Warning: {diagnostic.message} ({diagnostic.path})")
    if startup.errors:
        for line in startup.error_lines():
            _err(line)
        return None, 1

    runner.flush_providers(models.registry)
    for warning in models.drain_warnings():
        _err(warning)
    if args.list_models:
        return None, list_models(models, args.list_models_search, sys.stdout)
    try:
        choice = resolve_model(models, args.provider, args.model)
    except ModelArgumentError as exc:
        _err(f"Error: {exc}")
        return None, 1
    if args.api_key is not None:
        if choice is None:
            _err("Error: --api-key needs a model: pass --model (and --provider)")
            return None, 1
        models.auth.set_runtime_key(choice.model.provider, args.api_key)

    session_dir = resolve_session_dir(cwd, args.session_dir, settings.get("sessionDir"))
    try:
        chosen_session = choose_session(args, cwd, session_dir)
    except (SessionArgumentError, SessionFileError, SessionLockedError) as exc:
        _err(str(exc) if isinstance(exc, SessionArgumentError) else f"Error: {exc}")
        return None, 1
    for warning in chosen_session.warnings:
        _err(warning)

    gate = PermissionGate.load(
        cwd,
        agent_dir,
        flag_mode=args.permission_mode,  # type: ignore[arg-type]  # validated by the argument parser
        allowed_tools=args.allowed_tools,
        project_trusted=trusted,
    )
    no_tools = "all" if args.no_tools else ("builtin" if args.no_builtin_tools else None)
    thinking = args.thinking or (choice.thinking if choice is not None else None)
    loader = ResourceLoader(
        cwd,
        agent_dir,
        settings,
        project_trusted=trusted,
        flags=ResourceFlags.from_args(args),
        package_skills=packages.loader_resources("skills"),
        package_prompts=packages.loader_resources("prompts"),
    )
    for resource_diagnostic in loader.diagnostics:
        _err(str(resource_diagnostic))
    result = await create_agent_session(
        cwd=cwd,
        agent_dir=agent_dir,
        model=choice.model if choice is not None else None,
        thinking_level=thinking,  # type: ignore[arg-type]  # validated by the argument parser
        tools=args.tools,
        exclude_tools=args.exclude_tools,
        no_tools=no_tools,  # type: ignore[arg-type]  # one of the two literals or None
        session_manager=chosen_session.manager,
        settings_manager=settings,
        model_runtime=models,
        permission_gate=gate,
        project_trusted=trusted,
        scoped_models=_scoped_models(models, args.models) if args.models else (),
        resource_loader=loader,
        extension_runner=runner,
        system_prompt=args.system_prompt,
        append_system_prompt=args.append_system_prompt or None,
        no_context_files=args.no_context_files,
    )
    for warning in result.warnings:
        _err(warning)
    if result.model_fallback_message:
        _err(f"Warning: {result.model_fallback_message}")
    runtime = AgentSessionRuntime(result)
    if args.name is not None:
        runtime.session.set_session_name(args.name)
    if runtime.session.model is None:
        _err(
            "Error: no model available. Set a provider key (e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY), "
            f"add a provider to {Path(agent_dir) / 'models.json'}, or pass --provider/--model."
        )
        runtime.session.dispose()
        return None, 1
    return runtime, 0


async def _run_headless(args: Args, mode: str, stdin_text: str | None) -> int:
    from apex_coding_agent.initial_message import FileArgumentError, build_initial_message

    cwd = os.getcwd()
    runtime, code = await _build_runtime(args, cwd, mode)
    if runtime is None:
        return code
    if mode == "rpc":
        from apex_coding_agent.modes.rpc.rpc_mode import run_rpc_mode

        return await run_rpc_mode(runtime)

    from apex_coding_agent.modes.print_mode import run_print_mode

    first = args.messages[0] if args.messages else None
    try:
        initial = build_initial_message(stdin_text, args.files, first, cwd)
    except FileArgumentError as exc:
        _err(f"Error: {exc}")
        runtime.session.dispose()
        return 1
    try:
        return await run_print_mode(
            runtime,
            "json" if mode == "json" else "text",
            initial.text or None,
            initial.images,
            args.messages[1:],
        )
    finally:
        await runtime.dispose()


def _export(args: Args) -> int:
    from apex_coding_agent.export import ExportError, export_session_html

    assert args.export is not None
    try:
        path = export_session_html(args.export, args.export_output)
    except (ExportError, OSError) as exc:
        _err(f"Error: {exc}")
        return 1
    sys.stdout.write(f"Exported to: {path}\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `apex-code` console script; returns the exit code."""
    raw = list(sys.argv[1:] if argv is None else argv)
    if raw in (["--version"], ["-v"]):
        # Answered before anything else is imported: scripts call this to probe for the tool.
        sys.stdout.write(f"{__version__}\n")
        return 0
    from apex_coding_agent.cli_args import PERMISSION_MODES, parse_args, resolve_mode

    os.environ["APEX_CODE_CODING_AGENT"] = "true"
    os.environ["PI_CODING_AGENT"] = "true"
    if "--offline" in raw or os.environ.get("APEX_CODE_OFFLINE", "").lower() in ("1", "true", "yes"):
        os.environ["APEX_CODE_OFFLINE"] = "1"
        os.environ["APEX_CODE_SKIP_VERSION_CHECK"] = "1"
    if raw and raw[0] in PACKAGE_COMMANDS:
        from apex_coding_agent.package_manager import run_package_command
        from apex_coding_agent.paths import get_agent_dir

        code: int = run_package_command(raw, get_agent_dir(), os.getcwd(), sys.stdout, sys.stderr)
        return code

    args = parse_args(raw)
    for diagnostic in args.diagnostics:
        if diagnostic.level == "warning":
            _err(f"Warning: {diagnostic.message}")
    if args.errors:
        for error in args.errors:
            _err(f"Error: {error}")
        return 1
    if args.version:
        sys.stdout.write(f"{__version__}\n")
        return 0
    if args.help and not _may_load_extensions(args):
        sys.stdout.write(HELP)
        return 0
    if args.export is not None:
        return _export(args)

    mode = resolve_mode(args, stdin_is_tty=sys.stdin.isatty(), stdout_is_tty=sys.stdout.isatty())
    if mode == "interactive" and not args.list_models and not args.help:
        return _run_interactive(raw)
    if args.permission_mode is None and not args.list_models and not args.help:
        _err(
            "Error: Non-interactive sessions require an explicit --permission-mode. "
            f"Valid modes: {', '.join(PERMISSION_MODES)}."
        )
        return 1
    if mode == "rpc" and args.files:
        _err("Error: @file arguments are not supported in RPC mode")
        return 1
    stdin_text = _read_stdin() if mode in ("text", "json") and not sys.stdin.isatty() and not args.help else None

    import asyncio

    _install_signal_handlers()
    return asyncio.run(_run_headless(args, mode, stdin_text))


if __name__ == "__main__":  # pragma: no cover - `python -m apex_coding_agent.cli`
    sys.exit(main())
