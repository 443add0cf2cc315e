"""What the libraries log, as the one-line messages users see.

The packages log what they skip or survive (a corrupt session line, a subscriber that raised) at WARNING and
above. The CLI prints those records on stderr as `Warning: …` / `Error: …` lines; the terminal app shows them
as warnings in its transcript (`apex_tui.app._log_notices`). Both word a record with `record_text`.
"""

from __future__ import annotations

import logging
import sys


def record_text(record: logging.LogRecord) -> str:
    """The record's message, with the exception it carries summed up in one line (no traceback)."""
    text = record.getMessage()
    if record.exc_info and record.exc_info[1] is not None:
        error = record.exc_info[1]
        text = f"{text}: {type(error).__name__}: {error}"
    return text


class CliFormatter(logging.Formatter):
    """`Warning: <text>` below ERROR, `Error: <text>` from ERROR up, worded like the CLI's own lines."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{'Warning' if record.levelno < logging.ERROR else 'Error'}: {record_text(record)}"


def log_to_stderr() -> None:
    """Print records of WARNING and above on stderr with `CliFormatter`, unless the root logger already has a
    handler (an embedding program's logging setup is left alone)."""
    root = logging.getLogger()
    if root.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(CliFormatter())
    root.addHandler(handler)


__all__ = ["CliFormatter", "log_to_stderr", "record_text"]
