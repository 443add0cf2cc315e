"""The interactive application: wires the coding-agent session runtime to urwid widgets.

`run_interactive(argv)` is the `apex_code.interactive` entry point of the `apex-code` CLI. `InteractiveApp` is the
app object (tests build it with their own runtime and drive it with urwid test screens).

Importing this package loads only `run_interactive` and its light dependencies; `InteractiveApp` (which imports the
coding-agent runtime) loads on first access, so the entry point can draw its first frame before that import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from apex_tui.app._picker import Choice, Picker
from apex_tui.app._run import run_interactive

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp

_EXPORTS: dict[str, str] = {"InteractiveApp": "apex_tui.app._app"}


def __getattr__(name: str) -> object:
    """PEP 562: import `InteractiveApp`'s module on first access (the one lazy name of this package)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


__all__ = ["Choice", "InteractiveApp", "Picker", "run_interactive"]
