"""Model picker (steps, search, scope, save), scoped-models picker and thinking picker."""

from urwid.testing import press, render_text

from apex_tui.keybindings import KeybindingManager
from apex_tui.widgets.pickers import ModelOption, ModelPicker, ScopedModelsPicker, ThinkingPicker

from .conftest import Signals

SIZE = (50,)
MODELS = [
    ModelOption("anthropic", "claude-sonnet-4-6", "Claude Sonnet 4.6", current=True),
    ModelOption("anthropic", "claude-haiku-4-5", "Claude Haiku 4.5"),
    ModelOption("openai", "gpt-5", "GPT-5"),
    ModelOption("openai", "gpt-5-mini", "GPT-5 mini", available=False),
    ModelOption("google", "gemini-2.5-pro", "Gemini 2.5 Pro"),
]


def _labels(picker: ModelPicker | ScopedModelsPicker | ThinkingPicker) -> list[str]:
    return [item.label for item in picker.visible_items]


def test_providers_then_models_and_back(keymap: KeybindingManager) -> None:
    picker = ModelPicker(MODELS, keymap)
    signals = Signals(picker, "select", "cancel")
    assert render_text(picker, SIZE, strip=True) == [
        "── Select model ──────────────────────────────────",
        ">",
        "› anthropic  2 models",
        "  openai  2 models",
        "  google  1 model",
        "──────────────────────────────────────────────────",
    ]
    press(picker, SIZE, "down", "enter")
    assert picker.step == "models" and _labels(picker) == ["gpt-5", "gpt-5-mini"]
    assert render_text(picker, SIZE, strip=True)[3] == "  gpt-5-mini  GPT-5 mini (no credentials)"
    press(picker, SIZE, "down", "enter")  # no credentials: nothing selected
    assert signals.events == []
    press(picker, SIZE, "esc")
    assert picker.step == "providers" and picker.highlighted_value() == "openai"
    press(picker, SIZE, "up", "enter")
    assert picker.highlighted_value() == MODELS[0]  # the current model is preselected
    assert _labels(picker)[0] == "claude-sonnet-4-6 ✓"
    press(picker, SIZE, "down", "enter", "esc", "esc")
    assert signals.events == [("select", MODELS[1]), ("cancel", None)]


def test_query_searches_all_models_from_step_one(keymap: KeybindingManager) -> None:
    picker = ModelPicker(MODELS, keymap, query="gemini")
    assert _labels(picker) == ["google/gemini-2.5-pro"]
    signals = Signals(picker, "select", "save")
    press(picker, SIZE, "ctrl s", "enter")
    assert signals.events == [("save", MODELS[4]), ("select", MODELS[4])]
    press(picker, SIZE, "ctrl u")
    assert _labels(picker) == ["anthropic", "openai", "google"]
    press(picker, SIZE, "ctrl s")  # a provider row: nothing to save
    assert len(signals.events) == 2


def test_scope_starts_scoped_and_tab_toggles(keymap: KeybindingManager) -> None:
    picker = ModelPicker(MODELS, keymap, scoped=["openai/gpt-5", "google/gemini-2.5-pro"])
    assert picker.scope == "scoped"
    assert render_text(picker, SIZE, strip=True)[0].startswith("── Select model (scoped) ──")
    assert _labels(picker) == ["openai", "google"]
    press(picker, SIZE, "tab")
    assert picker.scope == "all" and _labels(picker) == ["anthropic", "openai", "google"]
    single = ModelPicker(MODELS, keymap, scoped=["openai/gpt-5"])
    assert single.step == "models" and _labels(single) == ["gpt-5"]
    signals = Signals(single, "cancel")
    press(single, SIZE, "esc")
    assert signals.events == [("cancel", None)]


def test_status_line_and_catalog_refresh(keymap: KeybindingManager) -> None:
    picker = ModelPicker(MODELS[:2], keymap)
    picker.set_status("Refreshing model catalog...")
    assert render_text(picker, SIZE, strip=True)[1] == "  Refreshing model catalog..."
    picker.set_models([*MODELS[:2], ModelOption("anthropic", "claude-opus-4-5")])
    assert _labels(picker) == ["claude-sonnet-4-6 ✓", "claude-haiku-4-5", "claude-opus-4-5"]


def test_scoped_models_toggle_bulk_reorder_save(keymap: KeybindingManager) -> None:
    picker = ScopedModelsPicker(MODELS, keymap, enabled=["openai/gpt-5"])
    signals = Signals(picker, "change", "save")
    assert _labels(picker)[:2] == ["[x] openai/gpt-5", "[ ] anthropic/claude-sonnet-4-6"]
    press(picker, SIZE, "down", "enter")
    assert picker.enabled == ["openai/gpt-5", "anthropic/claude-sonnet-4-6"]
    press(picker, SIZE, "meta up")
    assert picker.enabled == ["anthropic/claude-sonnet-4-6", "openai/gpt-5"]
    assert picker.highlighted_value() == MODELS[0]
    press(picker, SIZE, "ctrl p")  # provider anthropic: not all on, so all on
    assert picker.enabled == ["anthropic/claude-sonnet-4-6", "openai/gpt-5", "anthropic/claude-haiku-4-5"]
    press(picker, SIZE, "ctrl p")
    assert picker.enabled == ["openai/gpt-5"]
    press(picker, SIZE, *"gem", "ctrl a")
    assert picker.enabled == ["openai/gpt-5", "google/gemini-2.5-pro"]
    press(picker, SIZE, "ctrl u", "ctrl x")
    assert picker.enabled == []
    press(picker, SIZE, "ctrl s")
    assert signals.events[-1] == ("save", [])
    assert [payload for name, payload in signals.events if name == "change"][0] == [
        "openai/gpt-5",
        "anthropic/claude-sonnet-4-6",
    ]


def test_thinking_picker_select_and_save(keymap: KeybindingManager) -> None:
    picker = ThinkingPicker(
        keymap, current="medium", levels=[("off", "No reasoning"), ("medium", "Moderate"), ("high", "Deep")]
    )
    signals = Signals(picker, "select", "save", "cancel")
    assert render_text(picker, SIZE, strip=True) == [
        "── Thinking level ────────────────────────────────",
        "  off  No reasoning",
        "› medium ✓  Moderate",
        "  high  Deep",
        "──────────────────────────────────────────────────",
    ]
    press(picker, SIZE, "down", "ctrl s", "enter", "esc")
    assert signals.events == [("save", "high"), ("select", "high"), ("cancel", None)]
