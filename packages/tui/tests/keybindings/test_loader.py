"""Loading `keybindings.json` (keybindings.md §1, §6, §7; acceptance checks 2-5 and 10)."""

import json
from pathlib import Path

import pytest

from apex_tui.keybindings import (
    KEYBINDING_IDS,
    LEGACY_IDS,
    KeybindingManager,
    load_keybindings,
    migrate_keybindings_file,
    migrate_legacy_ids,
)

LINUX: dict[str, str] = {}


def write(agent_dir: Path, content: object) -> Path:
    path = agent_dir / "keybindings.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def load(agent_dir: Path) -> tuple[KeybindingManager, tuple[str, ...]]:
    manager, warnings = load_keybindings(agent_dir, sys_platform="linux", env=LINUX)
    assert manager.warnings == warnings
    return manager, warnings


def test_missing_file_gives_defaults_without_warnings(tmp_path: Path) -> None:
    manager, warnings = load(tmp_path)
    assert warnings == ()
    assert manager.resolved() == KeybindingManager("linux").resolved()
    assert not (tmp_path / "keybindings.json").exists()


def test_list_value_replaces_and_dedupes_only_its_own_id(tmp_path: Path) -> None:
    write(tmp_path, {"tui.input.submit": ["enter", "ctrl+enter", "enter"]})
    manager, warnings = load(tmp_path)
    assert warnings == ()
    assert manager.get_keys("tui.input.submit") == ["enter", "ctrl+enter"]
    assert manager.get_keys("tui.select.confirm") == ["enter"]
    assert manager.get_keys("tui.altScreen.searchNext") == ["enter", "ctrl+g"]
    assert manager.user_bindings() == {"tui.input.submit": ["enter", "ctrl+enter"]}
    assert manager.matches("ctrl enter", "tui.input.submit")


def test_duplicates_compare_ignoring_spelling(tmp_path: Path) -> None:
    write(tmp_path, {"app.session.new": ["Ctrl+Shift+N", "shift+ctrl+n", "esc", "escape"]})
    manager, warnings = load(tmp_path)
    assert warnings == ()
    assert manager.get_keys("app.session.new") == ["ctrl+shift+n", "escape"]


def test_string_value_replaces_defaults(tmp_path: Path) -> None:
    write(tmp_path, {"app.session.new": "ctrl+shift+n", "app.session.tree": ["ctrl+shift+t", "alt+shift+t"]})
    manager, warnings = load(tmp_path)
    assert warnings == ()
    assert manager.get_keys("app.session.new") == ["ctrl+shift+n"]
    assert manager.matches("ctrl N", "app.session.new")
    assert manager.matches("meta T", "app.session.tree")
    assert manager.get_keys("app.session.fork") == []


def test_empty_list_disables(tmp_path: Path) -> None:
    write(tmp_path, {"tui.altScreen.pageUp": []})
    manager, warnings = load(tmp_path)
    assert warnings == ()
    assert manager.get_keys("tui.altScreen.pageUp") == []
    assert not manager.matches("page up", "tui.altScreen.pageUp")
    assert manager.matches("page up", "tui.editor.pageUp")
    assert manager.display("tui.altScreen.pageUp") == ""


def test_legacy_file_is_rewritten_once(tmp_path: Path) -> None:
    path = write(tmp_path, {"cursorUp": ["up", "ctrl+p"], "expandTools": "ctrl+e", "tui.editor.cursorUp": "alt+k"})
    manager, warnings = load(tmp_path)
    assert warnings == ()
    text = path.read_text(encoding="utf-8")
    assert text == '{\n  "tui.editor.cursorUp": "alt+k",\n  "app.tools.expand": "ctrl+e"\n}\n'
    assert manager.get_keys("tui.editor.cursorUp") == ["alt+k"]
    assert manager.get_keys("app.tools.expand") == ["ctrl+e"]
    before = path.read_bytes()
    load(tmp_path)
    assert path.read_bytes() == before


