"""Key strings <-> urwid key names (keybindings.md §8, acceptance checks 7 and 8)."""

import pytest
from urwid.display.escape import process_keyqueue

from apex_tui.keybindings import (
    KEYBINDINGS,
    KeybindingManager,
    KeySpec,
    from_urwid_name,
    parse_key,
    to_urwid_names,
    translate_linefeed,
    urwid_name_to_key_string,
)

ALL_DEFAULT_KEYS = sorted(
    {key for d in KEYBINDINGS for platform in ("linux", "darwin", "win32", "wsl") for key in d.defaults_for(platform)}
)


@pytest.mark.parametrize(
    ("key", "names"),
    [
        ("shift+ctrl+p", {"ctrl P"}),
        ("ctrl+shift+p", {"ctrl P"}),
        ("ctrl+-", {"ctrl -", "ctrl _"}),
        ("pageUp", {"page up"}),
        ("ctrl+pageUp", {"ctrl page up"}),
        ("alt+enter", {"meta enter"}),
        ("shift+enter", {"shift enter"}),
        ("ctrl+enter", {"ctrl enter"}),
        ("shift+l", {"L"}),
        ("alt+shift+t", {"meta T"}),
        ("ctrl+shift+f", {"ctrl F"}),
        ("ctrl+shift+up", {"shift ctrl up"}),
        ("ctrl+alt+]", {"meta ctrl ]"}),
        ("ctrl+super+k", {"ctrl super k"}),
        ("escape", {"esc"}),
        ("esc", {"esc"}),
        ("return", {"enter"}),
        ("tab", {"tab"}),
        ("shift+tab", {"shift tab"}),
        ("space", {" "}),
        ("alt+space", {"meta  "}),
        ("ctrl+space", {"<0>", "ctrl  "}),
        ("ctrl+backspace", {"ctrl backspace"}),
        ("alt+delete", {"meta delete"}),
        ("ctrl+home", {"ctrl home"}),
        ("shift+f12", {"shift f12"}),
        ("a", {"a"}),
        ("ctrl+a", {"ctrl a"}),
        ("alt+b", {"meta b"}),
        ("ctrl+alt+x", {"meta ctrl x"}),
        ("ctrl+1", {"ctrl 1"}),
        ("ctrl+]", {"ctrl ]"}),
        ("alt+,", {"meta ,"}),
        ("ctrl+j", {"ctrl j"}),
        ("clear", set()),
    ],
)
def test_compile(key: str, names: set[str]) -> None:
    assert to_urwid_names(parse_key(key)) == names


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("ctrl p", "ctrl+p"),
        ("meta enter", "alt+enter"),
        ("shift tab", "shift+tab"),
        ("page up", "pageUp"),
        ("ctrl page down", "ctrl+pageDown"),
        ("esc", "escape"),
        ("enter", "enter"),
        ("ctrl P", "ctrl+shift+p"),
        ("L", "shift+l"),
        ("meta T", "shift+alt+t"),
        ("shift ctrl up", "ctrl+shift+up"),
        ("meta ctrl ]", "ctrl+alt+]"),
        ("ctrl super k", "ctrl+super+k"),
        ("shift meta ctrl super up", "ctrl+shift+alt+super+up"),
        (" ", "space"),
        ("meta  ", "alt+space"),
        ("ctrl  ", "ctrl+space"),
        ("<0>", "ctrl+space"),
        ("ctrl _", "ctrl+_"),
        ("f5", "f5"),
        ("ctrl 1", "ctrl+1"),
        ("+", "+"),
        ("meta +", "alt++"),
    ],
)
def test_urwid_name_to_key_string(name: str, key: str) -> None:
    assert urwid_name_to_key_string(name) == key


@pytest.mark.parametrize("name", ["begin paste", "end paste", "<123>", "", "window resize", "ctrl", "meta foo"])
def test_non_key_names_give_none(name: str) -> None:
    assert from_urwid_name(name) is None


def test_mouse_events_give_none() -> None:
    assert from_urwid_name(("mouse press", 1, 3, 4)) is None


@pytest.mark.parametrize("key", ALL_DEFAULT_KEYS)
def test_every_default_key_round_trips_through_urwid_names(key: str) -> None:
    spec = parse_key(key)
    names = to_urwid_names(spec)
    assert names, key
    for name in names:
        back = from_urwid_name(name)
        # Legacy aliases name a different key spelling of the same byte (ctrl+- is also 0x1f = ctrl+_).
        if name == "ctrl _" and spec.base == "-":
            assert back == KeySpec("_", frozenset({"ctrl"}))
        else:
            assert back == spec, (key, name)


