"""Translation between our key strings and the key names urwid 5 reports.

urwid spells modifiers as words in the fixed order `shift meta ctrl super`, drops `shift` for letters and
reports the upper-case letter instead (`ctrl+shift+p` -> `ctrl P`), and names a few keys differently
(`esc`, `page up`, `' '`).
"""

from __future__ import annotations

from collections.abc import Sequence

from apex_tui.keybindings._keys import (
    DIGIT_KEYS,
    FUNCTION_KEYS,
    LETTER_KEYS,
    SYMBOL_KEYS,
    KeySpec,
    Modifier,
)

# Ours -> urwid word, in the order urwid emits them.
_URWID_MODIFIERS: tuple[tuple[Modifier, str], ...] = (
    ("shift", "shift"),
    ("alt", "meta"),
    ("ctrl", "ctrl"),
    ("super", "super"),
)

_SPECIAL_TO_URWID: dict[str, str] = {
    "escape": "esc",
    "enter": "enter",
    "tab": "tab",
    "space": " ",
    "backspace": "backspace",
    "delete": "delete",
    "insert": "insert",
    "home": "home",
    "end": "end",
    "pageUp": "page up",
    "pageDown": "page down",
    "up": "up",
    "down": "down",
    "left": "left",
    "right": "right",
    **{f: f for f in FUNCTION_KEYS},
}
_URWID_TO_SPECIAL: dict[str, str] = {v: k for k, v in _SPECIAL_TO_URWID.items()}

# Extra names a terminal without extended keys sends for the same key.
_LEGACY_ALIASES: dict[KeySpec, frozenset[str]] = {
    # 0x1F: the same byte as ctrl+_ (and ctrl+/ in xterm).
    KeySpec("-", frozenset({"ctrl"})): frozenset({"ctrl _"}),
    # NUL from legacy terminals; CSI-u terminals report "ctrl  ".
    KeySpec("space", frozenset({"ctrl"})): frozenset({"<0>"}),
}

UrwidKey = str | tuple[object, ...]
"""What urwid passes to `keypress`/input filters: a key name, or a tuple for mouse events."""


def to_urwid_names(spec: KeySpec) -> frozenset[str]:
    """Every urwid key name that means `spec`; empty for `clear` (urwid has no name for keypad 5)."""
    if spec.base == "clear":
        return frozenset()
    modifiers = set(spec.modifiers)
    if spec.base in LETTER_KEYS and "shift" in modifiers:
        base = spec.base.upper()
        modifiers.discard("shift")
    else:
        base = _SPECIAL_TO_URWID.get(spec.base, spec.base)
    words = [word for ours, word in _URWID_MODIFIERS if ours in modifiers]
    name = " ".join([*words, base])
    return frozenset({name}) | _LEGACY_ALIASES.get(spec, frozenset())


def from_urwid_name(name: UrwidKey) -> KeySpec | None:
    """The key an urwid key name stands for, or None (mouse events, paste markers, unknown names)."""
    if not isinstance(name, str) or not name:
        return None
    if name == "<0>":
        return KeySpec("space", frozenset({"ctrl"}))
    modifiers: set[Modifier] = set()
    rest = name
    for ours, word in _URWID_MODIFIERS:
        prefix = word + " "
        # `len(rest) > len(prefix)` keeps "meta  " (alt+space) working: the base key is the final space.
        if rest.startswith(prefix) and len(rest) > len(prefix):
            modifiers.add(ours)
            rest = rest[len(prefix) :]
    if rest in _URWID_TO_SPECIAL:
        base = _URWID_TO_SPECIAL[rest]
    elif len(rest) == 1 and rest.lower() in LETTER_KEYS:
        base = rest.lower()
        if rest.isupper():
            modifiers.add("shift")
    elif rest in DIGIT_KEYS or rest in SYMBOL_KEYS:
        base = rest
    else:
        return None
    return KeySpec(base, frozenset(modifiers))


def urwid_name_to_key_string(name: UrwidKey) -> str | None:
    """`'meta enter'` -> `'alt+enter'`, `'ctrl P'` -> `'ctrl+shift+p'`; None when not a key."""
    spec = from_urwid_name(name)
    return None if spec is None else spec.canonical()


_LF = 10
_CR = 13
_ESC = 27


def translate_linefeed(keys: Sequence[UrwidKey], raw: Sequence[int]) -> list[UrwidKey]:
    """Input filter step: report a raw line feed (byte 10) as `ctrl j`, a carriage return as `enter`.

    urwid names both bytes `enter`. With ICRNL cleared the terminal sends 13 for Enter and 10 for Ctrl+J,
    so the raw codes tell them apart. Each `enter` in `keys` pairs, in order, with a lone 10/13 in `raw`
    (one not following ESC, which would make `meta enter`); if the counts differ the batch is left alone.
    """
    result = list(keys)
    enter_positions = [i for i, key in enumerate(result) if key == "enter"]
    newline_bytes = [code for i, code in enumerate(raw) if code in (_LF, _CR) and (i == 0 or raw[i - 1] != _ESC)]
    if len(enter_positions) != len(newline_bytes):
        return result
    for position, code in zip(enter_positions, newline_bytes, strict=True):
        if code == _LF:
            result[position] = "ctrl j"
    return result
