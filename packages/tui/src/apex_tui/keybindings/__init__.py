"""Keybindings of the terminal UI: the id table, key-string parser, urwid key names, loader and routing.

Independent of the coding agent: callers pass the agent directory. See docs/keybindings.md.
"""

from apex_tui.keybindings._docs import render_hotkeys, render_keybindings_reference
from apex_tui.keybindings._keys import (
    KeyParseError,
    KeySpec,
    format_key,
    format_keys,
    needs_extended_keys,
    normalize_key,
    parse_key,
)
from apex_tui.keybindings._legacy import (
    LEGACY_IDS,
    dump_keybindings,
    migrate_keybindings_file,
    migrate_legacy_ids,
)
from apex_tui.keybindings._loader import (
    KEYBINDINGS_FILE_NAME,
    LoadedKeybindings,
    keybindings_path,
    load_keybindings,
    read_keybindings_config,
    validate_keybindings_config,
)
from apex_tui.keybindings._manager import KeybindingManager
from apex_tui.keybindings._platform import Platform, detect_platform, is_windows_style
from apex_tui.keybindings._registry import (
    CATEGORIES,
    KEYBINDING_IDS,
    KEYBINDINGS,
    KEYBINDINGS_BY_ID,
    Context,
    KeybindingDef,
)
from apex_tui.keybindings._routing import (
    AUTOCOMPLETE_IDS,
    EDITOR_ACTION_IDS,
    EDITOR_APP_IDS,
    EXTENSION,
    FULLSCREEN_SEARCH_IDS,
    FULLSCREEN_VIEWPORT_IDS,
    HISTORY_IDS,
    RESERVED_IDS,
    SCOPES,
    EditorState,
    ExtensionKeyCheck,
    check_extension_shortcut,
    find_conflicts,
    ids_in_scope,
    route_editor_key,
    route_scope_key,
)
from apex_tui.keybindings._urwid_keys import (
    UrwidKey,
    from_urwid_name,
    to_urwid_names,
    translate_linefeed,
    urwid_name_to_key_string,
)

__all__ = [
    "AUTOCOMPLETE_IDS",
    "CATEGORIES",
    "EDITOR_ACTION_IDS",
    "EDITOR_APP_IDS",
    "EXTENSION",
    "FULLSCREEN_SEARCH_IDS",
    "FULLSCREEN_VIEWPORT_IDS",
    "HISTORY_IDS",
    "KEYBINDINGS",
    "KEYBINDINGS_BY_ID",
    "KEYBINDINGS_FILE_NAME",
    "KEYBINDING_IDS",
    "LEGACY_IDS",
    "RESERVED_IDS",
    "SCOPES",
    "Context",
    "EditorState",
    "ExtensionKeyCheck",
    "KeyParseError",
    "KeySpec",
    "KeybindingDef",
    "KeybindingManager",
    "LoadedKeybindings",
    "Platform",
    "UrwidKey",
    "check_extension_shortcut",
    "detect_platform",
    "dump_keybindings",
    "find_conflicts",
    "format_key",
    "format_keys",
    "from_urwid_name",
    "ids_in_scope",
    "is_windows_style",
    "keybindings_path",
    "load_keybindings",
    "migrate_keybindings_file",
    "migrate_legacy_ids",
    "needs_extended_keys",
    "normalize_key",
    "parse_key",
    "read_keybindings_config",
    "render_hotkeys",
    "render_keybindings_reference",
    "route_editor_key",
    "route_scope_key",
    "to_urwid_names",
    "translate_linefeed",
    "urwid_name_to_key_string",
    "validate_keybindings_config",
]
