"""`apex-code sessions ...`: list, search and reindex sessions through the session index; collect checkpoint blobs.

    apex-code sessions list [--all] [--json] [--session-dir DIR]
    apex-code sessions search QUERY [--cwd DIR] [--json] [--limit N] [--session-dir DIR]
    apex-code sessions reindex [--tool-output | --no-tool-output]
    apex-code sessions gc [--grace-seconds N]

`list` shows this directory's sessions (`--all`: every project's), newest first. `search` looks through the messages
of every session (`--cwd DIR`: only that project's) and prints each hit with the command that opens the session at
that entry. `reindex` rebuilds the index from the session files; `--tool-output` makes tool results searchable too.
`gc` is `apex-code checkpoints gc`: it removes the checkpoint blobs no session refers to.

Where the sessions are: `--session-dir` > `$APEX_CODE_CODING_AGENT_SESSION_DIR` > the `sessionDir` setting (a
project's only when the project is trusted, as for the agent itself) > the per-folder default. Whether tool output
is indexed follows the global `sessionIndex.includeToolOutput` setting; `reindex --tool-output`/`--no-tool-output`
override it until the setting changes.
"""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from apex_coding_agent.paths import custom_session_dir, get_agent_dir, resolve_session_dir

if TYPE_CHECKING:
    from apex_coding_agent.core.settings import SettingsManager

USAGE = """\
Usage:
  apex-code sessions list [--all] [--json] [--session-dir DIR]
  apex-code sessions search QUERY [--cwd DIR] [--json] [--limit N] [--session-dir DIR]
  apex-code sessions reindex [--tool-output | --no-tool-output]
  apex-code sessions gc [--grace-seconds N]

  list      this directory's sessions, newest first (--all: every project's)
  search    find messages in every session (--cwd DIR: that project's only); words must all occur in one
            message, "quoted words" are a phrase, word* a prefix
  reindex   rebuild the session index from the session files (--tool-output/--no-tool-output: make tool
            results searchable or not, overriding the sessionIndex.includeToolOutput setting until it changes)
  gc        remove the checkpoint blobs no session refers to (kept when younger than --grace-seconds,
            default 3600: a running session may not have written its entry yet); prints a JSON report
"""
_FLAGS = {
    "list": {"--all": False, "--json": False, "--session-dir": True},
    "search": {"--cwd": True, "--json": False, "--limit": True, "--session-dir": True},
    "reindex": {"--tool-output": False, "--no-tool-output": False},
    "gc": {"--grace-seconds": True},
}
_BOLD, _RESET = "\x1b[1m", "\x1b[0m"


class _UsageError(Exception):
    pass


def _parse(command: str, argv: list[str]) -> tuple[dict[str, str | bool], list[str]]:
    flags: dict[str, str | bool] = {}
    positional: list[str] = []
    known = _FLAGS[command]
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, inline = arg.partition("=")
        if arg == "--":
            positional.extend(argv[i + 1 :])
            break
        if name in known:
            if known[name]:
                if eq:
                    flags[name] = inline
                elif i + 1 < len(argv):
                    i += 1
                    flags[name] = argv[i]
                else:
                    raise _UsageError(f"{name} requires a value")
            elif eq:
                raise _UsageError(f"{name} takes no value")
            else:
                flags[name] = True
        elif arg.startswith("-") and len(arg) > 1:
            raise _UsageError(f"unknown option {arg} for `sessions {command}`")
        else:
            positional.append(arg)
        i += 1
    return flags, positional