def test_rewrite_orders_canonically_then_unknown_alphabetically(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {"zeta": 1, "app.exit": "ctrl+q", "undo": "ctrl+z", "alpha": "x", "selectCancel": ["escape"]},
    )
    _, warnings = load(tmp_path)
    assert list(json.loads(path.read_text(encoding="utf-8"))) == [
        "tui.editor.undo",
        "tui.select.cancel",
        "app.exit",
        "alpha",
        "zeta",
    ]
    # Unknown entries stay in the file and are reported.
    assert warnings == (
        'keybindings.json: unknown keybinding id "alpha"',
        'keybindings.json: unknown keybinding id "zeta"',
    )


def test_file_without_legacy_ids_is_never_rewritten(tmp_path: Path) -> None:
    content = '{"app.exit":   "ctrl+q", "zzz": 1}'
    path = write(tmp_path, content)
    load(tmp_path)
    assert path.read_text(encoding="utf-8") == content
    assert migrate_keybindings_file(path) is False


def test_rewrite_can_be_turned_off_but_legacy_ids_still_apply(tmp_path: Path) -> None:
    path = write(tmp_path, {"expandTools": "alt+o"})
    manager, warnings = load_keybindings(tmp_path, sys_platform="linux", env={}, rewrite_legacy=False)
    assert warnings == ()
    assert manager.get_keys("app.tools.expand") == ["alt+o"]
    assert json.loads(path.read_text(encoding="utf-8")) == {"expandTools": "alt+o"}


def test_rewrite_keeps_non_ascii_and_file_mode(tmp_path: Path) -> None:
    path = write(tmp_path, '{"submit": "enter", "ünknown": "ctrl+x"}')
    path.chmod(0o640)
    assert migrate_keybindings_file(path) is True
    assert path.read_text(encoding="utf-8") == '{\n  "tui.input.submit": "enter",\n  "ünknown": "ctrl+x"\n}\n'
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["keybindings.json"]


def test_legacy_mapping_covers_the_spec() -> None:
    assert len(LEGACY_IDS) == 59
    assert set(LEGACY_IDS.values()) <= set(KEYBINDING_IDS)
    assert LEGACY_IDS["selectPageUp"] == "tui.select.pageUp"
    assert LEGACY_IDS["deleteSessionNoninvasive"] == "app.session.deleteNoninvasive"
    assert LEGACY_IDS["yankPop"] == "tui.editor.yankPop"
    # Both present: the namespaced id wins, whatever the order in the file.
    assert migrate_legacy_ids({"tui.input.tab": "a", "tab": "b"}) == {"tui.input.tab": "a"}
    assert migrate_legacy_ids({"tab": "b", "tui.input.tab": "a"}) == {"tui.input.tab": "a"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2]", "keybindings.json: expected an object; using default keybindings"),
        ('"ctrl+x"', "keybindings.json: expected an object; using default keybindings"),
        ("null", "keybindings.json: expected an object; using default keybindings"),
        (
            "{not json",
            "keybindings.json: Expecting property name enclosed in double quotes: line 1 column 2 (char 1); "
            "using default keybindings",
        ),
        ("", "keybindings.json: Expecting value: line 1 column 1 (char 0); using default keybindings"),
    ],
)
def test_unusable_file_warns_once_and_keeps_all_defaults(tmp_path: Path, content: str, message: str) -> None:
    path = write(tmp_path, content)
    manager, warnings = load(tmp_path)
    assert warnings == (message,)
    assert manager.resolved() == KeybindingManager("linux").resolved()
    assert path.read_text(encoding="utf-8") == content


def test_unreadable_file_warns(tmp_path: Path) -> None:
    (tmp_path / "keybindings.json").mkdir()
    manager, warnings = load(tmp_path)
    assert len(warnings) == 1
    assert warnings[0].startswith("keybindings.json: ")
    assert warnings[0].endswith("; using default keybindings")
    assert manager.get_keys("app.clear") == ["ctrl+c"]


