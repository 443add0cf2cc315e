"""Apex-owned environment variables and their legacy `PI_*` aliases.

The canonical `APEX_CODE_X` wins; a lone legacy `PI_X` is used with a one-time deprecation notice.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TextIO

CANONICAL_PREFIX = "APEX_CODE_"
LEGACY_PREFIX = "PI_"
# These two never had a legacy name: the original product used a different directory layout.
NO_LEGACY = frozenset({"CODING_AGENT_DIR", "CODING_AGENT_SESSION_DIR"})
TRUTHY = frozenset({"1", "true", "yes"})

_warned: set[str] = set()


def _warn_once(key: str, text: str, stream: TextIO | None) -> None:
    if key in _warned:
        return
    _warned.add(key)
    (stream or sys.stderr).write(text + "\n")


def get_env(suffix: str, env: Mapping[str, str] | None = None, *, warn_stream: TextIO | None = None) -> str | None:
    """Value of `APEX_CODE_<suffix>`, falling back to `PI_<suffix>` with a deprecation notice."""
    source = os.environ if env is None else env
    canonical_name = CANONICAL_PREFIX + suffix
    canonical = source.get(canonical_name)
    if suffix in NO_LEGACY:
        return canonical
    legacy_name = LEGACY_PREFIX + suffix
    legacy = source.get(legacy_name)
    if canonical is not None:
        if legacy is not None and legacy != canonical:
            _warn_once(
                f"both:{suffix}",
                f"Apex Code: both {canonical_name} and legacy {legacy_name} are set; using {canonical_name}.",
                warn_stream,
            )
        return canonical
    if legacy is not None:
        _warn_once(f"legacy:{suffix}", f"Apex Code: {legacy_name} is deprecated; use {canonical_name}.", warn_stream)
        return legacy
    return None


def env_flag(suffix: str, env: Mapping[str, str] | None = None, *, warn_stream: TextIO | None = None) -> bool:
    """True when the variable is `1`, `true` or `yes` (any case)."""
    value = get_env(suffix, env, warn_stream=warn_stream)
    return value is not None and value.strip().lower() in TRUTHY


def is_offline(env: Mapping[str, str] | None = None, *, warn_stream: TextIO | None = None) -> bool:
    """`APEX_CODE_OFFLINE`: no network at startup (catalog refresh, update and package checks)."""
    return env_flag("OFFLINE", env, warn_stream=warn_stream)


def child_env_pairs(suffix: str, value: str) -> dict[str, str]:
    """Both names, for variables Apex sets for its children."""
    if suffix in NO_LEGACY:
        return {CANONICAL_PREFIX + suffix: value}
    return {CANONICAL_PREFIX + suffix: value, LEGACY_PREFIX + suffix: value}


def _reset_warnings_for_tests() -> None:
    _warned.clear()


__all__ = ["child_env_pairs", "env_flag", "get_env", "is_offline"]
