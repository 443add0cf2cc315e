"""Where the coding agent keeps its files.

Pure functions of the environment and the cwd: nothing here creates a directory unless its name says so.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

AGENT_DIR_ENV = "APEX_CODE_CODING_AGENT_DIR"
SESSION_DIR_ENV = "APEX_CODE_CODING_AGENT_SESSION_DIR"
DEFAULT_AGENT_DIR = "~/.apex-code/agent"


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def expand_home(value: str) -> Path:
    """`~` and `~/x` expanded to the home directory; anything else unchanged."""
    return Path(os.path.expanduser(value))


def get_agent_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$APEX_CODE_CODING_AGENT_DIR` (leading `~` expanded) else `~/.apex-code/agent`."""
    value = _env(env).get(AGENT_DIR_ENV)
    return expand_home(value if value else DEFAULT_AGENT_DIR)


def get_sessions_root(env: Mapping[str, str] | None = None) -> Path:
    """`<agentDir>/sessions`: the parent of every per-cwd session directory."""
    return get_agent_dir(env) / "sessions"


def encode_cwd(cwd: str | os.PathLike[str]) -> str:
    """Directory name of a cwd: `/home/u/my proj` -> `--home-u-my proj--`.

    The absolute resolved path loses ONE leading `/` or `\\`, then every `/`, `\\` and `:` becomes `-`.
    """
    text = str(Path(cwd).resolve())
    if text[:1] in ("/", "\\"):
        text = text[1:]
    for char in ("/", "\\", ":"):
        text = text.replace(char, "-")
    return f"--{text}--"


def default_session_dir(cwd: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> Path:
    """The per-cwd session directory `<agentDir>/sessions/--<enc>--` (not created)."""
    return get_sessions_root(env) / encode_cwd(cwd)


def resolve_session_dir(
    cwd: str | os.PathLike[str],
    cli_session_dir: str | None = None,
    setting_session_dir: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Path:
    """Session dir by precedence: `--session-dir` > `$APEX_CODE_CODING_AGENT_SESSION_DIR` > setting > per-cwd default.

    A relative setting is taken relative to `cwd`; `~` is expanded everywhere.
    """
    custom = custom_session_dir(cwd, cli_session_dir, setting_session_dir, env)
    return custom if custom is not None else default_session_dir(cwd, env)


def custom_session_dir(
    cwd: str | os.PathLike[str],
    cli_session_dir: str | None = None,
    setting_session_dir: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Path | None:
    """The session dir `resolve_session_dir` picks when one is configured (flag, environment or setting), else
    None: sessions then live in per-cwd folders of the sessions root."""
    for candidate in (cli_session_dir, _env(env).get(SESSION_DIR_ENV), setting_session_dir):
        if candidate:
            path = expand_home(candidate)
            return path if path.is_absolute() else Path(cwd) / path
    return None


def is_default_session_dir(
    directory: str | os.PathLike[str], cwd: str | os.PathLike[str], env: Mapping[str, str] | None = None
) -> bool:
    """True when `directory` is the per-cwd default of `cwd` (listing then needs no cwd filter)."""
    return Path(directory).resolve() == default_session_dir(cwd, env).resolve()


__all__ = [
    "AGENT_DIR_ENV",
    "DEFAULT_AGENT_DIR",
    "SESSION_DIR_ENV",
    "custom_session_dir",
    "default_session_dir",
    "encode_cwd",
    "expand_home",
    "get_agent_dir",
    "get_sessions_root",
    "is_default_session_dir",
    "resolve_session_dir",
]
