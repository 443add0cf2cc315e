"""Key strings of `keybindings.json`: parsing, canonical spelling and display.

A key string is `modifier+...+key`. Parsing is case-insensitive; modifiers may come in
any order and each at most once; a trailing `++` or a lone `+` names the `+` key itself.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import Literal

Modifier = Literal["ctrl", "shift", "alt", "super"]

#: Order used when we spell a key ourselves (from urwid names, conflict messages).
CANONICAL_MODIFIER_ORDER: tuple[Modifier, ...] = ("ctrl", "shift", "alt", "super")

_MODIFIERS: dict[str, Modifier] = {m: m for m in CANONICAL_MODIFIER_ORDER}

#: Special keys in their canonical spelling, plus the aliases the spec accepts.
SPECIAL_KEYS: tuple[str, ...] = (
    "escape",
    "enter",
    "tab",
    "space",
    "backspace",
    "delete",
    "insert",
    "clear",
    "home",
    "end",
    "pageUp",
    "pageDown",
    "up",
    "down",
    "left",
    "right",
)
_ALIASES = {"esc": "escape", "return": "enter"}
FUNCTION_KEYS: tuple[str, ...] = tuple(f"f{n}" for n in range(1, 13))
SYMBOL_KEYS: frozenset[str] = frozenset("`-=[]\\;',./!@#$%^&*()_+|~{}:<>?")
LETTER_KEYS: frozenset[str] = frozenset(string.ascii_lowercase)
DIGIT_KEYS: frozenset[str] = frozenset(string.digits)

# Lower-case spelling -> canonical spelling, for every valid base key.
_BASE_KEYS: dict[str, str] = {
    **{k.lower(): k for k in SPECIAL_KEYS},
    **_ALIASES,
    **{k: k for k in FUNCTION_KEYS},
    **{k: k for k in SYMBOL_KEYS},
    **{k: k for k in LETTER_KEYS},
    **{k: k for k in DIGIT_KEYS},
}


class KeyParseError(ValueError):
    """A key string that is not valid; `reason` is the short text shown in warnings."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"invalid key {key!r} ({reason})")
        self.key = key
        self.reason = reason


@dataclass(frozen=True)
class KeySpec:
    """One parsed key: a canonical base key plus a set of modifiers.

    Equality ignores the order the modifiers were written in (`ctrl+shift+x` == `shift+ctrl+x`);
    `written_order` only keeps that order for display.
    """

    base: str
    modifiers: frozenset[Modifier] = frozenset()
    written_order: tuple[Modifier, ...] = field(default=(), compare=False, hash=False)

    def modifier_order(self) -> tuple[Modifier, ...]:
        """The modifiers as written, or in canonical order when built without one."""
        if self.written_order:
            return self.written_order
        return tuple(m for m in CANONICAL_MODIFIER_ORDER if m in self.modifiers)

    def __str__(self) -> str:
        return "+".join([*self.modifier_order(), self.base])

    def canonical(self) -> str:
        """The spelling with modifiers in canonical order (`ctrl`, `shift`, `alt`, `super`)."""
        return "+".join([*(m for m in CANONICAL_MODIFIER_ORDER if m in self.modifiers), self.base])


def parse_key(text: str) -> KeySpec:
    """Parse one key string; raise `KeyParseError` with a short reason when it is invalid."""
    lowered = text.strip().lower()
    if not lowered:
        raise KeyParseError(text, "empty key")
    # The original split naively on "+", which made "+" itself unbindable; a lone "+" or a trailing
    # "++" names the plus key.
    if lowered == "+":
        modifier_tokens: list[str] = []
        base_token = "+"
    elif lowered.endswith("++"):
        modifier_tokens = lowered[:-2].split("+")
        base_token = "+"
    else:
        *modifier_tokens, base_token = lowered.split("+")
    if not base_token:
        raise KeyParseError(text, "missing base key")
    base = _BASE_KEYS.get(base_token)
    if base is None:
        raise KeyParseError(text, f'unknown key "{base_token}"')
    order: list[Modifier] = []
    for token in modifier_tokens:
        if not token:
            raise KeyParseError(text, "empty modifier")
        modifier = _MODIFIERS.get(token)
        if modifier is None:
            raise KeyParseError(text, f'unknown modifier "{token}"')
        if modifier in order:
            raise KeyParseError(text, f'repeated modifier "{token}"')
        order.append(modifier)
    return KeySpec(base=base, modifiers=frozenset(order), written_order=tuple(order))


def normalize_key(text: str) -> str:
    """Lower-case modifiers, canonical base spelling, written modifier order kept (`Ctrl+PageUp` -> `ctrl+pageUp`)."""
    return str(parse_key(text))


DisplayStyle = Literal["hint", "hotkeys"]


def format_key(spec: KeySpec, *, style: DisplayStyle = "hint", macos: bool = False) -> str:
    """Display form: `hint` is lower-case (`ctrl+o`); `hotkeys` capitalises each part (`Ctrl+Shift+P`).

    On macOS `alt` is shown as `option`.
    """
    parts: list[str] = []
    # Display always uses the canonical modifier order, whatever order the file used.
    ordered = [m for m in CANONICAL_MODIFIER_ORDER if m in spec.modifiers]
    for part in [*ordered, spec.base]:
        word = "option" if macos and part == "alt" else part
        parts.append(word[:1].upper() + word[1:] if style == "hotkeys" else word)
    return "+".join(parts)


def format_keys(specs: list[KeySpec], *, style: DisplayStyle = "hint", macos: bool = False) -> str:
    """Several keys joined by `/`; empty for no keys (an unbound id renders nothing)."""
    return "/".join(format_key(spec, style=style, macos=macos) for spec in specs)


def needs_extended_keys(spec: KeySpec) -> bool:
    """True for keys a legacy (non kitty / modifyOtherKeys) terminal cannot deliver as such.

    Only informative (`/hotkeys` marks them); such keys stay bound.
    """
    mods = spec.modifiers
    if "super" in mods:
        return True
    if spec.base in LETTER_KEYS:
        return {"ctrl", "shift"} <= mods
    if spec.base in {"enter", "tab", "backspace", "escape", "space"}:
        return bool(mods) and spec.canonical() not in {"shift+tab", "alt+enter", "alt+backspace", "ctrl+space"}
    if spec.base in DIGIT_KEYS or spec.base in SYMBOL_KEYS:
        # Legacy ctrl codes exist only for a few symbols (ctrl+] is 0x1d, ctrl+- shares 0x1f with ctrl+_).
        return "ctrl" in mods and spec.base not in {"]", "\\", "-", "_", "@", "^"}
    return False
