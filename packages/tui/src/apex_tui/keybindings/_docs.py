"""Markdown generated from the registry: the docs reference table and the live `/hotkeys` tables."""

from __future__ import annotations

from apex_tui.keybindings._keys import needs_extended_keys
from apex_tui.keybindings._manager import KeybindingManager
from apex_tui.keybindings._registry import CATEGORIES, KEYBINDINGS, KeybindingDef


def _code_list(keys: tuple[str, ...]) -> str:
    return ", ".join(f"`{k}`" for k in keys) if keys else "None"


def _default_cell(definition: KeybindingDef) -> str:
    """Linux/macOS default plus the platform variants in words, e.g. "`ctrl+-` (`ctrl+z` on Windows; ...)"."""
    cell = _code_list(definition.defaults)
    notes: list[str] = []
    if definition.windows is not None:
        notes.append(f"{_code_list(definition.windows)} on Windows and WSL")
    if definition.win32 is not None:
        notes.append(f"{_code_list(definition.win32)} on Windows")
    if definition.wsl is not None:
        notes.append(f"{_code_list(definition.wsl)} on WSL")
    if definition.darwin is not None:
        notes.append(f"{_code_list(definition.darwin)} on macOS")
    return f"{cell} ({'; '.join(notes)})" if notes else cell


def _escape_cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_keybindings_reference() -> str:
    """The docs table of every id, one section per category, in canonical order."""
    lines: list[str] = []
    for category in CATEGORIES:
        lines += [f"### {category}", "", "| Keybinding id | Default | Description |", "|---|---|---|"]
        for definition in KEYBINDINGS:
            if definition.category == category:
                cells = (f"`{definition.id}`", _default_cell(definition), definition.description)
                lines.append("| " + " | ".join(_escape_cell(c) for c in cells) + " |")
        lines.append("")
    return "\n".join(lines)


#: `/hotkeys` groups: registry category -> table title.
HOTKEYS_GROUPS: dict[str, str] = {
    "Cursor movement": "Navigation",
    "Fullscreen": "Navigation",
    "Text editing": "Editing",
    "Input and selection": "Editing",
}
_HOTKEYS_ORDER = ("Navigation", "Editing", "Other")


def render_hotkeys(manager: KeybindingManager) -> str:
    """Markdown tables of the live bindings (Navigation / Editing / Other), `Ctrl+Shift+P` style.

    Ids without keys are omitted; keys a legacy terminal cannot send are marked "may need extended keys".
    """
    rows: dict[str, list[str]] = {group: [] for group in _HOTKEYS_ORDER}
    for definition in KEYBINDINGS:
        specs = manager.get_specs(definition.id)
        if not specs:
            continue
        keys = manager.display(definition.id, style="hotkeys")
        note = " (may need extended keys)" if any(needs_extended_keys(s) for s in specs) else ""
        group = HOTKEYS_GROUPS.get(definition.category, "Other")
        rows[group].append(f"| `{_escape_cell(keys)}` | {_escape_cell(definition.description)}{note} |")
    lines: list[str] = []
    for group in _HOTKEYS_ORDER:
        if rows[group]:
            lines += [f"**{group}**", "", "| Key | Action |", "|---|---|", *rows[group], ""]
    return "\n".join(lines)
