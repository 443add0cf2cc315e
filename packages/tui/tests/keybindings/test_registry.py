"""The id table (keybindings.md §3, §4, acceptance check 1) and conflicts over the whole default table."""

import json
from pathlib import Path

import pytest

from apex_tui.keybindings import (
    CATEGORIES,
    KEYBINDING_IDS,
    KEYBINDINGS,
    SCOPES,
    Context,
    KeybindingManager,
    Platform,
    detect_platform,
    ids_in_scope,
    parse_key,
    to_urwid_names,
)

# §3 "Default" column, extracted from the spec table into test data.
SPEC_LINUX_DEFAULTS: dict[str, list[str]] = json.loads(
    (Path(__file__).parent / "data" / "spec_linux_defaults.json").read_text(encoding="utf-8")
)

# §3 "W" column and the macOS note, written out per platform.
SPEC_VARIANTS: dict[str, dict[str, list[str]]] = {
    "tui.editor.undo": {"win32": ["ctrl+z"], "wsl": ["alt+z"]},
    "tui.altScreen.previousPrompt": {"win32": ["ctrl+up"], "wsl": ["ctrl+up"]},
    "tui.altScreen.nextPrompt": {"win32": ["ctrl+down"], "wsl": ["ctrl+down"]},
    "tui.altScreen.search": {"win32": ["ctrl+f"], "wsl": ["ctrl+f"]},
    "app.suspend": {"win32": [], "wsl": ["ctrl+z"]},
    "app.clipboard.pasteImage": {"win32": ["alt+v"], "wsl": ["alt+v"]},
    "app.model.cycleBackward": {"win32": ["alt+p"], "wsl": ["alt+p"]},
    "app.message.followUp": {"win32": ["ctrl+q"], "wsl": ["ctrl+q"]},
    "app.message.dequeue": {"win32": ["alt+q"], "wsl": ["alt+q"]},
    "app.tree.foldOrUp": {"darwin": ["alt+left", "ctrl+left"]},
    "app.tree.unfoldOrDown": {"darwin": ["alt+right", "ctrl+right"]},
}

PLATFORMS: tuple[Platform, ...] = ("linux", "darwin", "win32", "wsl")


def expected_keys(id_: str, platform: Platform) -> list[str]:
    defaults = SPEC_LINUX_DEFAULTS[id_] if id_ in SPEC_LINUX_DEFAULTS else APEX_ADDITIONS[id_]
    return SPEC_VARIANTS.get(id_, {}).get(platform, defaults)


APEX_ADDITIONS = {
    "app.session.toggleFullText": ["ctrl+f"],
    "app.mcp.reconnect": ["ctrl+r"],
    "app.redraw": ["alt+l"],
}


def test_ninety_ids_in_spec_order() -> None:
    spec_ids = KEYBINDING_IDS[:90]
    assert sum(id_.startswith("tui.") for id_ in spec_ids) == 47
    assert sum(id_.startswith("app.") for id_ in spec_ids) == 43
    assert list(spec_ids) == list(SPEC_LINUX_DEFAULTS)
    assert list(KEYBINDING_IDS[90:]) == list(APEX_ADDITIONS)  # our own, after the original product's


@pytest.mark.parametrize("platform", PLATFORMS)
def test_defaults_match_the_spec_for_every_id(platform: Platform) -> None:
    manager = KeybindingManager(platform)
    resolved = manager.resolved()
    assert list(resolved) == list(KEYBINDING_IDS)
    for id_ in KEYBINDING_IDS:
        assert manager.get_keys(id_) == expected_keys(id_, platform), (platform, id_)
        assert resolved[id_] == manager.get_keys(id_)
    assert manager.user_bindings() == {}
    assert manager.warnings == ()


@pytest.mark.parametrize(
    ("sys_platform", "env", "platform"),
    [
        ("linux", {}, "linux"),
        ("linux", {"WT_SESSION": "abc"}, "linux"),
        ("linux", {"WSL_DISTRO_NAME": "Ubuntu"}, "wsl"),
        ("linux", {"WSL_INTEROP": "/run/WSL/1_interop"}, "wsl"),
        ("linux", {"WSL_DISTRO_NAME": ""}, "linux"),
        ("darwin", {"WSL_DISTRO_NAME": "Ubuntu"}, "darwin"),
        ("win32", {}, "win32"),
        ("freebsd14", {}, "linux"),
    ],
)
def test_detect_platform(sys_platform: str, env: dict[str, str], platform: Platform) -> None:
    assert detect_platform(sys_platform, env) == platform


def test_every_definition_is_complete() -> None:
    for definition in KEYBINDINGS:
        assert definition.description.strip(), definition.id
        assert definition.category in CATEGORIES
        assert definition.contexts, definition.id
        for platform in PLATFORMS:
            for key in definition.defaults_for(platform):
                assert str(parse_key(key)) == key, (definition.id, key)
    # Categories appear as contiguous blocks of the canonical order, so the docs table keeps that order.
    seen = [d.category for d in KEYBINDINGS]
    assert [c for i, c in enumerate(seen) if i == 0 or seen[i - 1] != c] == list(CATEGORIES)


