"""Value references in models.json and auth.json.

`!cmd` runs `cmd` in a shell and uses its trimmed stdout; `$VAR` / `${VAR}` interpolate anywhere;
`$$` is a literal `$` and `$!` a literal `!`; anything else is literal. A missing variable or a
failing command makes the whole value unresolved (None), never an empty key.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping

_VAR = re.compile(r"\$\$|\$!|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
COMMAND_TIMEOUT_S = 30


class _Unresolved(Exception):
    pass


def interpolate(value: str, env: Mapping[str, str] | None = None) -> str | None:
    """Expand `$VAR`/`${VAR}`, `$$` and `$!`; None when a variable is not set."""
    source = os.environ if env is None else env

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "$$":
            return "$"
        if token == "$!":
            return "!"
        name = match.group(1) or match.group(2)
        found = source.get(name)
        if found is None:
            raise _Unresolved(name)
        return found

    try:
        return _VAR.sub(replace, value)
    except _Unresolved:
        return None


def is_command(value: str) -> bool:
    return value.startswith("!")


def run_command(command: str, env: Mapping[str, str] | None = None) -> str | None:
    """Trimmed stdout of a shell command; None when it fails, times out or prints nothing."""
    try:
        proc = subprocess.run(
            command,
            shell=True,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
            env=None if env is None else dict(env),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = proc.stdout.strip()
    return out if proc.returncode == 0 and out else None


def resolve_value(value: str, env: Mapping[str, str] | None = None, *, run_commands: bool = True) -> str | None:
    """Resolve one reference. With `run_commands=False` (availability checks) a `!cmd` is not run
    and counts as resolvable: its text is returned unchanged."""
    if is_command(value):
        return run_command(value[1:], env) if run_commands else value
    return interpolate(value, env)


def is_resolvable(value: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether a value would resolve, without running any command."""
    return resolve_value(value, env, run_commands=False) is not None


__all__ = ["interpolate", "is_command", "is_resolvable", "resolve_value", "run_command"]
