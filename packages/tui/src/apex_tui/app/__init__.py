"""The interactive application: wires the coding-agent session runtime to urwid widgets (tui.md).

`run_interactive(argv)` is the `apex_code.interactive` entry point of the `apex-code` CLI. `InteractiveApp` is the
app object (tests build it with their own runtime and drive it with urwid test screens).
"""

from __future__ import annotations

from apex_tui.app._app import InteractiveApp
from apex_tui.app._picker import Choice, Picker
from apex_tui.app._run import run_interactive

__all__ = ["Choice", "InteractiveApp", "Picker", "run_interactive"]
