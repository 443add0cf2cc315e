"""Themes: role-named colour tokens, the built-in `dark` and `light` palettes, and theme-file loading.

Widgets draw with style names (`REQUIRED_STYLES`); `Theme.palette()` maps each to urwid colours, so switching
theme means registering another palette, never re-rendering text.
"""

from apex_tui.theme._builtin import BUILTIN_THEMES
from apex_tui.theme._theme import (
    Color,
    PaletteEntry,
    Theme,
    ThemeError,
    builtin_theme,
    builtin_theme_names,
    load_theme,
    parse_theme,
)
from apex_tui.theme._tokens import (
    ALL_TOKENS,
    BACKGROUND_STYLES,
    BACKGROUND_TOKENS,
    DERIVED_STYLES,
    OPTIONAL_TOKENS,
    REQUIRED_STYLES,
    REQUIRED_TOKENS,
)

__all__ = [
    "ALL_TOKENS",
    "BACKGROUND_STYLES",
    "BACKGROUND_TOKENS",
    "BUILTIN_THEMES",
    "DERIVED_STYLES",
    "OPTIONAL_TOKENS",
    "REQUIRED_STYLES",
    "REQUIRED_TOKENS",
    "Color",
    "PaletteEntry",
    "Theme",
    "ThemeError",
    "builtin_theme",
    "builtin_theme_names",
    "load_theme",
    "parse_theme",
]