# Encoder for the kitty keyboard protocol / xterm modified-key sequences, to feed real bytes to urwid.
_MOD_BITS = {"shift": 1, "alt": 2, "ctrl": 4, "super": 8}
_CSI_LETTER = {"up": "A", "down": "B", "right": "C", "left": "D", "home": "H", "end": "F"}
_CSI_TILDE = {"insert": 2, "delete": 3, "pageUp": 5, "pageDown": 6}
_CSI_TILDE.update({f"f{n}": code for n, code in zip(range(5, 13), (15, 17, 18, 19, 20, 21, 23, 24), strict=True)})
_CSI_FUNCTION = {"f1": "P", "f2": "Q", "f3": "R", "f4": "S"}
_CODEPOINTS = {"enter": 13, "tab": 9, "escape": 27, "backspace": 127, "space": 32}


def _encode(spec: KeySpec) -> bytes:
    mod = 1 + sum(_MOD_BITS[m] for m in spec.modifiers)
    if spec.base in _CSI_LETTER:
        return f"\x1b[1;{mod}{_CSI_LETTER[spec.base]}".encode()
    if spec.base in _CSI_FUNCTION:
        return f"\x1b[1;{mod}{_CSI_FUNCTION[spec.base]}".encode()
    if spec.base in _CSI_TILDE:
        return f"\x1b[{_CSI_TILDE[spec.base]};{mod}~".encode()
    code = _CODEPOINTS.get(spec.base, ord(spec.base[0]))
    return f"\x1b[{code};{mod}u".encode()


def _decode(data: bytes) -> list[str]:
    keys, rest = process_keyqueue(list(data), more_available=False)
    assert rest == []
    return [k for k in keys if isinstance(k, str)]


@pytest.mark.parametrize("key", ALL_DEFAULT_KEYS)
def test_every_default_key_decoded_from_extended_bytes_matches(key: str) -> None:
    spec = parse_key(key)
    assert _decode(_encode(spec))[0] in to_urwid_names(spec)


@pytest.mark.parametrize(
    ("data", "id_"),
    [
        (b"\x1b[1;6A", "tui.altScreen.previousPrompt"),
        (b"\x1b[102;6u", "tui.altScreen.search"),
        (b"\x1f", "tui.editor.undo"),
        (b"\x1b[45;5u", "tui.editor.undo"),
        (b"\x1b\r", "app.message.followUp"),
        (b"\x1b[13;3u", "app.message.followUp"),
        (b"\x1b[13;2u", "tui.input.newLine"),
        (b"\x1b[112;6u", "app.model.cycleBackward"),
        (b"\x10", "app.model.cycleForward"),
        (b"\x1b[5~", "tui.altScreen.pageUp"),
        (b"\x1b[5;5~", "tui.editor.pageUp"),
        (b"\x1b[Z", "app.thinking.cycle"),
        (b"\x1d", "tui.editor.jumpForward"),
        (b"\x1b\x1d", "tui.editor.jumpBackward"),
        (b"\x1b\x7f", "tui.editor.deleteWordBackward"),
        (b"\x1b[1;3A", "app.message.dequeue"),
        (b"\x1b[108;2u", "app.tree.editLabel"),
        (b"\x1bb", "tui.editor.cursorWordLeft"),
    ],
)
def test_bytes_match_intended_id(data: bytes, id_: str) -> None:
    manager = KeybindingManager("linux")
    (key,) = _decode(data)
    assert manager.matches(key, id_)


def test_legacy_terminal_bytes_for_defaults() -> None:
    manager = KeybindingManager("linux")
    # Ctrl+Space is NUL without extended keys.
    assert _decode(b"\x00") == ["<0>"]
    assert to_urwid_names(parse_key("ctrl+space")) >= {"<0>"}
    # ESC alone after the timeout.
    assert manager.matches(_decode(b"\x1b")[0], "app.interrupt")


def test_translate_linefeed() -> None:
    # Acceptance 8: raw [10] -> ctrl j, raw [13] -> enter.
    assert translate_linefeed(["enter"], [10]) == ["ctrl j"]
    assert translate_linefeed(["enter"], [13]) == ["enter"]
    assert translate_linefeed(["a", "enter", "b", "enter"], [97, 13, 98, 10]) == ["a", "enter", "b", "ctrl j"]
    # ESC CR is meta enter, not a line feed pairing.
    assert translate_linefeed(["meta enter", "enter"], [27, 13, 10]) == ["meta enter", "ctrl j"]
    # Counts that do not line up leave the batch untouched.
    assert translate_linefeed(["enter"], []) == ["enter"]
    mouse = ("mouse press", 1, 2, 3)
    assert translate_linefeed([mouse, "enter"], [10]) == [mouse, "ctrl j"]


def test_linefeed_key_reaches_new_line_and_carriage_return_reaches_submit() -> None:
    manager = KeybindingManager("linux")
    (lf,) = translate_linefeed(_decode(b"\n"), [10])
    (cr,) = translate_linefeed(_decode(b"\r"), [13])
    assert manager.matches(lf, "tui.input.newLine")
    assert not manager.matches(lf, "tui.input.submit")
    assert manager.matches(cr, "tui.input.submit")
