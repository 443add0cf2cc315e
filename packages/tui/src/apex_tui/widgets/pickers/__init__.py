"""Pickers and dialogs that replace the editor: generic select list, confirm/input/select dialogs,
model, scoped-model, thinking, session and tree pickers, the MCP server panel. They take plain data and a keymap, emit urwid signals
with `(widget, payload)`, and never import the agent layers."""

from apex_tui.widgets.pickers._base import Frame, PickerBase
from apex_tui.widgets.pickers._dialogs import ConfirmDialog, Countdown, InputDialog, SelectDialog
from apex_tui.widgets.pickers._fuzzy import fuzzy_filter, fuzzy_score
from apex_tui.widgets.pickers._input import LineInput
from apex_tui.widgets.pickers._list import ListCursor, SelectItem, SelectList
from apex_tui.widgets.pickers._mcp import McpPanel, McpServerRow, McpToolRow
from apex_tui.widgets.pickers._models import ModelOption, ModelPicker, ScopedModelsPicker
from apex_tui.widgets.pickers._sessions import SORT_MODES, SessionEntry, SessionPicker, SortMode, format_age
from apex_tui.widgets.pickers._thinking import DEFAULT_LEVELS, ThinkingPicker
from apex_tui.widgets.pickers._tree import TreeNavigator, TreeSelection
from apex_tui.widgets.pickers._tree_model import FILTER_MODES, FilterMode, TreeNode

__all__ = [
    "DEFAULT_LEVELS",
    "FILTER_MODES",
    "ConfirmDialog",
    "Countdown",
    "FilterMode",
    "Frame",
    "InputDialog",
    "LineInput",
    "ListCursor",
    "McpPanel",
    "McpServerRow",
    "McpToolRow",
    "ModelOption",
    "ModelPicker",
    "PickerBase",
    "SORT_MODES",
    "ScopedModelsPicker",
    "SelectDialog",
    "SelectItem",
    "SelectList",
    "SessionEntry",
    "SessionPicker",
    "SortMode",
    "ThinkingPicker",
    "TreeNavigator",
    "TreeNode",
    "TreeSelection",
    "format_age",
    "fuzzy_filter",
    "fuzzy_score",
]
