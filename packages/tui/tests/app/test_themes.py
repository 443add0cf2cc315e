"""Theme discovery in the app (agent dir, trusted project, `--theme`), the fallback warning, `/settings` listing, and
hot reload of the active theme file when its modification time changes."""

import asyncio
import copy
import json
import os
from pathlib import Path
from typing import Any

from app_helpers import SIZE, AppHarness
from urwid.testing import ScriptedScreen

from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.resources.themes import ThemeFlags
from apex_tui.app._themes import POLL_SECONDS
from apex_tui.theme import BUILTIN_THEMES, builtin_theme


def theme_data(name: str, accent: str) -> dict[str, Any]:
    # Any: theme JSON. Start from the dark colours so every required token is there.
    data = copy.deepcopy(dict(BUILTIN_THEMES["dark"]))
    data["name"] = name
    data["colors"] = dict(data["colors"], accent=accent)
    return data


def write_theme(path: Path, name: str, accent: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(theme_data(name, accent)))
    return path


async def test_custom_theme_from_the_agent_dir_is_used_listed_and_hot_reloaded(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    theme_file = write_theme(harness.agent_dir / "themes" / "ocean.json", "ocean", "#0000ff")
    settings = SettingsManager.create(harness.cwd, harness.agent_dir)
    settings.set("theme", "ocean")
    app = await harness.start(settings_manager=settings)
    assert app.theme.name == "ocean" and str(app.theme.color("accent")).lower() == "#0000ff"
    assert "[Themes] ocean" in harness.text()

    # The file changes on disk: the next poll re-reads it (same size, so the mtime alone must tell).
    theme_file.write_text(json.dumps(theme_data("ocean", "#00ff00")))
    stamp = theme_file.stat().st_mtime_ns + 2_000_000_000
    os.utime(theme_file, ns=(stamp, stamp))
    assert app.theme_watcher.poll() is True
    assert str(app.theme.color("accent")).lower() == "#00ff00"
    assert "Theme reloaded: ocean" in harness.text()
    assert app.theme_watcher.poll() is False  # unchanged since: nothing to do

    theme_file.write_text("{broken")
    os.utime(theme_file, ns=(stamp + 10**9, stamp + 10**9))
    assert app.theme_watcher.poll() is False
    # Joined: where the notice wraps depends on the length of the temp path it names.
    assert "invalid theme JSON" in " ".join(harness.text().split()) and app.theme.name == "ocean"

    harness.type("/settings")
    harness.press("enter")
    harness.type("theme")
    harness.press("enter")
    menu = harness.text()
    assert "dark" in menu and "light" in menu and "ocean" in menu and str(theme_file) in menu
    harness.press("up", "enter")  # ocean → light
    assert settings.get("theme") == "light" and app.theme is builtin_theme("light")
    assert app.theme_watcher.path is None  # a built-in has no file to watch


async def test_theme_poll_runs_on_a_main_loop_timer_only_while_a_file_theme_is_active(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    write_theme(harness.agent_dir / "themes" / "ocean.json", "ocean", "#0000ff")
    app = await harness.start()
    aio_loop = asyncio.get_running_loop()
    main_loop = app.make_main_loop(ScriptedScreen(size=SIZE, inputs=[]), aio_loop)
    assert app._theme_alarm is None  # dark is built in: nothing to poll, no timer
    source = app.themes.source("ocean")
    assert source is not None
    app.use_theme(source)
    handle = app._theme_alarm
    assert isinstance(handle, asyncio.TimerHandle)
    assert handle.when() - aio_loop.time() >= POLL_SECONDS - 0.05 and POLL_SECONDS >= 1.0
    app.use_theme(source)  # asking again while the timer is pending adds no second one
    assert app._theme_alarm is handle
    main_loop.remove_alarm(handle)


async def test_project_and_cli_themes_and_the_fallback_warning(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    write_theme(harness.cwd / ".apex-code" / "themes" / "forest.json", "forest", "#228822")
    cli_theme = write_theme(tmp_path / "elsewhere" / "night.json", "night", "#111111")
    app = await harness.start(settings={"theme": "nowhere"}, theme_flags=ThemeFlags((str(cli_theme),)))
    assert app.theme is builtin_theme("dark")
    assert 'Warning: Theme "nowhere" not found; using "dark"' in harness.text()
    assert app.themes.names() == ["dark", "light", "night", "forest"]

    (tmp_path / "untrusted").mkdir()
    other = AppHarness(tmp_path / "untrusted")
    write_theme(other.cwd / ".apex-code" / "themes" / "forest.json", "forest", "#228822")
    settings = SettingsManager.in_memory({})
    settings.set_project_trusted(False)
    app2 = await other.start(settings_manager=settings)
    assert "forest" not in app2.themes.names()


async def test_a_theme_file_with_bad_colours_falls_back_to_dark_with_a_warning(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    data = theme_data("faded", "#00ff00")
    del data["colors"]["accent"]
    (harness.agent_dir / "themes").mkdir()
    (harness.agent_dir / "themes" / "faded.json").write_text(json.dumps(data))
    app = await harness.start(settings={"theme": "faded"})
    assert app.theme is builtin_theme("dark")
    assert "missing required color token(s): accent" in harness.text()
