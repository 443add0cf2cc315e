"""Shared fixtures: no real network, every test in its own directory, a fresh faux provider."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from apex_agent.events import AgentEvent
from apex_ai.abort import AbortSignal
from apex_ai.providers.faux import FauxProvider
from apex_ai.testing import block_network
from apex_ai.testing.hypothesis_profiles import register_profiles
from apex_ai.types import Model

register_profiles()  # property tests try the same examples on every run unless a profile says otherwise


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)
    with block_network():
        yield


class Recorder:
    """A listener that keeps every event it hears."""

    def __init__(self) -> None:
        self.events: list[AgentEvent] = []

    def __call__(self, event: AgentEvent, signal: AbortSignal | None = None) -> None:
        self.events.append(event)

    @property
    def types(self) -> list[str]:
        return [event.type for event in self.events]

    def of(self, kind: str) -> list[Any]:
        return [event for event in self.events if event.type == kind]

    def compact(self) -> list[str]:
        """Event types with the role of message events and without the message_update noise."""
        out: list[str] = []
        for event in self.events:
            if event.type == "message_update":
                if not out or out[-1] != "message_update":
                    out.append("message_update")
                continue
            message = getattr(event, "message", None)
            if event.type.startswith("message_") and message is not None:
                out.append(f"{event.type}({message.role})")
            else:
                out.append(event.type)
        return out


@pytest.fixture
def faux() -> FauxProvider:
    return FauxProvider(token_size=(1, 2))


@pytest.fixture
def model(faux: FauxProvider) -> Model:
    return faux.model()


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()
