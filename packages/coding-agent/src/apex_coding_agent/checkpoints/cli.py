"""The command line of checkpoints: `apex-code --session S --rewind ENTRY [--rewind-mode M] [--overwrite PATH]...`
and `apex-code checkpoints gc` (remove blobs no session refers to). Both print JSON on stdout."""

from __future__ import annotations

import asyncio
import json
import math
import os
from typing import TYPE_CHECKING, TextIO

from apex_coding_agent.checkpoints.manifest import RewindMode

if TYPE_CHECKING:
    from apex_coding_agent.cli.args import Args

MODES: tuple[RewindMode, ...] = ("all", "conversation", "files")
GC_USAGE = "usage: apex-code checkpoints gc [--grace-seconds N]\n"
GC_HELP = (
    "\nRemove the file checkpoints (blobs) no session refers to any more; prints one JSON line\n"
    '{"removed", "freedBytes", "kept"}. Blobs younger than --grace-seconds (default 3600) stay: a running\n'
    "session may not have recorded them yet. The same as `apex-code sessions gc`. See docs/checkpoints.md.\n"
)


def run(argv: list[str], out: TextIO, err: TextIO) -> int:
    """`apex-code checkpoints gc`: remove blobs no session file refers to (older than the grace period)."""
    from apex_coding_agent.checkpoints.gc import DEFAULT_GRACE_SECONDS

    if argv and argv[0] in ("-h", "--help", "help"):
        out.write(GC_USAGE + GC_HELP)
        return 0
    if not argv or argv[0] != "gc":
        err.write(GC_USAGE)
        return 1
    grace = float(DEFAULT_GRACE_SECONDS)
    if len(argv) == 3 and argv[1] == "--grace-seconds":
        try:
            grace = parse_grace(argv[2])
        except ValueError as exc:
            err.write(f"Error: {exc}\n")
            return 1
    elif len(argv) != 1:
        err.write(GC_USAGE)
        return 1
    return run_gc(grace, out, err)


def parse_grace(text: str) -> float:
    """The value of `--grace-seconds`: a finite number of seconds, zero or more (ValueError says what is wrong)."""
    try:
        grace = float(text)
    except ValueError:
        grace = math.nan
    if not math.isfinite(grace) or grace < 0:
        raise ValueError(f"--grace-seconds needs a number of seconds, zero or more (got {text!r})")
    return grace


def run_gc(grace_seconds: float, out: TextIO, err: TextIO) -> int:
    """Collect the blobs no session of the sessions folder (or the configured `sessionDir`) refers to; print the
    report as one JSON line. Shared by `apex-code checkpoints gc` and `apex-code sessions gc`. Exit code 1 when a
    session file could not be read (then nothing was removed)."""
    from apex_coding_agent.checkpoints.gc import collect_unreferenced_blobs
    from apex_coding_agent.core.settings import SettingsManager
    from apex_coding_agent.paths import get_agent_dir, resolve_session_dir

    agent_dir = get_agent_dir()
    cwd = os.getcwd()
    settings = SettingsManager.create(cwd, agent_dir, project_trusted=False)
    report = collect_unreferenced_blobs(
        agent_dir, [resolve_session_dir(cwd, None, settings.get("sessionDir"))], grace_seconds
    )
    line: dict[str, object] = {"removed": report.removed, "freedBytes": report.freed_bytes, "kept": report.kept}
    if report.unreadable:
        line["unreadable"] = list(report.unreadable)
    out.write(json.dumps(line) + "\n")
    for path in report.unreadable:
        err.write(f"Error: cannot read {path}; no blob was removed (its checkpoints would be lost)\n")
    return 1 if report.unreadable else 0


def run_rewind(args: Args, err: TextIO, out: TextIO) -> int:
    """`--rewind ENTRY` on the session `--session` names; the result as one JSON line."""
    if args.session is None:
        err.write("Error: --rewind needs --session (the session to rewind)\n")
        return 1
    mode = args.rewind_mode or "all"
    if mode not in MODES:
        err.write(f"Error: --rewind-mode requires one of: {', '.join(MODES)} (got {mode!r})\n")
        return 1
    return asyncio.run(_rewind(args, mode, err, out))


async def _rewind(args: Args, mode: str, err: TextIO, out: TextIO) -> int:
    from apex_coding_agent.cli.session import SessionArgumentError, choose_session
    from apex_coding_agent.core.settings import SettingsManager
    from apex_coding_agent.paths import get_agent_dir, resolve_session_dir
    from apex_coding_agent.runtime.create import create_agent_session

    cwd = os.getcwd()
    agent_dir = get_agent_dir()
    settings = SettingsManager.create(cwd, agent_dir, project_trusted=False)
    session_dir = resolve_session_dir(cwd, args.session_dir, settings.get("sessionDir"))
    try:
        manager = choose_session(args, cwd, session_dir).manager
    except SessionArgumentError as exc:
        err.write(f"{exc}\n")
        return 1
    try:
        session_cwd = manager.get_header().cwd or cwd
        created = await create_agent_session(
            cwd=session_cwd,
            agent_dir=str(agent_dir),
            session_manager=manager,
            settings_manager=SettingsManager.create(session_cwd, agent_dir, project_trusted=False),
        )
        session = created.session
        checkpoints = session.checkpoints
        if checkpoints.pending_restore:
            written, conflicts = checkpoints.recover("complete")
            err.write(f"Completed an interrupted restore: {len(written)} files, {len(conflicts)} conflicts\n")
        try:
            result = await checkpoints.rewind(args.rewind or "", MODES[MODES.index(mode)], args.overwrite)
        except ValueError as exc:
            err.write(f"Error: {exc}\n")
            return 1
        out.write(json.dumps(result.to_wire()) + "\n")
        for conflict in result.conflicts:
            err.write(f"Conflict: {conflict.path}: {conflict.reason} (kept as it is; --overwrite {conflict.path})\n")
        for skipped in result.skipped:
            err.write(f"Not restored: {skipped.path}: {skipped.reason}\n")
        session.dispose()
        return 2 if result.conflicts else 0
    finally:
        manager.close()


__all__ = ["parse_grace", "run", "run_gc", "run_rewind"]
