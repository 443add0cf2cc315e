"""Builds the real app over a real session runtime with the scripted faux provider (no terminal)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from apex_ai.models import ModelRegistry
from apex_ai.providers.faux import FauxProvider, FauxStep
from apex_coding_agent.core.auth_storage import AuthStorage
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate, PermissionMode
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.extensions.loader import InlineExtension
from apex_coding_agent.resources.themes import ThemeFlags
from apex_coding_agent.runtime import AgentSessionRuntime, create_agent_session
from apex_coding_agent.session import SessionManager
from apex_tui.app import InteractiveApp
from apex_tui.keybindings import load_keybindings

SIZE = (100, 30)


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class AppHarness:
    """A faux provider, a session runtime in tmp dirs, and the app around it."""

    def __init__(self, root: Path) -> None:
        self.cwd = root / "work"
        self.cwd.mkdir(exist_ok=True)
        self.agent_dir = root / "agent"
        self.agent_dir.mkdir(exist_ok=True)
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
        self.clock = FakeClock()
        self.app: InteractiveApp | None = None

    @staticmethod
    def empty_model_runtime() -> ModelRuntime:
        """No provider at all: what a user without keys and without models.json has."""
        return ModelRuntime(None, AuthStorage.in_memory(), registry=ModelRegistry(load_catalog=False))

    def script(self, *steps: FauxStep) -> None:
        self.faux.set_responses(steps)

    async def start(
        self,
        *,
        model: str | None = "faux-1",
        settings: dict[str, Any] | None = None,
        persisted: bool = False,
        permission_mode: PermissionMode = "bypassPermissions",
        model_runtime: ModelRuntime | None = None,
        extensions: Sequence[InlineExtension] = (),
        fullscreen: bool = False,
        theme_flags: ThemeFlags | None = None,
        settings_manager: SettingsManager | None = None,
    ) -> InteractiveApp:
        manager = (
            SessionManager.create(str(self.cwd), self.agent_dir / "sessions")
            if persisted
            else SessionManager.in_memory(str(self.cwd))
        )
        settings_manager = settings_manager or SettingsManager.in_memory(settings or {})
        result = await create_agent_session(
            cwd=str(self.cwd),
            agent_dir=str(self.agent_dir),
            model=self.faux.model(model) if model else None,
            session_manager=manager,
            settings_manager=settings_manager,
            model_runtime=model_runtime or (self.model_runtime if model else self.empty_model_runtime()),
            permission_gate=PermissionGate(self.cwd, flag_mode=permission_mode),
            extensions=extensions,
        )
        self.app = InteractiveApp(
            AgentSessionRuntime(result),
            keymap_loader=lambda: load_keybindings(self.agent_dir),
            cwd=str(self.cwd),
            agent_dir=self.agent_dir,
            clock=self.clock,
            version="0.0.test",
            fullscreen=fullscreen,
            theme_flags=theme_flags,
        )
        return self.app

    @property
    def running(self) -> InteractiveApp:
        assert self.app is not None
        return self.app

    def screen(self) -> list[str]:
        """The whole frame as text rows."""
        canvas = self.running.root.render(SIZE, focus=True)
        return [row.decode("utf-8") for row in canvas.text]

    def text(self) -> str:
        return "\n".join(self.screen())

    def press(self, *keys: str) -> None:
        for key in keys:
            self.screen()  # render first, as the main loop does: widgets learn their sizes
            self.running.root.keypress(SIZE, key)

    def type(self, text: str) -> None:
        self.press(*text)

    async def settle(self) -> None:
        """Wait until the session is idle and every app task finished."""
        app = self.running
        for _ in range(200):
            await asyncio.sleep(0)
            if not app.tasks and not app.session.is_streaming:
                break
        await app.session.wait_for_idle()
        if app.tasks:
            await asyncio.gather(*list(app.tasks), return_exceptions=True)

    async def until(self, text: str, *, limit: int = 2000) -> None:
        """Let the loop run until `text` is on screen."""
        for _ in range(limit):
            if text in self.text():
                return
            await asyncio.sleep(0.001)
        raise AssertionError(f"{text!r} never appeared:\n{self.text()}")

    async def until_true(self, check: Callable[[], bool], *, limit: int = 2000) -> None:
        """Let the loop run until `check()` holds."""
        for _ in range(limit):
            if check():
                return
            await asyncio.sleep(0.001)
        raise AssertionError(f"condition never held:\n{self.text()}")


def write_long_session(directory: Path, entries: int, *, code_every: int = 0) -> Path:
    """A session of `entries` messages in turn: `question N: why?`, a reply with a `bash` tool call (with a fenced
    code block every `code_every` replies when set), and its tool result. Returns the file, lock released."""
    from apex_ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage

    manager = SessionManager.create(str(directory), directory / "sessions")
    for index in range(entries):
        kind = index % 3
        if kind == 0:
            manager.append_message(UserMessage(content=f"question {index}: why?", timestamp=1))
        elif kind == 1:
            text = f"answer {index}: the **parser** keeps `state`."
            if code_every and index % code_every == 1:
                text += "\n\n```python\nprint('x')\n```"
            content: list[TextContent | ToolCall] = [
                TextContent(text=text),
                ToolCall(id=f"call_{index}", name="bash", arguments={"command": f"pytest -k t{index}"}),
            ]
            manager.append_message(
                AssistantMessage(
                    content=content, api="faux", provider="faux", model="faux-1", stop_reason="toolUse", timestamp=1
                )
            )
        else:
            result = [TextContent(text=f"{index} passed")]
            manager.append_message(
                ToolResultMessage(tool_call_id=f"call_{index - 1}", tool_name="bash", content=result, timestamp=1)
            )
    path = manager.session_file
    assert path is not None
    manager.close()  # releases the lock: the app opens the file next
    return path


async def open_app_on_file(
    root: Path,
    session_file: Path,
    *,
    settings: dict[str, Any] | None = None,
    defer: bool = False,
    quiet: bool = False,
    fullscreen: bool = False,
) -> InteractiveApp:
    """The real app over a real runtime (faux provider) opened on `session_file`; `defer` leaves the context's
    messages unprojected, as the app's own startup does."""
    faux = FauxProvider(models=[{"id": "faux-1", "contextWindow": 200000}])
    registry = ModelRegistry(load_catalog=False)
    registry.register_provider("faux", api="faux", base_url="http://localhost:0", models=faux.models)
    cwd = root / "work"
    cwd.mkdir(parents=True, exist_ok=True)
    agent_dir = root / "agent"
    agent_dir.mkdir(exist_ok=True)
    result = await create_agent_session(
        cwd=str(cwd),
        agent_dir=str(agent_dir),
        model=faux.model("faux-1"),
        session_manager=SessionManager.open(session_file),
        settings_manager=SettingsManager.in_memory(settings or {}),
        model_runtime=ModelRuntime(None, AuthStorage.in_memory(), registry=registry),
        permission_gate=PermissionGate(cwd, flag_mode="bypassPermissions"),
        defer_messages=defer,
    )
    return InteractiveApp(
        AgentSessionRuntime(result),
        keymap_loader=lambda: load_keybindings(agent_dir),
        cwd=str(cwd),
        agent_dir=agent_dir,
        version="0.0.test",
        quiet=quiet,
        fullscreen=fullscreen,
    )
