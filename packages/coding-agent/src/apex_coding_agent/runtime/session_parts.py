"""The parts an `AgentSession` is built from (create.py assembles them)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from apex_agent.messages import AgentMessage
from apex_agent.tools import AgentTool
from apex_agent.types import AgentStopReason, RunBudget
from apex_ai.connection_pool import ConnectionPool
from apex_ai.retry import Sleep, abortable_sleep_ms
from apex_ai.types import Tool
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.extensions import events as ext
from apex_coding_agent.extensions.runner import ExtensionRunner
from apex_coding_agent.resources import ResourceLoader
from apex_coding_agent.runtime.model_selector import ScopedModel
from apex_coding_agent.session.session_manager import SessionManager


@dataclass
class SessionServices:
    """What a session works with: its file, settings, models, working directory and the optional parts."""

    session_manager: SessionManager
    settings_manager: SettingsManager
    model_runtime: ModelRuntime
    cwd: str
    agent_dir: str
    permission_gate: PermissionGate | None = None
    """Every tool call passes it; None allows every call."""
    resource_loader: ResourceLoader | None = None
    extension_runner: ExtensionRunner | None = None
    """Delivers extension events; None runs without extensions."""
    connection_pool: ConnectionPool | None = None
    project_trusted: bool = True


@dataclass
class PromptSetup:
    """How the session rebuilds its system prompt when the active tools change or `/reload` runs."""

    tool_registry: dict[str, AgentTool] | None = None
    """Every known tool by name (defaults to the agent's tools)."""
    system_prompt_builder: Callable[[Sequence[AgentTool]], str] | None = None
    system_prompt_options: ext.SystemPromptOptions | None = None
    prompt_sources_reloader: Callable[[], list[str]] | None = None


@dataclass
class RunOptions:
    """How runs go: the budget of each prompt, the models `cycle_model` moves through, the retry wait."""

    run_budget: RunBudget | None = None
    scoped_models: Sequence[ScopedModel] = field(default_factory=tuple)
    sleep: Sleep = abortable_sleep_ms


def _idle_event() -> asyncio.Event:
    event = asyncio.Event()
    event.set()
    return event


@dataclass
class RunState:
    """Where a session's runs stand (shared by the prompt runner and the agent event router)."""

    busy: bool = False
    """From an accepted prompt until it settled (retry waits included)."""
    aborted: bool = False
    """`abort()` was called during the current prompt."""
    disposed: bool = False
    last_stop_reason: AgentStopReason | None = None
    idle: asyncio.Event = field(default_factory=_idle_event)
    next_turn: list[AgentMessage] = field(default_factory=list)
    """Extension messages delivered `nextTurn`: they join the next prompt."""
    run_declared: tuple[str, list[Tool]] | None = None
    """The base prompt and tools the running agent run was started with (what its requests are sent with)."""


__all__ = ["PromptSetup", "RunOptions", "RunState", "SessionServices"]
