"""Shared helpers of the runtime tests: a harness that builds real sessions over tmp dirs and the faux provider."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from apex_ai.abort import AbortSignal
from apex_ai.models import ModelRegistry
from apex_ai.providers.faux import FauxProvider, FauxStep
from apex_ai.types import Model, ModelThinkingLevel
from apex_coding_agent.core.auth_storage import AuthStorage
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate, PermissionMode
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.runtime import AgentSession, SessionEvent, create_agent_session
from apex_coding_agent.session import SessionManager

OVERLOADED = '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'


def window_with_threshold(tokens: int) -> tuple[int, int]:
    """(window, reserveTokens) under which automatic compaction is due once the context exceeds `tokens`.

    The session caps the reserve at a quarter of the window, so the window is `tokens` plus a reserve of a
    third of `tokens` (exactly that quarter).
    """
    reserve = tokens // 3
    return tokens + reserve, reserve


def compact_above(session: AgentSession, tokens: int) -> None:
    """Switch `session` to a copy of its model whose window makes compaction due above `tokens`."""
    assert session.model is not None
    window, reserve = window_with_threshold(tokens)
    session.set_model(session.model.model_copy(update={"context_window": window}))
    session.settings_manager.set("compaction.reserveTokens", reserve)


def without_system(items: list[Any]) -> list[Any]:  # Any: compact event names or JSON lines
    """`items` without system-message events or entries, for comparisons with pi 0.73.1 captures: pi predates the
    seed's `SystemMessage`, which the coding agent records in the session (and emits) as an addition. Tests that
    drop them also check where the system message is."""

    def is_system(item: Any) -> bool:  # Any: as above
        if isinstance(item, str):
            return item.endswith("(system)")
        message = item.get("message") if isinstance(item, dict) else None
        return isinstance(message, dict) and message.get("role") == "system"

    return [item for item in items if not is_system(item)]


class FakeSleep:
    """An injectable retry sleep that records the delays and returns at once."""

    def __init__(self) -> None:
        self.delays: list[int] = []

    async def __call__(self, delay_ms: int, signal: AbortSignal | None) -> None:
        self.delays.append(delay_ms)


class Recorder:
    """A session listener that keeps every event."""

    def __init__(self) -> None:
        self.events: list[SessionEvent] = []

    def __call__(self, event: SessionEvent) -> None:
        self.events.append(event)

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]

    def compact(self) -> list[str]:
        """Event types with message roles; runs of message_update collapsed."""
        out: list[str] = []
        for event in self.events:
            if event.type == "message_update":
                if out[-1:] != ["message_update"]:
                    out.append("message_update")
                continue
            message = getattr(event, "message", None)
            if event.type in ("message_start", "message_end") and message is not None:
                out.append(f"{event.type}({message.role})")
            else:
                out.append(event.type)
        return out


class Harness:
    """Builds sessions with a faux provider, in-memory auth and a tmp cwd/agent dir."""

    def __init__(self, root: Path) -> None:
        self.cwd = root / "work"
        self.cwd.mkdir()
        self.agent_dir = root / "agent"
        self.sessions_dir = root / "sessions"
        self.faux = FauxProvider(
            models=[
                {"id": "faux-1", "contextWindow": 200000},
                {"id": "faux-think", "reasoning": True, "contextWindow": 200000},
            ],
            token_size=(2, 4),
        )
        registry = ModelRegistry(load_catalog=False)
        registry.register_provider("faux", api="faux", base_url="http://localhost:0", models=self.faux.models)
        self.model_runtime = ModelRuntime(None, AuthStorage.in_memory(), registry=registry)
        self.sleep = FakeSleep()

    def model(self, model_id: str = "faux-1") -> Model:
        return self.faux.model(model_id)

    def script(self, *steps: FauxStep) -> None:
        self.faux.set_responses(steps)

    def persisted_manager(self) -> SessionManager:
        return SessionManager.create(str(self.cwd), self.sessions_dir)

    async def session(
        self,
        *,
        mode: PermissionMode = "bypassPermissions",
        settings: dict[str, Any] | None = None,
        manager: SessionManager | None = None,
        settings_manager: SettingsManager | None = None,
        model: Model | None = None,
        thinking_level: ModelThinkingLevel | None = None,
        **kwargs: Any,
    ) -> AgentSession:
        result = await create_agent_session(
            cwd=str(self.cwd),
            agent_dir=str(self.agent_dir),
            model=model,
            thinking_level=thinking_level,
            session_manager=manager if manager is not None else SessionManager.in_memory(str(self.cwd)),
            settings_manager=settings_manager or SettingsManager.in_memory(settings or {}),
            model_runtime=self.model_runtime,
            permission_gate=PermissionGate(self.cwd, flag_mode=mode),
            sleep=self.sleep,
            **kwargs,
        )
        return result.session
