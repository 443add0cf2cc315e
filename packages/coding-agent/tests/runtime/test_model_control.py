"""Model and thinking control: entries appended, restored on reopen, settings never written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runtime_helpers import Harness, Recorder

from apex_ai.providers.faux import faux_assistant_message
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.session import SessionManager


def _entry_types(file: str | None) -> list[str]:
    return [json.loads(line)["type"] for line in Path(file or "").read_text().splitlines()]


async def test_model_and_thinking_changes_persist_and_restore_without_writing_settings(harness: Harness) -> None:
    settings = SettingsManager.create(harness.cwd, harness.agent_dir)
    harness.script(faux_assistant_message("first"))
    session = await harness.session(manager=harness.persisted_manager(), settings_manager=settings)
    recorder = Recorder()
    session.subscribe(recorder)
    assert session.model is not None and session.model.id == "faux-1"
    assert session.thinking_level == "off"  # clamped: faux-1 has no reasoning
    assert session.get_available_thinking_levels() == ["off"]
    assert session.cycle_thinking_level() is None

    session.set_model(harness.model("faux-think"))
    assert session.thinking_level == "off"
    assert session.set_thinking_level("high") == "high"
    assert session.set_thinking_level("high") == "high"  # no change: no entry, no event
    assert session.set_thinking_level("xhigh") == "high"  # faux-think does not offer xhigh
    await session.prompt("go")
    await session.wait_for_idle()

    assert [e.level for e in recorder.of("thinking_level_changed")] == ["high"]
    assert _entry_types(session.session_file) == [
        "session",
        "model_change",
        "thinking_level_change",
        "model_change",
        "thinking_level_change",
        "message",  # the leading system message, then the exchange
        "message",
        "message",
    ]
    assert not (harness.agent_dir / "settings.json").exists()

    reopened = await harness.session(manager=SessionManager.open(session.session_file or ""))
    assert reopened.model is not None and reopened.model.id == "faux-think"
    assert reopened.thinking_level == "high"
    assert reopened.get_available_thinking_levels() == ["off", "minimal", "low", "medium", "high"]


async def test_thinking_restore_order_and_cycling(harness: Harness) -> None:
    think = harness.model("faux-think")
    session = await harness.session(model=think, settings={"defaultThinkingLevel": "low"})
    assert session.thinking_level == "low"
    assert session.cycle_thinking_level() == "medium"
    fresh = await harness.session(model=think)
    assert fresh.thinking_level == "medium"  # the default when nothing is stored or configured


async def test_settings_default_model_and_cycle_model(harness: Harness) -> None:
    session = await harness.session(settings={"defaultProvider": "faux", "defaultModel": "faux-think"})
    assert session.model is not None and session.model.id == "faux-think"
    result = session.cycle_model()
    assert result is not None and result.model.id == "faux-1" and result.is_scoped is False
    back = session.cycle_model("backward")
    assert back is not None and back.model.id == "faux-think"


async def test_prompt_preconditions(harness: Harness) -> None:
    harness.model_runtime.registry.unregister_provider("faux")
    session = await harness.session()
    assert session.model is None
    calls: list[bool] = []
    with pytest.raises(RuntimeError, match="No model selected"):
        await session.prompt("hi", preflight_result=calls.append)
    assert calls == [False]
