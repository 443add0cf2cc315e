"""The table of every keybinding id: defaults per platform, help text, category and context.

Definition order is the canonical order (used when rewriting `keybindings.json` and for the docs table).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from apex_tui.keybindings._platform import Platform


class Context(StrEnum):
    """Where an id is consulted.

     `FULLSCREEN_SEARCH` refines F: the three search-box ids act only while the transcript search box is focused
    , so they never compete with editor keys such as `enter` or `escape`.
    """

    EDITOR = "E"
    LIST = "L"
    FULLSCREEN = "F"
    FULLSCREEN_SEARCH = "S"
    RESUME = "R"
    TREE = "T"
    MODELS = "M"
    THINKING = "H"
    MCP = "P"


E, L, F, S, R, T, M, H = (
    Context.EDITOR,
    Context.LIST,
    Context.FULLSCREEN,
    Context.FULLSCREEN_SEARCH,
    Context.RESUME,
    Context.TREE,
    Context.MODELS,
    Context.THINKING,
)


@dataclass(frozen=True)
class KeybindingDef:
    """One action id. `windows` applies to native Windows and WSL unless `win32`/`wsl` narrow it."""

    id: str
    defaults: tuple[str, ...]
    description: str
    category: str
    contexts: frozenset[Context]
    windows: tuple[str, ...] | None = None
    win32: tuple[str, ...] | None = None
    wsl: tuple[str, ...] | None = None
    darwin: tuple[str, ...] | None = None

    def defaults_for(self, platform: Platform) -> tuple[str, ...]:
        """The default keys on `platform` (the most specific column that is set)."""
        if platform == "win32" and self.win32 is not None:
            return self.win32
        if platform == "wsl" and self.wsl is not None:
            return self.wsl
        if platform in ("win32", "wsl") and self.windows is not None:
            return self.windows
        if platform == "darwin" and self.darwin is not None:
            return self.darwin
        return self.defaults


def _d(
    id: str,
    defaults: tuple[str, ...],
    description: str,
    category: str,
    *contexts: Context,
    windows: tuple[str, ...] | None = None,
    win32: tuple[str, ...] | None = None,
    wsl: tuple[str, ...] | None = None,
    darwin: tuple[str, ...] | None = None,
) -> KeybindingDef:
    return KeybindingDef(
        id=id,
        defaults=defaults,
        description=description,
        category=category,
        contexts=frozenset(contexts),
        windows=windows,
        win32=win32,
        wsl=wsl,
        darwin=darwin,
    )


_MOVE = "Cursor movement"
_EDIT = "Text editing"
_INPUT = "Input and selection"
_FULL = "Fullscreen"
_APP = "Application"
_SESS = "Sessions"
_MODEL = "Models and thinking"
_DISPLAY = "Display and message queue"
_TREE = "Session tree"
_SCOPED = "Scoped models"
_SEARCH = "Session search"
_MCP = "MCP servers"
_SCREEN = "Screen"

KEYBINDINGS: tuple[KeybindingDef, ...] = (
    # 3.1 tui.editor.*
    _d("tui.editor.cursorUp", ("up",), "Move cursor up, browsing older history at the top", _MOVE, E),
    _d("tui.editor.cursorDown", ("down",), "Move cursor down, browsing newer history at the bottom", _MOVE, E),
    _d("tui.editor.historyPrevious", (), "Select the previous prompt history entry", _MOVE, E),
    _d("tui.editor.historyNext", (), "Select the next prompt history entry", _MOVE, E),
    _d("tui.editor.cursorLeft", ("left", "ctrl+b"), "Move cursor left", _MOVE, E),
    _d("tui.editor.cursorRight", ("right", "ctrl+f"), "Move cursor right", _MOVE, E),
    _d("tui.editor.cursorWordLeft", ("alt+left", "ctrl+left", "alt+b"), "Move cursor word left", _MOVE, E),
    _d("tui.editor.cursorWordRight", ("alt+right", "ctrl+right", "alt+f"), "Move cursor word right", _MOVE, E),
    _d("tui.editor.cursorLineStart", ("home", "ctrl+home", "ctrl+a"), "Move to line start", _MOVE, E),
    _d("tui.editor.cursorLineEnd", ("end", "ctrl+end", "ctrl+e"), "Move to line end", _MOVE, E),
    _d("tui.editor.jumpForward", ("ctrl+]",), "Jump forward to the next typed character", _MOVE, E),
    _d("tui.editor.jumpBackward", ("ctrl+alt+]",), "Jump backward to the next typed character", _MOVE, E),
    _d("tui.editor.pageUp", ("pageUp", "ctrl+pageUp"), "Scroll up by page", _MOVE, E),
    _d("tui.editor.pageDown", ("pageDown", "ctrl+pageDown"), "Scroll down by page", _MOVE, E),
    _d("tui.editor.deleteCharBackward", ("backspace",), "Delete character backward", _EDIT, E),
    _d("tui.editor.deleteCharForward", ("delete", "ctrl+d"), "Delete character forward", _EDIT, E),
    _d("tui.editor.deleteWordBackward", ("ctrl+w", "alt+backspace"), "Delete word backward", _EDIT, E),
    _d("tui.editor.deleteWordForward", ("alt+d", "alt+delete"), "Delete word forward", _EDIT, E),
    _d("tui.editor.deleteToLineStart", ("ctrl+u",), "Delete to line start", _EDIT, E),
    _d("tui.editor.deleteToLineEnd", ("ctrl+k",), "Delete to line end", _EDIT, E),
    _d("tui.editor.yank", ("ctrl+y",), "Paste most recently deleted text", _EDIT, E),
    _d("tui.editor.yankPop", ("alt+y",), "Cycle through deleted text after yank", _EDIT, E),
    _d("tui.editor.undo", ("ctrl+-",), "Undo last edit", _EDIT, E, win32=("ctrl+z",), wsl=("alt+z",)),
    # 3.2 tui.input.*, tui.select.*
    _d("tui.input.newLine", ("shift+enter", "ctrl+j"), "Insert new line", _INPUT, E),
    _d("tui.input.submit", ("enter",), "Submit input", _INPUT, E),
    _d("tui.input.tab", ("tab",), "Tab or autocomplete", _INPUT, E, L),
    _d("tui.input.copy", ("ctrl+c",), "Copy selection", _INPUT, E, L),
    _d("tui.select.up", ("up",), "Move selection up", _INPUT, L),
    _d("tui.select.down", ("down",), "Move selection down", _INPUT, L),
    _d("tui.select.pageUp", ("pageUp",), "Move selection up by a page", _INPUT, L),
    _d("tui.select.pageDown", ("pageDown",), "Move selection down by a page", _INPUT, L),
    _d("tui.select.confirm", ("enter",), "Confirm selection", _INPUT, L),
    _d("tui.select.cancel", ("escape", "ctrl+c"), "Cancel selection", _INPUT, L),
    # 3.3 tui.altScreen.*
    _d("tui.altScreen.pageUp", ("pageUp",), "Scroll the transcript up by one page", _FULL, F),
    _d("tui.altScreen.pageDown", ("pageDown",), "Scroll the transcript down by one page", _FULL, F),
    _d("tui.altScreen.halfPageUp", (), "Scroll the transcript up by half a page", _FULL, F),
    _d("tui.altScreen.halfPageDown", (), "Scroll the transcript down by half a page", _FULL, F),
    _d("tui.altScreen.lineUp", (), "Scroll the transcript up by one line", _FULL, F),
    _d("tui.altScreen.lineDown", (), "Scroll the transcript down by one line", _FULL, F),
    _d(
        "tui.altScreen.previousPrompt",
        ("ctrl+shift+up", "ctrl+up"),
        "Jump to the previous marked message",
        _FULL,
        F,
        windows=("ctrl+up",),
    ),
    _d(
        "tui.altScreen.nextPrompt",
        ("ctrl+shift+down", "ctrl+down"),
        "Jump to the next marked message",
        _FULL,
        F,
        windows=("ctrl+down",),
    ),
    _d("tui.altScreen.search", ("ctrl+shift+f",), "Search the rendered transcript", _FULL, F, windows=("ctrl+f",)),
    _d("tui.altScreen.searchNext", ("enter", "ctrl+g"), "Go to the next search match", _FULL, S),
    _d("tui.altScreen.searchPrevious", ("shift+enter", "ctrl+shift+g"), "Go to the previous search match", _FULL, S),
    _d("tui.altScreen.searchClose", ("escape",), "Close the transcript search", _FULL, S),
    _d("tui.altScreen.top", ("home",), "Scroll to the transcript start", _FULL, F),
    _d("tui.altScreen.bottom", ("end",), "Scroll to the transcript end and follow new output", _FULL, F),
    # 3.4 app.*
    _d("app.interrupt", ("escape",), "Cancel / abort", _APP, E),
    _d("app.clear", ("ctrl+c",), "Clear editor (first) / exit (second)", _APP, E),
    _d("app.exit", ("ctrl+d",), "Exit (when editor empty)", _APP, E),
    _d("app.suspend", ("ctrl+z",), "Suspend to background", _APP, E, win32=()),
    _d(
        "app.editor.external",
        ("ctrl+g",),
        "Open in external editor (`externalEditor`, `$VISUAL`, `$EDITOR`, Notepad on Windows, or `nano` elsewhere)",
        _APP,
        E,
    ),
    _d(
        "app.clipboard.pasteImage",
        ("ctrl+v",),
        "Paste image or text from clipboard",
        _APP,
        E,
        windows=("alt+v",),
    ),
    _d("app.session.new", (), "Start a new session (`/new`)", _SESS, E),
    _d("app.session.tree", (), "Open session tree navigator (`/tree`)", _SESS, E),
    _d("app.session.fork", (), "Fork current session (`/fork`)", _SESS, E),
    _d("app.session.resume", (), "Open session resume picker (`/resume`)", _SESS, E),
    _d("app.session.togglePath", ("ctrl+p",), "Toggle path display", _SESS, R),
    _d("app.session.toggleSort", ("ctrl+s",), "Toggle sort mode", _SESS, R),
    _d("app.session.toggleNamedFilter", ("ctrl+n",), "Toggle named-only filter", _SESS, R),
    _d("app.session.rename", ("ctrl+r",), "Rename session", _SESS, R),
    _d("app.session.delete", ("ctrl+d",), "Delete session", _SESS, R),
    _d("app.session.deleteNoninvasive", ("ctrl+backspace",), "Delete session (when query is empty)", _SESS, R),
    _d("app.model.select", ("ctrl+l",), "Open model selector", _MODEL, E),
    _d("app.model.cycleForward", ("ctrl+p",), "Cycle to next model", _MODEL, E),
    _d("app.model.cycleBackward", ("shift+ctrl+p",), "Cycle to previous model", _MODEL, E, windows=("alt+p",)),
    _d(
        "app.models.save",
        ("ctrl+s",),
        "Save the selected default model or scoped model configuration to settings",
        _MODEL,
        M,
    ),
    _d("app.thinking.cycle", ("shift+tab",), "Cycle thinking level", _MODEL, E),
    _d("app.thinking.save", ("ctrl+s",), "Save current thinking level to settings", _MODEL, H),
    _d("app.thinking.toggle", ("ctrl+t",), "Collapse or expand thinking blocks", _MODEL, E),
    _d(
        "app.tools.expand",
        ("ctrl+o",),
        "Cycle conversation detail: overview, details, all",
        _DISPLAY,
        E,
    ),
    _d(
        "app.message.copy",
        ("ctrl+x",),
        "Copy the selected message in `/tree`; in fullscreen mode, copy the active selection when "
        "`fullscreenCopyOnSelect` is `false`; otherwise copy the last assistant message",
        _DISPLAY,
        E,
        T,
    ),
    _d("app.message.followUp", ("alt+enter",), "Queue follow-up message", _DISPLAY, E, windows=("ctrl+q",)),
    _d("app.message.dequeue", ("alt+up",), "Restore queued messages to editor", _DISPLAY, E, windows=("alt+q",)),
    # 3.5 app.tree.*, app.models.*
    _d(
        "app.tree.foldOrUp",
        ("ctrl+left", "alt+left"),
        "Fold the branch segment or jump to the previous segment start",
        _TREE,
        T,
        darwin=("alt+left", "ctrl+left"),
    ),
    _d(
        "app.tree.unfoldOrDown",
        ("ctrl+right", "alt+right"),
        "Unfold or jump to the next segment start or branch end",
        _TREE,
        T,
        darwin=("alt+right", "ctrl+right"),
    ),
    _d("app.tree.editLabel", ("shift+l",), "Set or clear the label of the selected entry", _TREE, T),
    _d("app.tree.toggleLabelTimestamp", ("shift+t",), "Show or hide label timestamps", _TREE, T),
    _d("app.tree.filter.default", ("ctrl+d",), "Filter: default", _TREE, T),
    _d("app.tree.filter.noTools", ("ctrl+t",), "Filter: toggle no-tools", _TREE, T),
    _d("app.tree.filter.userOnly", ("ctrl+u",), "Filter: toggle user messages only", _TREE, T),
    _d("app.tree.filter.labeledOnly", ("ctrl+l",), "Filter: toggle labeled entries only", _TREE, T),
    _d("app.tree.filter.all", ("ctrl+a",), "Filter: toggle all entries", _TREE, T),
    _d("app.tree.filter.cycleForward", ("ctrl+o",), "Cycle filter forward", _TREE, T),
    _d("app.tree.filter.cycleBackward", ("shift+ctrl+o",), "Cycle filter backward", _TREE, T),
    _d("app.models.enableAll", ("ctrl+a",), "Enable all models (or all matching the current search)", _SCOPED, M),
    _d("app.models.clearAll", ("ctrl+x",), "Clear all models (or all matching the current search)", _SCOPED, M),
    _d("app.models.toggleProvider", ("ctrl+p",), "Toggle all models for the current provider", _SCOPED, M),
    _d("app.models.reorderUp", ("alt+up",), "Move the selected model earlier in the cycle order", _SCOPED, M),
    _d("app.models.reorderDown", ("alt+down",), "Move the selected model later in the cycle order", _SCOPED, M),
    # Apex additions, after the original product's 90 ids.
    _d("app.session.toggleFullText", ("ctrl+f",), "Resume picker: search every message instead of names", _SEARCH, R),
    _d("app.mcp.reconnect", ("ctrl+r",), "`/mcp` panel: reconnect the highlighted or shown server", _MCP, Context.MCP),
    # ctrl+l, the usual repaint key of terminal programs, is `app.model.select` (and a `/tree` filter) here.
    _d(
        "app.redraw",
        ("alt+l",),
        "Repaint every cell of the screen (after another program wrote over it)",
        _SCREEN,
        *Context,  # taken before any widget sees it: works in the editor, pickers, dialogs and fullscreen
    ),
)

#: id -> definition, in canonical order.
KEYBINDINGS_BY_ID: dict[str, KeybindingDef] = {d.id: d for d in KEYBINDINGS}
KEYBINDING_IDS: tuple[str, ...] = tuple(KEYBINDINGS_BY_ID)

#: Section titles of the docs table, in order.
CATEGORIES: tuple[str, ...] = tuple(dict.fromkeys(d.category for d in KEYBINDINGS))
