"""`/model`, `/scoped-models` and the thinking picker through the real app (tui.md §9, settings-and-trust.md §2.1)."""

from pathlib import Path

from app_helpers import AppHarness

from apex_tui.widgets.pickers import ModelPicker, ScopedModelsPicker, ThinkingPicker


async def test_model_picker_selects_for_the_session_and_only_save_writes_the_default(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    settings = app.session.settings_manager
    harness.type("/model")
    harness.press("enter")
    picker = app.slot.original_widget
    assert isinstance(picker, ModelPicker)
    assert "Select model: faux" in harness.text()  # one provider: the providers step is skipped
    assert "faux-1 ✓" in harness.text()
    harness.press("down", "enter")
    assert app.session.model is not None and app.session.model.id == "faux-think"
    assert "Model: faux-think" in harness.text()
    assert settings.get("defaultModel") is None and settings.get("defaultProvider") is None

    harness.press("ctrl l")
    harness.type("faux-1")
    harness.press("ctrl s")
    assert settings.get("defaultProvider") == "faux" and settings.get("defaultModel") == "faux-1"
    assert "Default model saved: faux/faux-1" in harness.text()
    assert app.session.model.id == "faux-think"  # saving is not switching
    harness.press("esc")
    assert app.slot.original_widget is app.editor


async def test_scoped_models_apply_at_once_save_to_settings_and_scope_the_model_picker(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    harness.type("/scoped-models")
    harness.press("enter")
    assert isinstance(app.slot.original_widget, ScopedModelsPicker)
    assert "[ ] faux/faux-1" in harness.text()
    harness.press("enter")  # toggle faux-1 on
    assert [s.model.id for s in app.session.scoped_models] == ["faux-1"]
    assert "[x] faux/faux-1" in harness.text()
    assert app.session.settings_manager.get("enabledModels") is None
    harness.press("ctrl s")
    assert app.session.settings_manager.get("enabledModels") == ["faux/faux-1"]
    assert "Model selection saved to settings" in harness.text()
    harness.press("esc")
    harness.type("/model")
    harness.press("enter")
    assert "(scoped)" in harness.text()
    harness.press("tab")
    assert "(all)" in harness.text()


async def test_thinking_picker_applies_and_save_persists_the_default(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start(model="faux-think")
    settings = app.session.settings_manager
    harness.type("/thinking")
    harness.press("enter")
    assert isinstance(app.slot.original_widget, ThinkingPicker)
    assert "Moderate reasoning" in harness.text()
    harness.press("down", "enter")
    assert app.session.thinking_level == "high"
    assert "Thinking level: high" in harness.text()
    assert settings.get("defaultThinkingLevel") is None
    harness.type("/thinking")
    harness.press("enter")
    harness.press("up", "ctrl s")
    assert app.slot.original_widget is app.editor
    assert app.session.thinking_level == "medium"
    assert settings.get("defaultThinkingLevel") == "medium"
    assert "Default thinking level saved: medium" in harness.text()


async def test_thinking_picker_refuses_a_model_without_reasoning(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    harness.type("/thinking")
    harness.press("enter")
    assert app.slot.original_widget is app.editor
    assert "Current model does not support thinking" in harness.text()
