"""The `apex-code` entry point.

The module imports only the standard library at the top: `--version` and `--help` answer without
loading pydantic or a provider SDK, and a real run imports the rest once it needs it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from apex_coding_agent import __version__
from apex_coding_agent.cli.help import HELP

# Type checkers treat a constant named TYPE_CHECKING as true; at run time nothing below is imported, and
# `typing` itself stays unloaded on the `--version` path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

    from apex_coding_agent.cli.args import Args

INTERACTIVE_ENTRY_POINT_GROUP = "apex_code.interactive"
PACKAGE_COMMANDS = frozenset({"install", "remove", "uninstall", "update", "list", "config"})
# Subcommands with a module of their own: `apex-code NAME ...` calls `run(argv, stdout, stderr) -> int` of the
# module named here, imported only when the subcommand is used (the start-up path stays stdlib-only).
SUBCOMMANDS: dict[str, str] = {
    "batch": "apex_coding_agent.batch.cli",
    "checkpoints": "apex_coding_agent.checkpoints.cli",
    "mcp": "apex_coding_agent.mcp_servers.cli",
    "sessions": "apex_coding_agent.cli.sessions_command",
}


def _err(text: str) -> None:
    if sys.stderr is None:  # started with stderr closed: there is nowhere to say anything
        return
    try:
        sys.stderr.write(text if text.endswith("\n") else text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _isatty(stream: object) -> bool:
    """`stream.isatty()`, False for a stream that is closed or was never opened (`sys.stdin` is None then)."""
    try:
        return bool(stream is not None and stream.isatty())  # type: ignore[attr-defined]  # any text stream
    except (OSError, ValueError):
        return False


def _stderr_to_devnull() -> None:
    """Started with fd 2 closed (`2>&-`): put /dev/null there. Left free, fd 2 would go to the next file opened (a
    session file, say), and every warning or log line would be written into it."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        if fd != 2:
            os.dup2(fd, 2)
            os.close(fd)
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    except OSError:
        pass


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null once its reader is gone, so the flush at exit cannot fail with a broken pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


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
    if sys.stdin is None:  # started with stdin closed
        return None
    try:
        data = sys.stdin.read()
    except (OSError, ValueError):
        return None
    return data if data.strip() else None


def _install_signal_handlers() -> None:
    """SIGTERM -> 143, SIGHUP -> 129: kill the commands we started, then leave without an envelope."""
    import signal

    from apex_coding_agent.tools.output_accumulator import remove_output_logs
    from apex_coding_agent.tools.shell import kill_tracked_process_groups

    def leave(code: int) -> None:
        kill_tracked_process_groups()
        remove_output_logs()  # os._exit skips atexit
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


async def _run_headless(args: Args, mode: str, stdin_text: str | None) -> int:
    # Imported here: the shared startup path loads pydantic, the settings and the extension machinery.
    from apex_coding_agent.cli.startup import build_runtime_from_args
    from apex_coding_agent.initial_message import FileArgumentError, build_initial_message
    from apex_coding_agent.paths import get_agent_dir

    cwd = os.getcwd()
    build = await build_runtime_from_args(
        args,
        cwd=cwd,
        agent_dir=get_agent_dir(),
        mode="rpc" if mode == "rpc" else ("json" if mode == "json" else "print"),
    )
    if build.output:
        sys.stdout.write(build.output)
        sys.stdout.flush()
    for line in (*build.warnings, *build.errors):
        _err(line)
    runtime = build.runtime
    from apex_coding_agent.collector import resume_collection_after_import

    model = runtime.session.model if runtime is not None else None
    resume_collection_after_import(model.api if model is not None else None)
    if runtime is None:
        return build.exit_code
    if mode == "rpc":
        from apex_coding_agent.modes.rpc.rpc_mode import run_rpc_mode

        return await run_rpc_mode(runtime)

    from apex_coding_agent.modes.print_mode import run_print_mode

    first = args.messages[0] if args.messages else None
    try:
        initial = build_initial_message(stdin_text, args.files, first, cwd)
    except FileArgumentError as exc:
        _err(f"Error: {exc}")
        await runtime.dispose()
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


def _exit_now(code: int) -> NoReturn:
    """Leave the process without interpreter teardown, once all output is written.

    Tearing down after the provider SDKs were imported (module dicts, pydantic models, httpx pools) costs 0.3-0.5 s
    at the end of every print run. By the time this runs the session file is closed and the event loop is gone;
    only the standard streams still hold bytes, so they are flushed first.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # a closed or broken pipe (`apex-code -p .. | head`): nothing more can be written anyway
    listing = sys.modules.get("apex_coding_agent.session.listing")
    if listing is not None:  # a first listing's index build would be cut off half-way otherwise
        listing.wait_for_index_builds()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `apex-code` console script; returns the exit code.

    Called without `argv` it is the process entry (the console script or `python -m`): a print or JSON run then
    ends the process itself after its output is flushed (see `_exit_now`). With `argv` (tests, embedding) it always
    returns.

    Nothing leaves as a traceback: Ctrl+C outside a run exits 130, a reader that went away 141 (both silently), and
    any other unexpected exception becomes one `Error:` line and exit 1 (`--verbose` adds the traceback).
    """
    if sys.stderr is None:
        _stderr_to_devnull()
    if sys.stdout is None:
        # Started with fd 1 closed (`apex-code ... >&-`): the next file opened would take fd 1 and receive output
        # meant for the terminal, and the answer would go nowhere.
        _err("Error: standard output is closed; apex-code writes its output there (redirect it, e.g. >/dev/null)")
        return 1
    exit_fast = argv is None
    raw = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(raw, exit_fast)
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:
        _silence_stdout()
        code = 141
    except Exception as exc:
        if "--verbose" in raw:
            import traceback

            traceback.print_exc()
        first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
        detail = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
        hint = "" if "--verbose" in raw else " (--verbose shows where)"
        _err(f"Error: unexpected {detail}{hint}")
        code = 1
    if exit_fast:
        _exit_now(code)
    return code


def _main(raw: list[str], exit_fast: bool) -> int:
    if raw in (["--version"], ["-v"]):
        # Answered before anything else is imported: scripts call this to probe for the tool.
        sys.stdout.write(f"{__version__}\n")
        return 0
    from apex_coding_agent.cli.args import PERMISSION_MODES, parse_args, resolve_mode

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

    if raw and raw[0] in SUBCOMMANDS:
        import importlib

        module = importlib.import_module(SUBCOMMANDS[raw[0]])
        subcommand_code: int = module.run(raw[1:], sys.stdout, sys.stderr)
        return subcommand_code

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
    if args.rewind is not None:
        from apex_coding_agent.checkpoints.cli import run_rewind

        return run_rewind(args, sys.stderr, sys.stdout)

    mode = resolve_mode(args, stdin_is_tty=_isatty(sys.stdin), stdout_is_tty=_isatty(sys.stdout))
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
    stdin_text = _read_stdin() if mode in ("text", "json") and not _isatty(sys.stdin) and not args.help else None
    if exit_fast:
        from apex_coding_agent.collector import pause_collection
        from apex_coding_agent.log_lines import log_to_stderr

        pause_collection()  # resumed by _run_headless once the provider SDK is in
        log_to_stderr()

    import asyncio

    _install_signal_handlers()
    code = asyncio.run(_run_headless(args, mode, stdin_text))
    if code == 141:
        _silence_stdout()
    if exit_fast and mode in ("text", "json"):
        _exit_now(code)
    return code
