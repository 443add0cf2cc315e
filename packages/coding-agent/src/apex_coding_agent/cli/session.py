"""Which session a headless run uses, from `--session`, `--session-id`, `--fork`, `-c`, `--no-session`.
Interactive-only choices (the `-r` picker, the cross-project fork question)
are not made here: a headless run reports them as errors instead of asking.

The chosen session is locked for writing before the run starts: a second process on the same file (or the same
new `--session-id`) is refused at once with the holder's pid, instead of losing its entries later."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from apex_coding_agent.cli.args import Args
from apex_coding_agent.session.file_errors import NotARegularFileError
from apex_coding_agent.session.listing import SessionInfo
from apex_coding_agent.session.session_manager import SessionManager, validate_session_id


class SessionArgumentError(ValueError):
    """A session flag that cannot be honoured; the message is printed as is."""


@dataclass
class SessionChoice:
    manager: SessionManager
    warnings: list[str]


def validate_session_flags(args: Args) -> str | None:
    """The first conflict between session flags, as the error text, or None."""
    if args.fork is not None and (args.session is not None or args.continue_ or args.resume or args.no_session):
        return "--fork cannot be combined with --session, --continue, --resume or --no-session"
    if args.session_id is not None and (args.session is not None or args.continue_ or args.resume):
        return "--session-id cannot be combined with --session, --continue or --resume"
    if args.entry is not None and args.session is None:
        return "--entry needs --session (the session file or id the entry belongs to)"
    return None


def _is_path(arg: str) -> bool:
    return "/" in arg or "\\" in arg or arg.endswith(".jsonl")


def _match(infos: list[SessionInfo], arg: str) -> SessionInfo | None:
    exact = [i for i in infos if i.id == arg]
    if exact:
        return exact[0]
    prefixed = [i for i in infos if i.id.startswith(arg)]
    return prefixed[0] if prefixed else None


def _find_session(arg: str, cwd: str, session_dir: Path) -> tuple[Path, bool]:
    """(file, is_local) for a path or an id (exact, then prefix; this project first, then everywhere)."""
    if _is_path(arg):
        path = Path(os.path.expanduser(arg))
        return (path if path.is_absolute() else Path(cwd) / path), True
    local = _match(SessionManager.list_sessions(cwd, session_dir), arg)
    if local is not None:
        return local.path, True
    found = _match(SessionManager.list_all(), arg)
    if found is not None:
        return found.path, False
    raise SessionArgumentError(f"No session found matching '{arg}'")


def _check_cwd(manager: SessionManager) -> None:
    header_cwd = manager.get_header().cwd
    if header_cwd and not os.path.isdir(header_cwd):
        manager.close()
        raise SessionArgumentError(
            f"Stored session working directory does not exist: {header_cwd}\n"
            f"Session file: {manager.session_file}\nCurrent working directory: {os.getcwd()}"
        )


def _open_at_entry(manager: SessionManager, entry_id: str) -> None:
    """Put the leaf at `entry_id`: the run continues from there, as after choosing that entry in `/tree`."""
    try:
        manager.branch(entry_id)
    except KeyError:
        manager.close()
        raise SessionArgumentError(f"Error: --entry {entry_id}: no such entry in {manager.session_file}") from None


def _ensure_session_dir(args: Args, session_dir: Path) -> None:
    """A session dir that cannot be created fails the run now, not at its first write."""
    try:
        session_dir.mkdir(parents=True, exist_ok=True)
        if not session_dir.is_dir():
            raise NotADirectoryError(f"{session_dir} is not a directory")
    except OSError as exc:
        name = f"--session-dir {args.session_dir}" if args.session_dir is not None else f"session dir {session_dir}"
        raise SessionArgumentError(f"Error: {name}: cannot create it ({exc.strerror or exc})") from None


def choose_session(args: Args, cwd: str, session_dir: Path) -> SessionChoice:
    """The session manager a headless run should use, already locked for writing."""
    try:
        choice = _choose(args, cwd, session_dir)
        try:
            choice.manager.lock_for_writing()
        except BaseException:
            choice.manager.close()
            raise
    except OSError as exc:  # an unreadable file, a directory that cannot be made: one line, not a traceback
        raise SessionArgumentError(f"Error: {exc}") from None
    return choice


def _choose(args: Args, cwd: str, session_dir: Path) -> SessionChoice:
    conflict = validate_session_flags(args)
    if conflict is not None:
        raise SessionArgumentError(f"Error: {conflict}")
    if args.session_id is not None:
        try:
            validate_session_id(args.session_id)
        except ValueError as exc:
            raise SessionArgumentError(f"Error: {exc}") from None
    warnings: list[str] = []
    if args.resume:
        raise SessionArgumentError("--resume opens the session picker, which needs the interactive app")
    if args.no_session:
        return SessionChoice(SessionManager.in_memory(cwd, args.session_id), warnings)
    if args.session is None or not _is_path(args.session):
        _ensure_session_dir(args, session_dir)
    if args.fork is not None:
        source, _ = _find_session(args.fork, cwd, session_dir)
        if args.session_id is not None and any(
            i.id == args.session_id for i in SessionManager.list_sessions(cwd, session_dir)
        ):
            raise SessionArgumentError(f"A session with id {args.session_id} already exists")
        return SessionChoice(SessionManager.fork_from(source, cwd, session_dir, args.session_id), warnings)
    if args.session is not None:
        path, local = _find_session(args.session, cwd, session_dir)
        if not local:
            raise SessionArgumentError(
                f"Session '{args.session}' belongs to another project ({path}). "
                "Use --fork to copy it into this directory."
            )
        try:
            manager = SessionManager.open(path, session_dir if not _is_path(args.session) else None)
        except NotARegularFileError as exc:
            raise SessionArgumentError(f"Error: --session {args.session} is {exc.kind}, not a session file") from None
        _check_cwd(manager)
        if args.entry is not None:
            _open_at_entry(manager, args.entry)
        return SessionChoice(manager, warnings)
    if args.session_id is not None:
        match = next((i for i in SessionManager.list_sessions(cwd, session_dir) if i.id == args.session_id), None)
        if match is not None:
            manager = SessionManager.open(match.path, session_dir)
            _check_cwd(manager)
            return SessionChoice(manager, warnings)
        warnings.append(f"Warning: no session with id {args.session_id}; starting a new one with that id")
        return SessionChoice(SessionManager.create(cwd, session_dir, args.session_id), warnings)
    if args.continue_:
        manager = SessionManager.continue_recent(cwd, session_dir)
        _check_cwd(manager)
        return SessionChoice(manager, warnings)
    return SessionChoice(SessionManager.create(cwd, session_dir), warnings)


__all__ = ["SessionArgumentError", "SessionChoice", "choose_session", "validate_session_flags"]