def test_unknown_id_suggests_the_nearest(tmp_path: Path) -> None:
    write(tmp_path, {"app.sesion.new": "ctrl+n", "bogus.id": "ctrl+x", "app.model.selct": "ctrl+k"})
    manager, warnings = load(tmp_path)
    # Unknown ids are reported in alphabetical order (the order a rewritten file would list them).
    assert warnings == (
        'keybindings.json: unknown keybinding id "app.model.selct" (did you mean "app.model.select"?)',
        'keybindings.json: unknown keybinding id "app.sesion.new" (did you mean "app.session.new"?)',
        'keybindings.json: unknown keybinding id "bogus.id"',
    )
    assert manager.get_keys("app.session.new") == []
    assert manager.get_keys("app.model.select") == ["ctrl+l"]


@pytest.mark.parametrize("value", [None, 5, 1.5, True, {"key": "ctrl+x"}, ["ctrl+x", 5], [None]])
def test_non_string_values_keep_the_default(tmp_path: Path, value: object) -> None:
    write(tmp_path, {"app.clear": value})
    manager, warnings = load(tmp_path)
    assert warnings == ('keybindings.json: "app.clear" must be a key string or a list of key strings',)
    assert manager.get_keys("app.clear") == ["ctrl+c"]
    assert manager.user_bindings() == {}


def test_bad_key_strings(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "app.clear": "ctrl+nope",
            "app.exit": ["ctrl+blah", "ctrl+q"],
            "app.suspend": ["", "hyper+z"],
            "app.thinking.toggle": "ctrl+ctrl+t",
        },
    )
    manager, warnings = load(tmp_path)
    assert warnings == (
        'keybindings.json: "app.clear": invalid key "ctrl+nope" (unknown key "nope")',
        'keybindings.json: "app.exit": invalid key "ctrl+blah" (unknown key "blah")',
        'keybindings.json: "app.suspend": invalid key "" (empty key)',
        'keybindings.json: "app.suspend": invalid key "hyper+z" (unknown modifier "hyper")',
        'keybindings.json: "app.thinking.toggle": invalid key "ctrl+ctrl+t" (repeated modifier "ctrl")',
    )
    # Every key bad -> default kept; some good -> only the good ones.
    assert manager.get_keys("app.clear") == ["ctrl+c"]
    assert manager.get_keys("app.exit") == ["ctrl+q"]
    assert manager.get_keys("app.suspend") == ["ctrl+z"]
    assert manager.get_keys("app.thinking.toggle") == ["ctrl+t"]
    assert manager.matches("ctrl c", "app.clear")


def test_keys_a_terminal_may_not_deliver_are_kept_silently(tmp_path: Path) -> None:
    write(tmp_path, {"app.session.new": ["super+n", "ctrl+shift+n"], "app.session.tree": "clear"})
    manager, warnings = load(tmp_path)
    assert warnings == ()
    assert manager.urwid_names("app.session.new") == {"super n", "ctrl N"}
    assert manager.get_keys("app.session.tree") == ["clear"]
    assert manager.urwid_names("app.session.tree") == frozenset()


def test_conflict_in_the_user_file_warns_once(tmp_path: Path) -> None:
    write(tmp_path, {"app.model.select": "ctrl+k", "tui.editor.deleteToLineEnd": ["ctrl+k", "alt+k"]})
    manager, warnings = load(tmp_path)
    assert warnings == ("keybindings.json: ctrl+k is bound to tui.editor.deleteToLineEnd and app.model.select",)
    # Both bindings stay; precedence decides.
    assert manager.matches("ctrl k", "app.model.select")
    assert manager.matches("ctrl k", "tui.editor.deleteToLineEnd")


