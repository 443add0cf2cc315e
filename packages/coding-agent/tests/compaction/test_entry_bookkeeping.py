"""A compaction's entry on disk records what started it, the context size before and after, and the summarizer
(issue 6: trigger, tokens before/after and model), for manual and threshold compactions run by a real session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from apex_ai.models import ModelRegistry
from apex_ai.providers.faux import FauxProvider, faux_assistant_message
from apex_ai.types import AssistantMessage
from apex_coding_agent.compaction import CompactionResult, context_tokens, estimate_tokens
from apex_coding_agent.core.auth_storage import AuthStorage
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.runtime import AgentSession, SessionEvent, create_agent_session
from apex_coding_agent.session import SessionManager

WINDOW = 200000
LONG = "please look at this carefully " * 12


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APEX_CODE_CODING_AGENT_DIR", str(tmp_path / "agent"))
    for name in ("APEX_CODE_CODING_AGENT_SESSION_DIR", "APEX_CODE_SESSION_ID", "PI_SESSION_ID", "APEX_CODE_MODEL"):
        monkeypatch.delenv(name, raising=False)


async def _session(tmp_path: Path, faux: FauxProvider) -> AgentSession:
    cwd = tmp_path / "work"
    cwd.mkdir()
    registry = ModelRegistry(load_catalog=False)
    registry.register_provider("faux", api="faux", base_url="http://localhost:0", models=faux.models)
    created = await create_agent_session(
        cwd=str(cwd),
        agent_dir=str(tmp_path / "agent"),
        session_manager=SessionManager.create(str(cwd), tmp_path / "sessions"),
        settings_manager=SettingsManager.in_memory({"compaction": {"keepRecentTokens": 50}}),
        model_runtime=ModelRuntime(None, AuthStorage.in_memory(), registry=registry),
        permission_gate=PermissionGate(cwd, flag_mode="bypassPermissions"),
    )
    return created.session


def _faux(*replies: str) -> FauxProvider:
    faux = FauxProvider(models=[{"id": "faux-1", "contextWindow": WINDOW}], token_size=(2, 4))
    faux.set_responses([faux_assistant_message(text) for text in replies])
    return faux


def _compaction_records(session: AgentSession) -> list[dict[str, Any]]:
    path = session.session_manager.session_file
    assert path is not None
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [r for r in map(json.loads, lines) if r.get("type") == "compaction"]


def _last_reply_tokens(session: AgentSession) -> int:
    last = next(m for m in reversed(session.messages) if isinstance(m, AssistantMessage))
    return context_tokens(last.usage)


async def test_manual_compaction_entry_on_disk(tmp_path: Path) -> None:
    session = await _session(tmp_path, _faux("a1", "a2", "Summary of both exchanges."))
    await session.prompt("one")
    await session.prompt(LONG)
    before = _last_reply_tokens(session)

    result = await session.compact()

    assert isinstance(result, CompactionResult)
    (record,) = _compaction_records(session)
    assert record["trigger"] == "manual"
    assert record["model"] == "faux/faux-1"
    assert record["tokensBefore"] == before > 0
    # After: exactly what the rebuilt context estimates to.
    assert record["tokensAfter"] == sum(estimate_tokens(m) for m in session.messages) == result.tokens_after
    assert record["tokensAfter"] < record["tokensBefore"]
    assert record["summary"].startswith("Summary of both exchanges.")


async def test_threshold_compaction_entry_on_disk(tmp_path: Path) -> None:
    session = await _session(tmp_path, _faux("a1", "a2", "Summary of the first exchange."))
    await session.prompt("one")
    # Compaction is due once the context passes the first reply's size by a few tokens: the next prompt crosses it.
    # The reserve may be at most a quarter of the window: the window is that threshold plus a third of it.
    threshold = _last_reply_tokens(session) + 10
    assert session.model is not None
    session.set_model(session.model.model_copy(update={"context_window": threshold + threshold // 3}))
    session.settings_manager.set("compaction.reserveTokens", threshold // 3)
    ends: list[SessionEvent] = []
    session.subscribe(lambda event: ends.append(event) if event.type == "compaction_end" else None)

    assert await session.prompt(LONG) == "completed"

    (end,) = ends
    reported = getattr(end, "result", None)  # the event carries the result's wire form
    assert isinstance(reported, dict)
    (record,) = _compaction_records(session)
    assert record["trigger"] == "threshold"
    assert record["model"] == "faux/faux-1"
    # Before: the size the second reply reported, which crossed the threshold.
    assert record["tokensBefore"] == reported["tokensBefore"] == _last_reply_tokens(session) > 0
    assert (
        record["tokensAfter"] == reported["estimatedTokensAfter"] == sum(estimate_tokens(m) for m in session.messages)
    )
    assert record["summary"].startswith("Summary of the first exchange.")
