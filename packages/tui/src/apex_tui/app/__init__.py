"""The interactive application: wires the coding-agent session runtime to urwid widgets."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def run_interactive(argv: Sequence[str]) -> int:
    """Run the fullscreen app; returns the process exit code.

    The app itself is not built yet: say so plainly instead of pretending.
    """
    del argv
    sys.stderr.write(
        "apex-code: the interactive app is not available in this version yet.\n"
        "Use print mode instead: apex-code -p 'your task'\n"
    )
    return 1


__all__ = ["run_interactive"]