def test_user_binding_over_a_default_is_not_a_conflict(tmp_path: Path) -> None:
    write(tmp_path, {"app.model.select": "ctrl+k"})
    manager, warnings = load(tmp_path)
    assert warnings == ()
    assert manager.ids_for("ctrl k") == ["tui.editor.deleteToLineEnd", "app.model.select"]


def test_same_key_in_separate_contexts_is_not_a_conflict(tmp_path: Path) -> None:
    write(tmp_path, {"app.models.save": "ctrl+s", "app.session.toggleSort": "ctrl+s", "app.thinking.save": "ctrl+s"})
    _, warnings = load(tmp_path)
    assert warnings == ()


def test_three_way_conflict_and_fullscreen_overlap(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "tui.editor.pageUp": "ctrl+pageUp",
            "tui.altScreen.pageUp": "ctrl+pageUp",
            "app.clear": "ctrl+x",
            "app.exit": "shift+ctrl+x",
            "app.suspend": "ctrl+shift+x",
            "app.thinking.toggle": ["ctrl+t", "Ctrl+Shift+X"],
        },
    )
    _, warnings = load(tmp_path)
    assert warnings == (
        "keybindings.json: ctrl+pageUp is bound to tui.editor.pageUp and tui.altScreen.pageUp",
        "keybindings.json: ctrl+shift+x is bound to app.exit, app.suspend and app.thinking.toggle",
    )


def test_reload_rebuilds_from_the_changed_file(tmp_path: Path) -> None:
    write(tmp_path, {"app.tools.expand": "alt+o"})
    first, _ = load(tmp_path)
    assert first.matches("meta o", "app.tools.expand")
    assert not first.matches("ctrl o", "app.tools.expand")
    write(tmp_path, {"app.tools.expand": "ctrl+o"})
    second, _ = load(tmp_path)
    assert second.matches("ctrl o", "app.tools.expand")
    assert second.display("app.tools.expand", style="hotkeys") == "Ctrl+O"


@pytest.mark.parametrize(
    ("sys_platform", "env", "keys"),
    [("win32", {}, ["ctrl+z"]), ("linux", {"WSL_DISTRO_NAME": "Ubuntu"}, ["alt+z"]), ("darwin", {}, ["ctrl+-"])],
)
def test_platform_is_chosen_from_arguments(
    tmp_path: Path, sys_platform: str, env: dict[str, str], keys: list[str]
) -> None:
    manager, _ = load_keybindings(tmp_path, sys_platform=sys_platform, env=env)
    assert manager.get_keys("tui.editor.undo") == keys


def test_manager_rejects_unknown_ids() -> None:
    manager = KeybindingManager("linux")
    with pytest.raises(KeyError):
        manager.get_keys("app.nope")
    with pytest.raises(KeyError):
        manager.matches("ctrl a", "app.nope")
    with pytest.raises(KeyError):
        KeybindingManager("linux", {"app.nope": ["ctrl+a"]})
    assert not manager.matches(("mouse press", 1, 0, 0), "app.clear")


@pytest.mark.parametrize(
    "content",
    ["[" * 100_000 + "]" * 100_000, '{"app.clear": ' + "[" * 100_000 + "]" * 100_000 + "}"],
    ids=["deep-array", "deep-value"],
)
@pytest.mark.parametrize("rewrite", [True, False], ids=["startup", "read-only"])
def test_deeply_nested_file_is_one_warning_and_left_alone(tmp_path: Path, content: str, rewrite: bool) -> None:
    """JSON nested past the parser's recursion limit is no `ValueError`: it must still be a warning, not a crash."""
    path = write(tmp_path, content)
    manager, warnings = load_keybindings(tmp_path, sys_platform="linux", env=LINUX, rewrite_legacy=rewrite)
    assert warnings == ("keybindings.json: nested too deeply; using default keybindings",)
    assert manager.resolved() == KeybindingManager("linux").resolved()
    assert path.read_text(encoding="utf-8") == content
