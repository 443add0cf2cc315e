"""The interactive application: wires the coding-agent session runtime to urwid widgets.

`run_interactive(argv)` is the `apex_code.interactive` entry point of the `apex-code` CLI. `InteractiveApp` is the
app object (tests build it with their own runtime and drive it with urwid test screens).

Importing this package loads only `run_interactive` and its light dependencies; `InteractiveApp` (which imports the
coding-agent runtime) loads on first access, so the entry point can draw its first frame before that import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from apex_coding_agent._lazy import lazy_exports
from apex_tui.app._picker import Choice, Picker
from apex_tui.app._run import run_interactive

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp

_EXPORTS: dict[str, str] = {"InteractiveApp": "._app"}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


__all__ = ["Choice", "InteractiveApp", "Picker", "run_interactive"]
