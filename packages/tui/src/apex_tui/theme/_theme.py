"""Theme values: parsing a theme file into colours, and turning colours into an urwid palette.

Colour forms: `"#rrggbb"`, an int 0–255 (xterm index), the name of a `vars` entry, or `""` for the
terminal default. Vars may name other vars; cycles are errors.
"""

from __future__ import annotations

import colorsys
import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from apex_tui.theme._builtin import BUILTIN_THEMES
from apex_tui.theme._tokens import (
    ALL_TOKENS,
    BACKGROUND_STYLES,
    BACKGROUND_TOKENS,
    DERIVED_STYLES,
    OPTIONAL_TOKENS,
    REQUIRED_TOKENS,
)

PaletteEntry = tuple[str | None, str, str, str, str, str]
"""urwid palette entry: (name, foreground 16, background 16, mono, foreground high, background high)."""

_HEX = re.compile(r"#[0-9a-fA-F]{6}")

# The 16 basic urwid colour names with the RGB values xterm uses for them (index order).
_BASIC: Final[tuple[tuple[str, tuple[int, int, int]], ...]] = (
    ("black", (0, 0, 0)),
    ("dark red", (205, 0, 0)),
    ("dark green", (0, 205, 0)),
    ("brown", (205, 205, 0)),
    ("dark blue", (0, 0, 238)),
    ("dark magenta", (205, 0, 205)),
    ("dark cyan", (0, 205, 205)),
    ("light gray", (229, 229, 229)),
    ("dark gray", (127, 127, 127)),
    ("light red", (255, 0, 0)),
    ("light green", (0, 255, 0)),
    ("yellow", (255, 255, 0)),
    ("light blue", (92, 92, 255)),
    ("light magenta", (255, 0, 255)),
    ("light cyan", (0, 255, 255)),
    ("white", (255, 255, 255)),
)


class ThemeError(ValueError):
    """A theme file cannot be used; the message names the file and the offending token or value."""


Color = str | int
"""A resolved colour: `"#rrggbb"`, an xterm index, or `""` for the terminal default."""


@dataclass(frozen=True, eq=False)
class Theme:
    """A validated theme: every token of `ALL_TOKENS` resolved to a colour.

    `key` identifies the colours; widgets put it into render-cache keys so a theme change invalidates them.
    """

    name: str
    colors: Mapping[str, Color]
    source: str = "builtin"
    key: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", hash((self.name, tuple(sorted((k, str(v)) for k, v in self.colors.items())))))

    def color(self, token: str) -> Color:
        """The colour of `token`; raises `KeyError` for a name that is not a token."""
        return self.colors[token]

    def palette(self) -> list[PaletteEntry]:
        """One urwid palette entry per style of `REQUIRED_STYLES`, plus the default (`None`) entry.

        Foreground styles leave the background `inherit`, so inside a block background (an `AttrMap` or a filled
        canvas) they keep the block's colour.
        """
        entries: list[PaletteEntry] = [_entry(None, self.colors["text"], "", "")]
        for token in ALL_TOKENS:
            if token in BACKGROUND_TOKENS:
                entries.append(_entry(token, self.colors["text"], self.colors[token], ""))
            else:
                entries.append(_entry(token, self.colors[token], None, ""))
        for name, (fg_token, settings) in DERIVED_STYLES.items():
            fg = None if fg_token is None else self.colors[fg_token]
            entries.append(_entry(name, fg, None, settings))
        for name, (bg_token, fg_token) in BACKGROUND_STYLES.items():
            entries.append(_entry(name, self.colors[fg_token], self.colors[bg_token], ""))
        return entries


def _high(color: Color | None) -> str:
    if color is None:
        return "inherit"
    if isinstance(color, int):
        return f"h{color}"
    return color or "default"


