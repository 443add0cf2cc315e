"""Pickers and dialogs that replace the editor (tui.md §9): generic select list, confirm/input/select dialogs,
model, scoped-model, thinking, session and tree pickers. They take plain data and a keymap, emit urwid signals
with `(widget, payload)`, and never import the agent layers."""

from apex_tui.widgets.pickers._base import Frame, PickerBase
from apex_tui.widgets.pickers._dialogs import ConfirmDialog, Countdown, InputDialog, SelectDialog
from apex_tui.widgets.pickers._fuzzy import fuzzy_filter, fuzzy_score
from apex_tui.widgets.pickers._input import LineInput
from apex_tui.widgets.pickers._list import ListCursor, SelectItem, SelectList
from apex_tui.widgets.pickers._models import ModelOption, ModelPicker, ScopedModelsPicker
from apex_tui.widgets.pickers._thinking import DEFAULT_LEVELS, ThinkingPicker

__all__ = [
    "DEFAULT_LEVELS",
    "ConfirmDialog",
    "Countdown",
    "Frame",
    "InputDialog",
    "LineInput",
    "ListCursor",
    "ModelOption",
    "ModelPicker",
    "PickerBase",
    "ScopedModelsPicker",
    "SelectDialog",
    "SelectItem",
    "SelectList",
    "ThinkingPicker",
    "fuzzy_filter",
    "fuzzy_score",
]
