"""Thinking level support and clamping (spec ai.md §13, acceptance check 14)."""

from apex_ai.thinking import MODEL_THINKING_LEVELS, THINKING_LEVELS, clamp_level, supported_levels
from apex_ai.types import Model


def _model(reasoning: bool = True, level_map: dict[str, str | None] | None = None) -> Model:
    return Model(id="m", api="openai-responses", provider="openai", reasoning=reasoning, thinking_level_map=level_map)


def test_level_tables() -> None:
    assert THINKING_LEVELS == ("minimal", "low", "medium", "high", "xhigh", "max")
    assert MODEL_THINKING_LEVELS[0] == "off"


def test_non_reasoning_model_supports_only_off() -> None:
    model = _model(reasoning=False)
    assert supported_levels(model) == ["off"]
    assert clamp_level(model, "high") == "off"
    assert clamp_level(model, "minimal") == "off"


def test_reasoning_model_without_map_supports_off_to_high() -> None:
    assert supported_levels(_model()) == ["off", "minimal", "low", "medium", "high"]


def test_minimal_marked_unsupported_clamps_up_to_low() -> None:
    model = _model(level_map={"minimal": None})
    assert supported_levels(model) == ["off", "low", "medium", "high"]
    assert clamp_level(model, "minimal") == "low"


def test_xhigh_without_map_entry_clamps_down_to_high() -> None:
    assert clamp_level(_model(), "xhigh") == "high"
    assert clamp_level(_model(), "max") == "high"


def test_xhigh_and_max_supported_when_mapped() -> None:
    model = _model(level_map={"xhigh": "xhigh", "max": None})
    assert supported_levels(model) == ["off", "minimal", "low", "medium", "high", "xhigh"]
    assert clamp_level(model, "xhigh") == "xhigh"
    assert clamp_level(model, "max") == "xhigh"


def test_off_unsupported_clamps_up() -> None:
    model = _model(level_map={"off": None, "minimal": None})
    assert clamp_level(model, "off") == "low"


def test_supported_level_is_kept() -> None:
    assert clamp_level(_model(), "medium") == "medium"