def test_contexts_follow_the_spec_letters() -> None:
    by_id = {d.id: d.contexts for d in KEYBINDINGS}
    assert by_id["tui.input.tab"] == {Context.EDITOR, Context.LIST}
    assert by_id["tui.input.copy"] == {Context.EDITOR, Context.LIST}
    assert by_id["app.message.copy"] == {Context.EDITOR, Context.TREE}
    assert by_id["app.models.save"] == {Context.MODELS}
    assert by_id["app.thinking.save"] == {Context.THINKING}
    assert all(by_id[i] == {Context.RESUME} for i in KEYBINDING_IDS if i.startswith("app.session.toggle"))
    assert all(by_id[i] == {Context.TREE} for i in KEYBINDING_IDS if i.startswith("app.tree."))
    assert all(by_id[i] == {Context.LIST} for i in KEYBINDING_IDS if i.startswith("tui.select."))


# Default overlaps the spec asks for, per scope: key -> ids sharing it. Anything else is a conflict.
_EDITOR_OVERLAPS = {
    "ctrl+d": {"tui.editor.deleteCharForward", "app.exit"},  # §5.1 rule 5: exit only when empty
    "ctrl+c": {"tui.input.copy", "app.clear"},  # §3.2: the editor leaves ctrl+c to app.clear
}
_FULLSCREEN_OVERLAPS = {
    **_EDITOR_OVERLAPS,
    # §5.2: the transcript takes these keys in fullscreen.
    "home": {"tui.editor.cursorLineStart", "tui.altScreen.top"},
    "end": {"tui.editor.cursorLineEnd", "tui.altScreen.bottom"},
    "pageUp": {"tui.editor.pageUp", "tui.altScreen.pageUp"},
    "pageDown": {"tui.editor.pageDown", "tui.altScreen.pageDown"},
}
_LIST_OVERLAPS = {"ctrl+c": {"tui.input.copy", "tui.select.cancel"}}  # copy in inputs, cancel in lists
ALLOWED_OVERLAPS: dict[str, dict[str, set[str]]] = {
    "editor": _EDITOR_OVERLAPS,
    "fullscreen editor": _FULLSCREEN_OVERLAPS,
    "fullscreen search": {},
    "list": _LIST_OVERLAPS,
    "session picker": _LIST_OVERLAPS,
    "tree": _LIST_OVERLAPS,
    "model picker": _LIST_OVERLAPS,
    "thinking picker": _LIST_OVERLAPS,
    "mcp panel": _LIST_OVERLAPS,
}
# §5.2: on Windows/WSL the search key ctrl+f shadows the editor's cursor-right in fullscreen.
WINDOWS_FULLSCREEN_OVERLAPS = {"ctrl+f": {"tui.editor.cursorRight", "tui.altScreen.search"}}


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("scope", list(SCOPES))
def test_no_unexpected_default_conflicts(platform: Platform, scope: str) -> None:
    manager = KeybindingManager(platform)
    # Compare urwid names, so two spellings of the same delivered key (ctrl+- and ctrl+_) also count.
    by_name: dict[str, set[str]] = {}
    for id_ in ids_in_scope(scope):
        for name in manager.urwid_names(id_):
            by_name.setdefault(name, set()).add(id_)
    shared = {name: ids for name, ids in by_name.items() if len(ids) > 1}
    allowed = dict(ALLOWED_OVERLAPS[scope])
    if scope == "fullscreen editor" and platform in ("win32", "wsl"):
        allowed |= WINDOWS_FULLSCREEN_OVERLAPS
    expected = {name: ids for key, ids in allowed.items() for name in to_urwid_names(parse_key(key))}
    assert shared == expected


@pytest.mark.parametrize(
    ("key", "holders"),
    [
        # §5.3: same key in separate contexts is not a conflict.
        ("ctrl+p", ["app.session.togglePath", "app.model.cycleForward", "app.models.toggleProvider"]),
        ("ctrl+s", ["app.session.toggleSort", "app.models.save", "app.thinking.save"]),
        ("ctrl+o", ["app.tools.expand", "app.tree.filter.cycleForward"]),
        ("ctrl+t", ["app.thinking.toggle", "app.tree.filter.noTools"]),
        ("alt+up", ["app.message.dequeue", "app.models.reorderUp"]),
        ("enter", ["tui.input.submit", "tui.select.confirm", "tui.altScreen.searchNext"]),
        ("escape", ["tui.select.cancel", "tui.altScreen.searchClose", "app.interrupt"]),
    ],
)
def test_shared_keys_live_in_separate_scopes(key: str, holders: list[str]) -> None:
    manager = KeybindingManager("linux")
    spec = parse_key(key)
    assert [id_ for id_ in KEYBINDING_IDS if spec in manager.get_specs(id_)] == holders
    for scope in SCOPES:
        assert sum(id_ in ids_in_scope(scope) for id_ in holders) <= 1, scope


def test_ctrl_s_means_nothing_in_the_editor() -> None:
    manager = KeybindingManager("linux")
    assert [i for i in manager.ids_for("ctrl s") if i in ids_in_scope("editor")] == []
