"""Which ids compete for a key, and in what order, as data the widgets use.

A *scope* is one focus situation (the editor, the editor in fullscreen, the `/tree` picker, ...): the set of
contexts whose ids are consulted there. Two ids conflict only when some scope holds both.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from apex_tui.keybindings._keys import KeySpec
from apex_tui.keybindings._manager import KeybindingManager
from apex_tui.keybindings._registry import KEYBINDING_IDS, KEYBINDINGS, KEYBINDINGS_BY_ID, Context
from apex_tui.keybindings._urwid_keys import UrwidKey

E, L, F, S = Context.EDITOR, Context.LIST, Context.FULLSCREEN, Context.FULLSCREEN_SEARCH

#: Focus situations and the contexts consulted in each.
SCOPES: Final[Mapping[str, frozenset[Context]]] = {
    "editor": frozenset({E}),
    "fullscreen editor": frozenset({E, F}),
    "fullscreen search": frozenset({S}),
    "list": frozenset({L}),
    "session picker": frozenset({L, Context.RESUME}),
    "tree": frozenset({L, Context.TREE}),
    "model picker": frozenset({L, Context.MODELS}),
    "thinking picker": frozenset({L, Context.THINKING}),
    "mcp panel": frozenset({L, Context.MCP}),
}


def ids_in_scope(scope: str) -> tuple[str, ...]:
    """Ids consulted in `scope`, in canonical order."""
    contexts = SCOPES[scope]
    return tuple(d.id for d in KEYBINDINGS if d.contexts & contexts)


# Rule 1: fullscreen ids, the search box first.
FULLSCREEN_SEARCH_IDS: Final = ("tui.altScreen.searchNext", "tui.altScreen.searchPrevious", "tui.altScreen.searchClose")
FULLSCREEN_VIEWPORT_IDS: Final = (
    "tui.altScreen.search",
    "tui.altScreen.pageUp",
    "tui.altScreen.pageDown",
    "tui.altScreen.halfPageUp",
    "tui.altScreen.halfPageDown",
    "tui.altScreen.lineUp",
    "tui.altScreen.lineDown",
    "tui.altScreen.previousPrompt",
    "tui.altScreen.nextPrompt",
    "tui.altScreen.top",
    "tui.altScreen.bottom",
)
HISTORY_IDS: Final = ("tui.editor.historyPrevious", "tui.editor.historyNext")

#: Rule 7: app ids the editor handles. Picker-only ids (`app.thinking.save`, `app.models.*`, R-context
#: `app.session.*`, `app.tree.*`) are absent on purpose, so e.g. `ctrl+s` means nothing in the editor.
EDITOR_APP_IDS: Final = (
    "app.clear",
    "app.suspend",
    "app.thinking.cycle",
    "app.thinking.toggle",
    "app.model.select",
    "app.model.cycleForward",
    "app.model.cycleBackward",
    "app.tools.expand",
    "app.editor.external",
    "app.message.copy",
    "app.message.followUp",
    "app.message.dequeue",
    "app.session.new",
    "app.session.tree",
    "app.session.fork",
    "app.session.resume",
)

#: Rule 8 with the autocomplete list open: these come right after undo.
AUTOCOMPLETE_IDS: Final = (
    "tui.select.cancel",
    "tui.select.up",
    "tui.select.down",
    "tui.input.tab",
    "tui.select.confirm",
)

#: Rule 8: the editor's own actions in precedence order (autocomplete ids excluded; see above).
#: `tui.input.copy` comes last: the editor consumes it without inserting anything.
EDITOR_ACTION_IDS: Final = (
    "tui.editor.undo",
    "tui.input.tab",
    "tui.editor.deleteCharBackward",
    "tui.editor.deleteCharForward",
    "tui.editor.deleteWordBackward",
    "tui.editor.deleteWordForward",
    "tui.editor.deleteToLineStart",
    "tui.editor.deleteToLineEnd",
    "tui.editor.yank",
    "tui.editor.yankPop",
    *HISTORY_IDS,
    "tui.editor.cursorLineStart",
    "tui.editor.cursorLineEnd",
    "tui.editor.cursorWordLeft",
    "tui.editor.cursorWordRight",
    "tui.input.newLine",
    "tui.input.submit",
    "tui.editor.cursorUp",
    "tui.editor.cursorDown",
    "tui.editor.cursorLeft",
    "tui.editor.cursorRight",
    "tui.editor.pageUp",
    "tui.editor.pageDown",
    "tui.editor.jumpForward",
    "tui.editor.jumpBackward",
    "tui.input.copy",
)

#: Extension shortcuts on these ids' keys are skipped.
RESERVED_IDS: Final = frozenset(
    {
        "app.interrupt",
        "app.clear",
        "app.exit",
        "app.redraw",
        "app.suspend",
        "app.thinking.cycle",
        "app.thinking.toggle",
        "app.model.cycleForward",
        "app.model.cycleBackward",
        "app.model.select",
        "app.tools.expand",
        "app.editor.external",
        "app.message.copy",
        "app.message.followUp",
        "tui.input.submit",
        "tui.input.copy",
        "tui.select.confirm",
        "tui.select.cancel",
        "tui.editor.deleteToLineEnd",
    }
)

#: Returned by `route_editor_key` when an extension shortcut takes the key.
EXTENSION: Final = "extension"


@dataclass(frozen=True)
class EditorState:
    """What the router needs to know about the main editor when a key arrives."""

    fullscreen: bool = False
    search_focused: bool = False
    editor_empty: bool = False
    autocomplete_open: bool = False


def route_editor_key(
    manager: KeybindingManager,
    key: UrwidKey,
    state: EditorState,
    extension_keys: Collection[str] = (),
) -> str | None:
    """The id that handles `key` while the main editor is focused, `EXTENSION`, or None.

    None means no binding claims the key: printable text goes into the editor, anything else is ignored.
    `extension_keys` are the urwid names of extension shortcuts already filtered by `check_extension_shortcut`.
    Conditions the router cannot see (nothing to undo, editor with nothing to scroll) are the widget's call.
    """
    if not isinstance(key, str):
        return None

    def first(ids: Sequence[str]) -> str | None:
        return next((id_ for id_ in ids if manager.matches(key, id_)), None)

    if state.fullscreen:
        found = first(FULLSCREEN_SEARCH_IDS) if state.search_focused else None
        found = found or first(FULLSCREEN_VIEWPORT_IDS)
        if found:
            return found
    if key in extension_keys:
        return EXTENSION
    if manager.matches(key, "app.clipboard.pasteImage"):
        return "app.clipboard.pasteImage"
    if manager.matches(key, "app.interrupt"):
        # With the autocomplete list open the interrupt key only closes the list.
        return "tui.select.cancel" if state.autocomplete_open else "app.interrupt"
    if state.editor_empty and manager.matches(key, "app.exit"):
        return "app.exit"
    found = first(HISTORY_IDS) or first(EDITOR_APP_IDS)
    if found:
        return found
    if manager.matches(key, "tui.editor.undo"):
        return "tui.editor.undo"
    if state.autocomplete_open:
        found = first(AUTOCOMPLETE_IDS)
        if found:
            return found
    return first(EDITOR_ACTION_IDS)


def route_scope_key(manager: KeybindingManager, key: UrwidKey, scope: str) -> list[str]:
    """Ids of `scope` bound to `key`, in canonical order; pickers decide among them (normally one)."""
    allowed = set(ids_in_scope(scope))
    return [id_ for id_ in manager.ids_for(key) if id_ in allowed]


def find_conflicts(bindings: Mapping[str, Sequence[KeySpec]], file_name: str = "keybindings.json") -> list[str]:
    """Warnings for keys claimed by two or more of the given ids within one scope, one per key.

    Pass only the user file's bindings: defaults never count as conflicts.
    """
    claims: dict[KeySpec, list[str]] = {}
    for id_ in KEYBINDING_IDS:
        for spec in bindings.get(id_, ()):
            holders = claims.setdefault(spec, [])
            if id_ not in holders:
                holders.append(id_)
    warnings: list[str] = []
    for spec, holders in claims.items():
        clashing: set[str] = set()
        for contexts in SCOPES.values():
            here = [id_ for id_ in holders if KEYBINDINGS_BY_ID[id_].contexts & contexts]
            if len(here) > 1:
                clashing.update(here)
        if clashing:
            names = [id_ for id_ in holders if id_ in clashing]
            listed = ", ".join(names[:-1]) + " and " + names[-1]
            warnings.append(f"{file_name}: {spec.canonical()} is bound to {listed}")
    return warnings


@dataclass(frozen=True)
class ExtensionKeyCheck:
    """Outcome for one extension shortcut: whether it is installed, and the warning to show if any."""

    allowed: bool
    clashes: tuple[str, ...]
    warning: str | None


def check_extension_shortcut(manager: KeybindingManager, spec: KeySpec, owner: str) -> ExtensionKeyCheck:
    """A shortcut on a reserved id's resolved key is skipped; on another built-in key it wins, with a warning."""
    clashes = tuple(id_ for id_ in KEYBINDING_IDS if spec in manager.get_specs(id_))
    reserved = tuple(id_ for id_ in clashes if id_ in RESERVED_IDS)
    if reserved:
        return ExtensionKeyCheck(
            False, clashes, f"{owner}: shortcut {spec} skipped: it is reserved by {', '.join(reserved)}"
        )
    if clashes:
        return ExtensionKeyCheck(True, clashes, f"{owner}: shortcut {spec} overrides {', '.join(clashes)}")
    return ExtensionKeyCheck(True, (), None)
