"""Which default column applies: Linux, macOS, native Windows or WSL."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Literal

Platform = Literal["linux", "darwin", "win32", "wsl"]


def detect_platform(sys_platform: str | None = None, env: Mapping[str, str] | None = None) -> Platform:
    """Classify the running system; tests pass `sys_platform` and `env` explicitly.

    WSL is Linux with `WSL_DISTRO_NAME` or `WSL_INTEROP` non-empty; `WT_SESSION` alone is not WSL (Windows
    Terminal also runs plain Linux shells over ssh). Other Unix systems use the Linux defaults.
    """
    name = sys.platform if sys_platform is None else sys_platform
    environ = os.environ if env is None else env
    if name == "win32":
        return "win32"
    if name == "darwin":
        return "darwin"
    if name.startswith("linux") and (environ.get("WSL_DISTRO_NAME") or environ.get("WSL_INTEROP")):
        return "wsl"
    return "linux"


def is_windows_style(platform: Platform) -> bool:
    """Native Windows and WSL share the "W" default column."""
    return platform in ("win32", "wsl")