def _rgb(color: str | int) -> tuple[int, int, int] | None:
    if isinstance(color, int):
        if color < len(_BASIC):
            return _BASIC[color][1]
        if color >= 232:  # grey ramp
            level = 8 + (color - 232) * 10
            return (level, level, level)
        cube = color - 16
        steps = (0, 95, 135, 175, 215, 255)
        return (steps[cube // 36], steps[(cube // 6) % 6], steps[cube % 6])
    if not color:
        return None
    return (int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16))


_HUES: Final[tuple[tuple[float, str, str], ...]] = (
    (0.0, "dark red", "light red"),
    (60.0, "brown", "yellow"),
    (120.0, "dark green", "light green"),
    (180.0, "dark cyan", "light cyan"),
    (240.0, "dark blue", "light blue"),
    (300.0, "dark magenta", "light magenta"),
    (360.0, "dark red", "light red"),
)


def _basic(color: Color | None, *, background: bool) -> str:
    """A basic colour name close to `color`, for terminals without 256 colours (backgrounds: dark ones only).

    Colours map by hue, greys by lightness: plain RGB distance sends muted theme colours to the greys.
    """
    if color is None:
        return "inherit"
    rgb = _rgb(color)
    if rgb is None:
        return "default"
    hue, saturation, value = colorsys.rgb_to_hsv(*(c / 255 for c in rgb))
    if saturation < 0.25 or value < 0.15:
        if background:
            return "black" if value < 0.5 else "light gray"
        return "black" if value < 0.2 else "dark gray" if value < 0.6 else "light gray" if value < 0.9 else "white"
    _angle, dark, light = min(_HUES, key=lambda h: abs(h[0] - hue * 360))
    return dark if background or value < 0.7 else light


def _entry(name: str | None, fg: Color | None, bg: Color | None, settings: str) -> PaletteEntry:
    suffix = f",{settings}" if settings else ""
    return (
        name,
        _basic(fg, background=False) + suffix,
        _basic(bg, background=True),
        settings or "default",
        _high(fg) + suffix,
        _high(bg),
    )


def _resolve(value: object, variables: Mapping[str, object], where: str, seen: tuple[str, ...] = ()) -> Color:
    if isinstance(value, bool):  # bool is an int subclass; true/false are not colours
        raise ThemeError(f"{where}: invalid color {value!r}")
    if isinstance(value, int):
        if 0 <= value <= 255:
            return value
        raise ThemeError(f"{where}: color index {value} is outside 0-255")
    if not isinstance(value, str):
        raise ThemeError(f'{where}: invalid color {value!r} (expected "#rrggbb", 0-255, a var name or "")')
    if value == "":
        return ""
    if value.startswith("#"):
        if _HEX.fullmatch(value):
            return value.lower()
        raise ThemeError(f"{where}: invalid hex color {value!r} (expected #rrggbb)")
    if value in seen:
        raise ThemeError(f"{where}: var cycle {' -> '.join((*seen, value))}")
    if value not in variables:
        raise ThemeError(f"{where}: unknown var {value!r}")
    return _resolve(variables[value], variables, where, (*seen, value))


def parse_theme(data: object, *, source: str = "<theme>") -> Theme:
    """Validate theme-file data and resolve every colour.

    Raises `ThemeError` naming `source` and the first problem: not an object, missing or bad `name`, a missing
    required token, an unknown var, a var cycle, or a malformed colour.
    """
    if not isinstance(data, dict):
        raise ThemeError(f"{source}: a theme must be a JSON object")
    name = data.get("name")
    if not isinstance(name, str) or not name or "/" in name:
        raise ThemeError(f"{source}: \"name\" must be a non-empty string without '/'")
    raw_vars = data.get("vars", {})
    raw_colors = data.get("colors")
    if not isinstance(raw_vars, dict):
        raise ThemeError(f'{source}: "vars" must be an object')
    if not isinstance(raw_colors, dict):
        raise ThemeError(f'{source}: "colors" must be an object')
    missing = [token for token in REQUIRED_TOKENS if token not in raw_colors]
    if missing:
        raise ThemeError(f"{source}: theme {name!r} is missing required color token(s): {', '.join(missing)}")
    colors: dict[str, Color] = {}
    for token in REQUIRED_TOKENS:
        colors[token] = _resolve(raw_colors[token], raw_vars, f"{source}: colors.{token}")
    for token, fallback in OPTIONAL_TOKENS.items():
        if token in raw_colors:
            colors[token] = _resolve(raw_colors[token], raw_vars, f"{source}: colors.{token}")
        else:
            colors[token] = colors[fallback]
    return Theme(name=name, colors=colors, source=source)


def load_theme(path: str | Path) -> Theme:
    """Read and validate a theme JSON file; raises `ThemeError` for unreadable files and invalid JSON too."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ThemeError(f"{path}: cannot read theme file: {exc.strerror or exc}") from exc
    try:
        data: Any = json.loads(text)  # JSON of unknown shape; parse_theme validates it
    except json.JSONDecodeError as exc:
        raise ThemeError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    return parse_theme(data, source=str(path))


@functools.cache
def builtin_theme(name: str) -> Theme:
    """The built-in theme `name` (`dark` or `light`); raises `KeyError` for other names."""
    return parse_theme(BUILTIN_THEMES[name], source="builtin")


def builtin_theme_names() -> list[str]:
    """Names of the built-in themes."""
    return list(BUILTIN_THEMES)
