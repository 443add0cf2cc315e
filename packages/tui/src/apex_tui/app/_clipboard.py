"""Clipboard writes: a native tool when one is on PATH, else OSC 52 to the terminal."""

from __future__ import annotations

import base64
import shutil
import subprocess
import sys

_TOOLS: tuple[tuple[str, ...], ...] = (
    ("pbcopy",),
    ("wl-copy",),
    ("xclip", "-selection", "clipboard"),
    ("xsel", "--clipboard", "--input"),
    ("clip.exe",),
)


def osc52(text: str) -> str:
    """The OSC 52 sequence that sets the system clipboard to `text`."""
    return "\x1b]52;c;" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "\x07"


def copy_to_clipboard(text: str) -> str:
    """Copy `text`; returns how (`tool name` or `osc52`)."""
    for tool in _TOOLS:
        if shutil.which(tool[0]):
            try:
                subprocess.run(tool, input=text.encode("utf-8"), check=True, timeout=5, capture_output=True)
            except (OSError, subprocess.SubprocessError):
                continue
            return tool[0]
    try:
        sys.stdout.write(osc52(text))
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    return "osc52"
