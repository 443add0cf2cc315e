"""`/settings`, `/login`, `/logout`, theme from settings and the terminal title, through the real app."""

import json
import stat
from pathlib import Path

from app_helpers import AppHarness

from apex_coding_agent.core.auth_storage import AuthStorage
from apex_tui.theme import builtin_theme
from apex_tui.widgets.pickers import InputDialog, SelectList


async def test_settings_rows_cycle_apply_and_persist(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    settings = app.session.settings_manager
    harness.type("/settings")
    harness.press("enter")
    assert isinstance(app.slot.original_widget, SelectList)
    assert "Auto-compact: on" in harness.text()
    harness.press("enter")
    assert settings.get("compaction.enabled") is False
    assert "Auto-compact: off" in harness.text()
    assert not app.session.auto_compaction_enabled

    harness.press("down", "enter")  # Hide thinking blocks
    assert settings.get("hideThinkingBlock") is True and app.ctx.hide_thinking

    harness.type("theme")
    harness.press("enter")
    assert "── Theme" in harness.text() and "› dark" in harness.text()  # the theme menu, dark highlighted
    harness.press("down")
    assert app.theme is builtin_theme("light") and settings.get("theme") is None  # preview only
    harness.press("esc")
    assert app.theme is builtin_theme("dark")
    harness.press("enter", "down", "enter")
    assert settings.get("theme") == "light" and app.theme is builtin_theme("light")
    assert "Theme: light" in harness.text()
    assert isinstance(app.slot.original_widget, SelectList) and "Settings" in harness.text()
    harness.press("esc", "esc")
    assert app.slot.original_widget is app.editor


async def test_theme_comes_from_settings_and_unknown_names_fall_back_to_dark(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start(settings={"theme": "light"})
    assert app.theme is builtin_theme("light")
    (tmp_path / "other").mkdir()
    other = AppHarness(tmp_path / "other")
    assert (await other.start(settings={"theme": "neon"})).theme is builtin_theme("dark")


async def test_login_stores_a_masked_api_key_and_logout_removes_it(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    auth_file = harness.agent_dir / "auth.json"
    harness.model_runtime.auth = AuthStorage(auth_file)
    app = await harness.start()
    harness.type("/login")
    harness.press("enter")
    assert "Login: choose provider" in harness.text()
    harness.type("faux")
    harness.press("enter")
    assert isinstance(app.slot.original_widget, InputDialog)
    harness.type("sk-secret-1")
    assert "sk-secret-1" not in harness.text() and "***********" in harness.text()
    harness.press("enter")
    assert json.loads(auth_file.read_text()) == {"faux": {"type": "api_key", "key": "sk-secret-1"}}
    assert stat.S_IMODE(auth_file.stat().st_mode) == 0o600
    assert "Saved API key for faux in auth.json" in harness.text()

    harness.type("/logout")
    harness.press("enter")
    harness.press("enter")
    assert json.loads(auth_file.read_text()) == {}
    assert "Logged out of faux" in harness.text()
    harness.type("/logout")
    harness.press("enter")
    assert "No stored credentials" in harness.text()
    harness.type("/login nowhere")
    harness.press("enter")
    assert "Unknown provider: nowhere" in harness.text()


async def test_terminal_title_follows_the_session_name(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    titles: list[str] = []
    app.title_sink = titles.append
    app.update_title()
    harness.type("/name release prep")
    harness.press("enter")
    assert titles == ["apex-code - work", "apex-code - release prep - work"]
