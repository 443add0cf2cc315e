"""The collaborators of one `AgentSession`, built and connected in one place.

`wire_parts` gives each collaborator the parts it needs and nothing more; what they read back from the session
(its complete agent, model, streaming state, scoped models) comes through the small `SessionHost` protocol, so
no collaborator module imports agent_session.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from apex_agent.agent import Agent
from apex_agent.types import RunBudget
from apex_ai.types import Model, SystemMessage
from apex_coding_agent.extensions import events as ext
from apex_coding_agent.runtime.agent_hooks import AgentHooks
from apex_coding_agent.runtime.compaction_runner import CompactionRunner, SummaryRequests
from apex_coding_agent.runtime.event_hub import SessionEventHub
from apex_coding_agent.runtime.message_queues import MessageQueues
from apex_coding_agent.runtime.model_selector import ModelSelector, ScopedModel
from apex_coding_agent.runtime.prompt_input import PromptInput
from apex_coding_agent.runtime.request_hooks import ProviderRequests
from apex_coding_agent.runtime.retry_runner import RetryRunner
from apex_coding_agent.runtime.session_parts import PromptSetup, RunOptions, SessionServices
from apex_coding_agent.runtime.stats_cache import SessionStatsCache
from apex_coding_agent.runtime.tool_set import ToolSet
from apex_coding_agent.runtime.transcript_recorder import TranscriptRecorder
from apex_coding_agent.runtime.tree_navigator import TreeNavigator
from apex_coding_agent.runtime.user_bash import UserBash


class SessionHost(Protocol):
    """What the collaborators read back from the session they serve (`AgentSession` is one)."""

    scoped_models: list[ScopedModel]
    run_budget: RunBudget | None

    @property
    def agent(self) -> Agent:
        """The agent holding the complete message list."""
        ...

    @property
    def model(self) -> Model | None: ...

    @property
    def is_streaming(self) -> bool: ...


@dataclass
class SessionParts:
    """The collaborators of one session (see agent_session.py's module docstring for what each does)."""

    services: SessionServices
    events: SessionEventHub
    input: PromptInput
    queues: MessageQueues
    recorder: TranscriptRecorder
    tools: ToolSet
    models: ModelSelector
    requests: ProviderRequests
    hooks: AgentHooks
    retry: RetryRunner
    compaction: CompactionRunner
    tree: TreeNavigator
    bash: UserBash
    stats: SessionStatsCache
    reload_context: Callable[[], None]
    """Agent messages from the active branch; per-branch automatic compaction state starts over."""


def wire_parts(
    agent: Agent, services: SessionServices, prompt: PromptSetup, run: RunOptions, host: SessionHost
) -> SessionParts:
    """Build the collaborators of a session over `agent` (`host.agent` hands over the complete message list)."""
    session_manager = services.session_manager
    settings_manager = services.settings_manager
    model_runtime = services.model_runtime
    runner = services.extension_runner

    def full_agent() -> Agent:
        return host.agent

    def model() -> Model | None:
        return host.model

    def is_streaming() -> bool:
        return host.is_streaming

    events = SessionEventHub()

    def extension_event_soon(event: ext.HandlerEvent) -> None:
        """Deliver a notification event from synchronous code (a task `wait_for_idle` awaits)."""
        if runner is not None and runner.has_handlers(event.type):
            events.spawn(runner.emit(event), event.type)

    recorder = TranscriptRecorder(full_agent, session_manager, events.emit)
    requests = ProviderRequests(settings_manager, model_runtime, runner, services.connection_pool)
    summaries = SummaryRequests(requests, model_runtime, settings_manager, events.emit, run.sleep)
    compaction = CompactionRunner(
        agent=full_agent,
        model=model,
        session_manager=session_manager,
        settings_manager=settings_manager,
        summaries=summaries,
        extension_runner=runner,
        emit=events.emit,
    )

    def reload_context() -> None:
        context = session_manager.build_session_context()
        host.agent.state.messages = [m for m in context.messages if not isinstance(m, SystemMessage)]
        recorder.system_record.invalidate(session_manager)
        compaction.reset_branch_state()

    return SessionParts(
        services=services,
        events=events,
        input=PromptInput(services.resource_loader, runner),
        queues=MessageQueues(events.emit, events.emit_soon),
        recorder=recorder,
        tools=ToolSet(
            agent=full_agent,
            base_system_prompt=agent.state.system_prompt,
            registry=dict(prompt.tool_registry or {t.name: t for t in agent.state.tools}),
            system_prompt_builder=prompt.system_prompt_builder,
            system_prompt_options=prompt.system_prompt_options or ext.SystemPromptOptions(cwd=services.cwd),
            prompt_sources_reloader=prompt.prompt_sources_reloader,
            resource_loader=services.resource_loader,
            extension_runner=runner,
            is_streaming=is_streaming,
        ),
        models=ModelSelector(
            agent=full_agent,
            session_manager=session_manager,
            model_runtime=model_runtime,
            scoped_models=lambda: host.scoped_models,
            emit_soon=events.emit_soon,
            extension_event_soon=extension_event_soon,
        ),
        requests=requests,
        hooks=AgentHooks(session_manager, runner, services.permission_gate),
        retry=RetryRunner(full_agent, settings_manager, events.emit, run.sleep),
        compaction=compaction,
        tree=TreeNavigator(
            model=model,
            session_manager=session_manager,
            settings_manager=settings_manager,
            summaries=summaries,
            extension_runner=runner,
            lock=compaction.lock,
            reload_context=reload_context,
        ),
        bash=UserBash(
            cwd=services.cwd,
            agent_dir=services.agent_dir,
            settings_manager=settings_manager,
            extension_runner=runner,
            emit_soon=events.emit_soon,
            is_streaming=is_streaming,
            record=recorder.record,
        ),
        stats=SessionStatsCache(session_manager),
        reload_context=reload_context,
    )


__all__ = ["SessionHost", "SessionParts", "wire_parts"]
