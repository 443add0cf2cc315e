"""The multi-line prompt editor: pure state (history, kill ring, undo, paste markers), autocomplete
sources, and the urwid widget that routes keys through the keybindings."""

from apex_tui.editor._complete import (
    CommandInfo,
    FileIndex,
    Suggestion,
    command_suggestions,
    fuzzy_filter,
    fuzzy_score,
    path_completions,
    walk_project_files,
)
from apex_tui.editor._state import History, KillRing, PasteStore, UndoStack, clean_paste
from apex_tui.editor._widget import Editor

__all__ = [
    "CommandInfo",
    "Editor",
    "FileIndex",
    "History",
    "KillRing",
    "PasteStore",
    "Suggestion",
    "UndoStack",
    "clean_paste",
    "command_suggestions",
    "fuzzy_filter",
    "fuzzy_score",
    "path_completions",
    "walk_project_files",
]