def _when(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


def _one_line(text: str, width: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _settings(cwd: str, err: TextIO) -> SettingsManager:
    """The settings as the agent would read them here: a project's own only once the project is trusted (decided
    without asking: a saved decision or `defaultProjectTrust`)."""
    from apex_coding_agent.core.trusted_settings import settings_for_project

    settings, _ = settings_for_project(cwd, get_agent_dir(), err)
    return settings


def _setting_dir(settings: SettingsManager) -> str | None:
    value = settings.get("sessionDir")
    return value if isinstance(value, str) else None


def _flag_dir(flags: dict[str, str | bool]) -> str | None:
    chosen = flags.get("--session-dir")
    return chosen if isinstance(chosen, str) else None


def _session_dir(flags: dict[str, str | bool], cwd: str, settings: SettingsManager) -> Path:
    """This folder's session dir: flag > environment > setting > the per-folder default."""
    return resolve_session_dir(cwd, _flag_dir(flags), _setting_dir(settings))


def _custom_dir(flags: dict[str, str | bool], cwd: str, settings: SettingsManager) -> Path | None:
    """The configured session dir (flag > environment > setting) or None: the sessions root's folders."""
    return custom_session_dir(cwd, _flag_dir(flags), _setting_dir(settings))


def _list(flags: dict[str, str | bool], positional: list[str], out: TextIO, err: TextIO) -> int:
    from apex_coding_agent.session.listing import list_all_sessions, list_sessions

    if positional:
        raise _UsageError(f"unexpected argument {positional[0]!r} for `sessions list`")
    cwd = os.getcwd()
    settings = _settings(cwd, err)
    if flags.get("--all"):
        infos = list_all_sessions(_custom_dir(flags, cwd, settings))
    else:
        infos = list_sessions(cwd, _session_dir(flags, cwd, settings))
    if flags.get("--json"):
        out.write(json.dumps([i.to_json() for i in infos], ensure_ascii=False, indent=2) + "\n")
        return 0
    for info in infos:
        title = info.name or info.first_message
        where = f"  {info.cwd}" if flags.get("--all") else ""
        out.write(f"{_when(info.modified)}  {info.message_count:>4} msgs  {info.id[:8]}  {_one_line(title)}{where}\n")
        out.write(f"    {info.path}\n")
    if not infos:
        out.write(
            "No sessions.\n" if flags.get("--all") else "No sessions in this directory (--all lists every one).\n"
        )
    return 0


def _highlighted(snippet: str, spans: tuple[tuple[int, int], ...], mark: Callable[[str], str]) -> str:
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts.extend((snippet[last:start], mark(snippet[start:end])))
        last = end
    parts.append(snippet[last:])
    return " ".join("".join(parts).split())


def _search(flags: dict[str, str | bool], positional: list[str], out: TextIO, err: TextIO, tty: bool) -> int:
    from apex_coding_agent.session.search import search_sessions, tool_output_setting

    if not positional:
        raise _UsageError("`sessions search` needs a query, e.g. apex-code sessions search 'connection reset'")
    limit_text = flags.get("--limit", "20")
    try:
        limit = int(str(limit_text))
    except ValueError:
        raise _UsageError(f"--limit must be a whole number, not {limit_text!r}") from None
    cwd_flag = flags.get("--cwd")
    cwd = os.path.abspath(os.path.expanduser(cwd_flag)) if isinstance(cwd_flag, str) else None
    if cwd is not None and not os.path.isdir(cwd):
        raise _UsageError(f"--cwd {cwd_flag}: no such directory")
    settings = _settings(os.getcwd(), err)
    session_dir = _custom_dir(flags, cwd or os.getcwd(), settings)
    hits = search_sessions(
        " ".join(positional),
        cwd=cwd,
        session_dir=session_dir,
        limit=limit,
        include_tool_output=tool_output_setting(settings),
    )
    if flags.get("--json"):
        out.write(json.dumps([h.to_json() for h in hits], ensure_ascii=False, indent=2) + "\n")
        return 0

    def mark(text: str) -> str:
        return f"{_BOLD}{text}{_RESET}" if tty else text

    for hit in hits:
        title = hit.session_name or hit.first_message
        out.write(f"{_when(hit.modified)}  {_one_line(title, 60)}  ({hit.cwd})\n")
        out.write(f"    {hit.kind}: {_highlighted(hit.snippet, hit.highlights, mark)}\n")
        out.write(f"    apex-code --session {shlex.quote(str(hit.path))} --entry {shlex.quote(hit.entry_id)}\n")
    if not hits:
        out.write("No matches.\n")
    return 0


def _reindex(flags: dict[str, str | bool], positional: list[str], out: TextIO, err: TextIO) -> int:
    from apex_coding_agent.session.index import SessionIndex
    from apex_coding_agent.session.listing import session_dirs
    from apex_coding_agent.session.search import tool_output_setting

    if positional:
        raise _UsageError(f"unexpected argument {positional[0]!r} for `sessions reindex`")
    if flags.get("--tool-output") and flags.get("--no-tool-output"):
        raise _UsageError("--tool-output and --no-tool-output contradict each other")
    cwd = os.getcwd()
    settings = _settings(cwd, err)
    setting = tool_output_setting(settings)
    flag = True if flags.get("--tool-output") else (False if flags.get("--no-tool-output") else None)
    directories = session_dirs()
    custom = _custom_dir({}, cwd, settings)  # the configured session dir, if any, is indexed as well
    if custom is not None:
        directories.extend(session_dirs(custom))
    with SessionIndex.open() as index:
        stats = index.reindex(directories, tool_output=setting if flag is None else flag, setting=setting)
        size = index.size_bytes()
        sessions = index.execute("SELECT count(*) FROM files WHERE state = 1").fetchone()[0]
        kept = "with" if index.tool_output else "without"
    out.write(
        f"Indexed {sessions} sessions ({stats.bytes_read / 1e6:.1f} MB read, tool output {kept}) in "
        f"{stats.seconds:.1f} s; index {size / 1e6:.1f} MB at {index.path}\n"
    )
    return 0


def _gc(flags: dict[str, str | bool], positional: list[str], out: TextIO, err: TextIO) -> int:
    from apex_coding_agent.checkpoints.cli import parse_grace, run_gc
    from apex_coding_agent.checkpoints.gc import DEFAULT_GRACE_SECONDS

    if positional:
        raise _UsageError(f"unexpected argument {positional[0]!r} for `sessions gc`")
    try:
        grace = parse_grace(str(flags.get("--grace-seconds", DEFAULT_GRACE_SECONDS)))
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    return run_gc(grace, out, err)


def run(argv: list[str], stdout: TextIO, stderr: TextIO) -> int:
    """Run `apex-code sessions ARGV...`; returns the exit code."""
    from apex_coding_agent.session.index import IndexUnavailableError
    from apex_coding_agent.session.search import SearchError

    if not argv or argv[0] in ("-h", "--help", "help"):
        (stdout if argv else stderr).write(USAGE)
        return 0 if argv else 1
    command, rest = argv[0], argv[1:]
    if command not in _FLAGS:
        stderr.write(f"Error: unknown sessions command {command!r}\n{USAGE}")
        return 1
    if "-h" in rest or "--help" in rest:
        stdout.write(USAGE)
        return 0
    try:
        flags, positional = _parse(command, rest)
        if command == "list":
            return _list(flags, positional, stdout, stderr)
        if command == "search":
            return _search(flags, positional, stdout, stderr, _isatty(stdout))
        if command == "gc":
            return _gc(flags, positional, stdout, stderr)
        return _reindex(flags, positional, stdout, stderr)
    except _UsageError as exc:
        stderr.write(f"Error: {exc}\n")
        return 1
    except (SearchError, IndexUnavailableError, OSError, sqlite3.Error) as exc:
        stderr.write(f"Error: {exc}\n")
        return 1


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


__all__ = ["USAGE", "run"]
