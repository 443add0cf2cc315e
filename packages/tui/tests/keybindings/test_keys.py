"""Key-string parser (keybindings.md §2, acceptance check 6) and display forms (§8)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apex_tui.keybindings import KeyParseError, KeySpec, format_key, format_keys, normalize_key, parse_key
from apex_tui.keybindings._keys import (
    CANONICAL_MODIFIER_ORDER,
    DIGIT_KEYS,
    FUNCTION_KEYS,
    LETTER_KEYS,
    SPECIAL_KEYS,
    SYMBOL_KEYS,
    needs_extended_keys,
)

ALL_BASE_KEYS = sorted({*LETTER_KEYS, *DIGIT_KEYS, *SPECIAL_KEYS, *FUNCTION_KEYS, *SYMBOL_KEYS})


def test_plus_is_a_base_key() -> None:
    assert parse_key("ctrl++") == KeySpec("+", frozenset({"ctrl"}))
    assert parse_key("+") == KeySpec("+")
    assert parse_key("ctrl+alt++") == KeySpec("+", frozenset({"ctrl", "alt"}))
    assert str(parse_key("Ctrl++")) == "ctrl++"


def test_parsing_is_case_insensitive_and_upper_case_is_not_shift() -> None:
    assert parse_key("Ctrl+PageUp") == parse_key("ctrl+pageup") == KeySpec("pageUp", frozenset({"ctrl"}))
    assert parse_key("Ctrl+P") == parse_key("ctrl+p")
    assert parse_key("P").modifiers == frozenset()
    assert normalize_key("PAGEDOWN") == "pageDown"


def test_modifier_order_does_not_matter_for_equality() -> None:
    assert parse_key("ctrl+shift+x") == parse_key("shift+ctrl+x")
    assert parse_key("ctrl+shift+alt+x") == parse_key("alt+shift+ctrl+x")
    assert parse_key("ctrl+super+k").modifiers == frozenset({"ctrl", "super"})
    # The written order is kept for get_keys(); the canonical spelling is fixed.
    assert str(parse_key("shift+ctrl+p")) == "shift+ctrl+p"
    assert parse_key("shift+ctrl+p").canonical() == "ctrl+shift+p"


def test_aliases_map_to_canonical_names() -> None:
    assert parse_key("esc") == parse_key("escape") == KeySpec("escape")
    assert parse_key("return") == parse_key("enter") == KeySpec("enter")
    assert normalize_key("alt+Return") == "alt+enter"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("ctrl+ctrl+a", 'repeated modifier "ctrl"'),
        ("Ctrl+CTRL+a", 'repeated modifier "ctrl"'),
        ("hyper+a", 'unknown modifier "hyper"'),
        ("ctrl+", "missing base key"),
        ("ctrl+foo", 'unknown key "foo"'),
        ("ctrl+blah", 'unknown key "blah"'),
        ("", "empty key"),
        ("   ", "empty key"),
        ("ctrl++a", "empty modifier"),
        ("f13", 'unknown key "f13"'),
        ("a+b", 'unknown modifier "a"'),
    ],
)
def test_invalid_keys(text: str, reason: str) -> None:
    with pytest.raises(KeyParseError) as caught:
        parse_key(text)
    assert caught.value.reason == reason
    assert caught.value.key == text


@pytest.mark.parametrize("base", ALL_BASE_KEYS)
def test_every_base_key_parses_alone_and_with_ctrl(base: str) -> None:
    assert parse_key(base).base == base
    assert parse_key(f"ctrl+{base}") == KeySpec(base, frozenset({"ctrl"}))


@given(
    base=st.sampled_from(ALL_BASE_KEYS),
    modifiers=st.lists(st.sampled_from(CANONICAL_MODIFIER_ORDER), unique=True),
    upper=st.booleans(),
)
def test_round_trip(base: str, modifiers: list[str], upper: bool) -> None:
    text = "+".join([*modifiers, base])
    spec = parse_key(text.upper() if upper else text)
    assert spec.base == base
    assert spec.modifiers == frozenset(modifiers)
    assert parse_key(str(spec)) == spec
    assert parse_key(spec.canonical()) == spec
    assert str(spec) == text


def test_display_forms() -> None:
    cycle_back = parse_key("shift+ctrl+p")
    assert format_key(cycle_back) == "ctrl+shift+p"
    assert format_key(cycle_back, style="hotkeys") == "Ctrl+Shift+P"
    assert format_key(parse_key("ctrl+pageUp"), style="hotkeys") == "Ctrl+PageUp"
    assert format_key(parse_key("alt+enter"), macos=True) == "option+enter"
    assert format_key(parse_key("alt+enter"), style="hotkeys", macos=True) == "Option+Enter"
    assert format_key(parse_key("ctrl++"), style="hotkeys") == "Ctrl++"
    assert format_keys([parse_key("ctrl+o"), parse_key("f1")], style="hotkeys") == "Ctrl+O/F1"
    assert format_keys([]) == ""


@pytest.mark.parametrize(
    ("text", "extended"),
    [
        ("super+k", True),
        ("ctrl+shift+p", True),
        ("shift+enter", True),
        ("ctrl+1", True),
        ("ctrl+p", False),
        ("alt+enter", False),
        ("shift+tab", False),
        ("ctrl+]", False),
        ("ctrl+shift+up", False),
        ("pageUp", False),
    ],
)
def test_needs_extended_keys(text: str, extended: bool) -> None:
    assert needs_extended_keys(parse_key(text)) is extended
