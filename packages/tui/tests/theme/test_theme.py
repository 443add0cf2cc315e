"""Theme data, palettes and theme-file loading."""

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import urwid
from urwid.testing import render_runs, resolve_attr, resolve_runs

from apex_tui.theme import (
    BUILTIN_THEMES,
    REQUIRED_STYLES,
    REQUIRED_TOKENS,
    ThemeError,
    builtin_theme,
    builtin_theme_names,
    load_theme,
    parse_theme,
)


def _theme_data() -> dict[str, Any]:
    return copy.deepcopy(BUILTIN_THEMES["dark"])


@pytest.mark.parametrize("name", ["dark", "light"])
def test_every_required_style_has_a_palette_entry(name: str) -> None:
    names = [entry[0] for entry in builtin_theme(name).palette()]
    assert set(REQUIRED_STYLES) <= set(names)
    assert None in names
    assert len(names) == len(set(names))


@pytest.mark.parametrize("name", ["dark", "light"])
def test_builtin_palettes_register_on_an_urwid_screen(name: str) -> None:
    screen = urwid.display.raw.Screen()
    screen.register_palette(builtin_theme(name).palette())
    assert resolve_attr("mdHeading", builtin_theme(name).palette(), colors=2**24).foreground.startswith("#")


def test_builtins_define_51_required_tokens() -> None:
    assert len(REQUIRED_TOKENS) == 51
    assert builtin_theme_names() == ["dark", "light"]
    for data in BUILTIN_THEMES.values():
        assert set(REQUIRED_TOKENS) <= set(data["colors"])


def test_foreground_styles_inherit_the_block_background() -> None:
    palette = builtin_theme("dark").palette()
    widget = urwid.AttrMap(urwid.Text([("toolOutput", "out"), " x"]), "tool.success")
    (row,) = resolve_runs(render_runs(widget, (6,)), palette, colors=2**24)
    (out_spec, out_text), (rest_spec, _rest) = row
    assert out_text == "out"
    assert out_spec.foreground == "#7f848e"
    assert out_spec.background == rest_spec.background == "#263229"


def test_derived_style_settings() -> None:
    palette = builtin_theme("dark").palette()
    assert resolve_attr("md.emph", palette).italics
    assert resolve_attr("md.heading", palette).bold
    assert resolve_attr("md.link", palette).underline


def test_colors_resolve_vars_ints_and_defaults() -> None:
    data = _theme_data()
    data["vars"]["a"] = "b"
    data["vars"]["b"] = "#ABCDEF"
    data["colors"]["accent"] = "a"
    data["colors"]["border"] = 42
    theme = parse_theme(data)
    assert theme.color("accent") == "#abcdef"
    assert theme.color("border") == 42
    assert theme.color("text") == ""
    entry = next(e for e in theme.palette() if e[0] == "border")
    assert entry[4] == "h42"
    assert entry[5] == "inherit"


def test_optional_tokens_fall_back() -> None:
    data = _theme_data()
    data["colors"]["thinkingXhigh"] = "#010203"
    theme = parse_theme(data)
    assert theme.color("thinkingMax") == "#010203"
    assert theme.color("scrollbarThumb") == theme.color("selectedBg")
    data["colors"]["thinkingMax"] = "#aaaaaa"
    assert parse_theme(data).color("thinkingMax") == "#aaaaaa"


def test_theme_missing_bash_mode_is_rejected(tmp_path: Path) -> None:
    data = _theme_data()
    del data["colors"]["bashMode"]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ThemeError, match=r"t\.json: theme 'dark' is missing required color token\(s\): bashMode"):
        load_theme(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"colors.accent": "#12345"}, r"colors\.accent: invalid hex color '#12345'"),
        ({"colors.accent": 300}, r"colors\.accent: color index 300 is outside 0-255"),
        ({"colors.accent": "nope"}, r"colors\.accent: unknown var 'nope'"),
        ({"colors.accent": True}, r"colors\.accent: invalid color True"),
        ({"vars.blue": "cyan", "vars.cyan": "blue"}, r"var cycle cyan -> blue -> cyan"),
        ({"name": "a/b"}, r'"name" must be a non-empty string'),
    ],
)
def test_invalid_values_name_the_token(change: dict[str, object], message: str) -> None:
    data = _theme_data()
    for dotted, value in change.items():
        if "." in dotted:
            section, key = dotted.split(".")
            data[section][key] = value
        else:
            data[dotted] = value
    with pytest.raises(ThemeError, match=message):
        parse_theme(data, source="x.json")


def test_load_theme_reports_bad_json_and_missing_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x",\n  nope}')
    with pytest.raises(ThemeError, match=r"bad\.json: invalid JSON at line 2 column 3"):
        load_theme(bad)
    with pytest.raises(ThemeError, match="cannot read theme file"):
        load_theme(tmp_path / "missing.json")
    with pytest.raises(ThemeError, match="must be a JSON object"):
        parse_theme([1, 2])


def test_loaded_theme_round_trips(tmp_path: Path) -> None:
    data = _theme_data()
    data["name"] = "mine"
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(data))
    theme = load_theme(path)
    assert theme.name == "mine"
    assert theme.source == str(path)
    assert theme.key != builtin_theme("dark").key
    assert dict(theme.colors) == dict(builtin_theme("dark").colors)


def test_sixteen_color_fallback_uses_basic_names() -> None:
    entry = next(e for e in builtin_theme("dark").palette() if e[0] == "toolDiffRemoved")
    assert entry[1] in {"dark red", "light red"}
    bg_entry = next(e for e in builtin_theme("light").palette() if e[0] == "user")
    assert bg_entry[2] == "light gray"
