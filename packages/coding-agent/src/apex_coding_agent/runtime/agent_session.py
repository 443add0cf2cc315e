"""`AgentSession`: one conversation of the coding agent, a coordinator over named collaborators.

It owns an `Agent` built with `system_messages=False` and ties it to the session file, settings, models,
the permission gate and the tools. Each concern lives in a module of its own:

* transcript_recorder.py: every finished message (`message_end`) becomes a session entry (a pending assistant
  never does); at each turn boundary the session's system messages are brought up to date with the prompt and
  tools the run's requests carry (runtime/system_record.py, docs/sessions.md);
* retry_runner.py and run_loop.py: transient provider errors are retried, continuing the run without a new user
  message (the failed reply leaves the agent's transcript but stays in the file); automatic compactions follow;
* compaction_runner.py: manual, threshold and overflow compactions; tree_navigator.py: `navigate_tree`;
* agent_hooks.py and request_hooks.py: the agent's hooks (every tool call passes the permission gate, the
  context event, the provider requests);
* prompt_input.py: the input pipeline; message_queues.py: the displayed steering/follow-up queues;
* model_selector.py: model and thinking changes append `model_change` / `thinking_level_change` entries and
  never write settings; tool_set.py: the active tools and the system prompt built from them;
* user_bash.py: user shell commands; event_hub.py: subscribers get `SessionEvent`s (`agent_end` with
  `willRetry`, `agent_settled`, `queue_update`, ...).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from apex_agent.agent import Agent, declarations
from apex_agent.events import (
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    TurnStartEvent,
)
from apex_agent.messages import AgentMessage
from apex_agent.tools import AgentTool
from apex_agent.types import AgentStopReason, BudgetUsage
from apex_ai.abort import AbortSignal
from apex_ai.connection_pool import ConnectionPool
from apex_ai.retry import RetryPolicy
from apex_ai.types import (
    AssistantMessage,
    ImageContent,
    Model,
    ModelThinkingLevel,
    SystemMessage,
    TextContent,
    Tool,
    UserMessage,
    now_ms,
)
from apex_coding_agent.checkpoints.manager import Checkpoints
from apex_coding_agent.compaction.tokens import estimate_context_tokens
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.extensions import events as ext
from apex_coding_agent.extensions.bindings import DeliverAs
from apex_coding_agent.runtime.agent_hooks import AgentHooks
from apex_coding_agent.runtime.compaction_policy import CompactionPlan
from apex_coding_agent.runtime.compaction_runner import CompactionRunner, SummaryRequests, compacted_without_reply
from apex_coding_agent.runtime.event_hub import SessionEventHub, SessionListener
from apex_coding_agent.runtime.events import (
    AgentSettledEvent,
    EntryAppendedEvent,
    SessionAgentEndEvent,
    SessionEvent,
    SessionInfoChangedEvent,
)
from apex_coding_agent.runtime.extension_host import TurnCounter, advance_turns, to_extension_event
from apex_coding_agent.runtime.message_queues import MessageQueues
from apex_coding_agent.runtime.model_selector import ModelCycleResult, ModelSelector, ScopedModel
from apex_coding_agent.runtime.prompt_input import PromptInput, PromptSource, StreamingBehavior, custom_message
from apex_coding_agent.runtime.request_hooks import ProviderRequests
from apex_coding_agent.runtime.retry_runner import RetryRunner
from apex_coding_agent.runtime.run_loop import continue_run
from apex_coding_agent.runtime.session_errors import (
    COMPACTING_TEXT,
    NAVIGATE_WHILE_COMPACTING,
    NAVIGATE_WHILE_STREAMING,
    NO_MODEL_TEXT,
    STREAMING_WITHOUT_BEHAVIOR,
    no_api_key_text,
)
from apex_coding_agent.runtime.session_parts import PromptSetup, RunOptions, SessionServices
from apex_coding_agent.runtime.stats_cache import SessionStatsCache
from apex_coding_agent.runtime.tool_set import ToolSet, resource_commands
from apex_coding_agent.runtime.transcript_recorder import TranscriptRecorder
from apex_coding_agent.runtime.tree_navigator import NavigateTreeResult, TreeNavigator
from apex_coding_agent.runtime.user_bash import UserBash
from apex_coding_agent.session.context import LazyContextMessages
from apex_coding_agent.session.entries import CustomEntry, MessageEntry
from apex_coding_agent.session.session_manager import first_user_text
from apex_coding_agent.session.stats import ContextUsage, SessionStats
from apex_coding_agent.tools import SessionEnvironment

if TYPE_CHECKING:
    from apex_coding_agent.compaction.compact import CompactionResult
    from apex_coding_agent.runtime.bash_executor import BashResult


@dataclass(frozen=True)
class ForkMessage:
    """A user message one can fork from (`get_fork_messages`): its entry id and text."""

    entry_id: str
    text: str


@dataclass(frozen=True)
class ClearedQueues:
    steering: list[str]
    follow_up: list[str]


class AgentSession:
    """See the module docstring. Build one with `create_agent_session` (create.py)."""

    def __init__(
        self,
        agent: Agent,
        services: SessionServices,
        *,
        prompt: PromptSetup | None = None,
        run: RunOptions | None = None,
        deferred_messages: LazyContextMessages | None = None,
    ) -> None:
        prompt = prompt or PromptSetup()
        run = run or RunOptions()
        self._agent = agent
        self._deferred_messages = deferred_messages
        """The context messages the agent is still to receive (see `agent`); None once it has them."""
        self.session_manager = session_manager = services.session_manager
        self.settings_manager = settings_manager = services.settings_manager
        self.model_runtime = services.model_runtime
        self.cwd = services.cwd
        self.agent_dir = services.agent_dir
        self.extension_runner = runner = services.extension_runner
        """Delivers extension events; None runs without extensions."""
        self.resource_loader = services.resource_loader
        self.project_trusted = services.project_trusted
        self.run_budget = run.run_budget
        self.scoped_models = list(run.scoped_models)
        self.last_stop_reason: AgentStopReason | None = None
        self._turns = TurnCounter()
        self._next_turn: list[AgentMessage] = []
        self._run_declared: tuple[str, list[Tool]] | None = None
        """The base prompt and tools the running agent run was started with (what its requests are sent with)."""
        self._stats = SessionStatsCache(session_manager)
        self._busy = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._run_aborted = False
        self._disposed = False

        # The collaborators get the parts they need; `full_agent` hands over the complete message list.
        def full_agent() -> Agent:
            return self.agent

        def model() -> Model | None:
            return self.model

        def is_streaming() -> bool:
            return self.is_streaming

        self._events = events = SessionEventHub()
        self._input = PromptInput(services.resource_loader, runner)
        self._queues = MessageQueues(events.emit, events.emit_soon)
        self._recorder = TranscriptRecorder(full_agent, session_manager, events.emit)
        self._tools = ToolSet(
            agent=full_agent,
            base_system_prompt=agent.state.system_prompt,
            registry=dict(prompt.tool_registry or {t.name: t for t in agent.state.tools}),
            system_prompt_builder=prompt.system_prompt_builder,
            system_prompt_options=prompt.system_prompt_options or ext.SystemPromptOptions(cwd=services.cwd),
            prompt_sources_reloader=prompt.prompt_sources_reloader,
            resource_loader=services.resource_loader,
            extension_runner=runner,
            is_streaming=is_streaming,
        )
        self._models = ModelSelector(
            agent=full_agent,
            session_manager=session_manager,
            model_runtime=self.model_runtime,
            scoped_models=lambda: self.scoped_models,
            emit_soon=events.emit_soon,
            extension_event_soon=self._extension_event_soon,
        )
        self._requests = ProviderRequests(settings_manager, self.model_runtime, runner, services.connection_pool)
        self._hooks = AgentHooks(session_manager, runner, services.permission_gate)
        self._retry = RetryRunner(full_agent, settings_manager, events.emit, run.sleep)
        summaries = SummaryRequests(self._requests, self.model_runtime, settings_manager, events.emit, run.sleep)
        self._compaction = CompactionRunner(
            agent=full_agent,
            model=model,
            session_manager=session_manager,
            settings_manager=settings_manager,
            summaries=summaries,
            extension_runner=runner,
            emit=events.emit,
        )
        self._tree = TreeNavigator(
            model=model,
            session_manager=session_manager,
            settings_manager=settings_manager,
            summaries=summaries,
            extension_runner=runner,
            lock=self._compaction.lock,
            reload_context=self._reload_context,
        )
        self._bash = UserBash(
            cwd=self.cwd,
            agent_dir=self.agent_dir,
            settings_manager=settings_manager,
            extension_runner=runner,
            emit_soon=events.emit_soon,
            is_streaming=is_streaming,
            record=self._recorder.record,
        )
        self._unsubscribe_agent = self._hooks.install(agent, self._requests, self.model_runtime, self._on_agent_event)
        self.checkpoints = self._hooks.tool_observer = Checkpoints(self)
        """File checkpoints of the user turns: `rewind`, `redo` (checkpoints/, docs/checkpoints.md)."""

    @property
    def connection_pool(self) -> ConnectionPool:
        """Keep-alive connections of this session's model requests (a runtime hands one pool from session to
        session); `close_connections` ends them."""
        return self._requests.connection_pool

    @connection_pool.setter
    def connection_pool(self, pool: ConnectionPool) -> None:
        self._requests.connection_pool = pool

    @property
    def permission_gate(self) -> PermissionGate | None:
        """Every tool call passes it (None: every call is allowed)."""
        return self._hooks.permission_gate

    @permission_gate.setter
    def permission_gate(self, gate: PermissionGate | None) -> None:
        self._hooks.permission_gate = gate

    @property
    def base_system_prompt(self) -> str:
        """The prompt without a `before_agent_start` replacement (restored after each run)."""
        return self._tools.base_system_prompt

    @property
    def system_prompt_options(self) -> ext.SystemPromptOptions:
        """What the system prompt was built from, for `before_agent_start` handlers."""
        return self._tools.system_prompt_options

    # ----------------------------------------------------------------- state

    @property
    def session_id(self) -> str:
        return self.session_manager.session_id

    @property
    def session_file(self) -> str | None:
        file = self.session_manager.session_file
        return str(file) if file is not None else None

    @property
    def session_name(self) -> str | None:
        return self.session_manager.get_session_name()

    @property
    def agent(self) -> Agent:
        """The agent, always holding the complete message list of the context.

        A session built with `deferred_messages` gives them to the agent on the first access (projecting what is
        left), so no reader of `agent.state.messages` (runs, compaction, stats, fork, export, RPC) can see a
        partial list. Only the agent's model, thinking level and run state are read without it.
        """
        if self._deferred_messages is not None:
            self._install_messages(self._deferred_messages)
        return self._agent

    def _install_messages(self, deferred: LazyContextMessages) -> None:
        # The agent holds no message before this (every use of it goes through `agent`): the list is the context.
        self._agent.state.messages = deferred.materialize()
        self._deferred_messages = None

    @property
    def agent_tools(self) -> list[AgentTool]:
        """The agent's active tools (read without `agent`: a session being replaced need not finish its messages)."""
        return list(self._agent.state.tools)

    @property
    def deferred_messages(self) -> LazyContextMessages | None:
        """The context messages not yet handed to the agent (a host shows their newest ones first), or None."""
        return self._deferred_messages

    def load_messages_step(self, records: int) -> bool:
        """Project up to `records` more records of the deferred context (newest first); once every one is projected
        the agent gets the list. True when the agent has the complete list (at once when nothing is deferred)."""
        deferred = self._deferred_messages
        if deferred is None:
            return True
        if deferred.step(records):
            self._install_messages(deferred)
            return True
        return False

    @property
    def model(self) -> Model | None:
        return self._agent.state.model

    @property
    def thinking_level(self) -> ModelThinkingLevel:
        return self._agent.state.thinking_level

    @property
    def messages(self) -> list[AgentMessage]:
        return list(self.agent.state.messages)

    @property
    def is_streaming(self) -> bool:
        """True from an accepted prompt until it settled (retry waits included)."""
        return self._busy or self._agent.state.is_streaming

    @property
    def is_compacting(self) -> bool:
        return self._compaction.is_compacting

    @property
    def is_retrying(self) -> bool:
        return self._retry.attempt > 0

    @property
    def steering_messages(self) -> list[str]:
        return list(self._queues.steering)

    @property
    def follow_up_messages(self) -> list[str]:
        return list(self._queues.follow_up)

    def session_environment(self) -> SessionEnvironment:
        """What bash tool commands see as APEX_CODE_SESSION_ID/_FILE/PROVIDER/MODEL/REASONING_LEVEL."""
        model = self.model
        return SessionEnvironment(
            session_id=self.session_id,
            session_file=self.session_file,
            provider=model.provider if model is not None else None,
            model=model.id if model is not None else None,
            reasoning_level=self.thinking_level,
        )

    # ----------------------------------------------------------------- listeners

    def subscribe(self, listener: SessionListener) -> Callable[[], None]:
        """Call `listener(event)` for every session event (awaited when async); returns an unsubscribe function."""
        return self._events.subscribe(listener)

    async def _emit(self, event: SessionEvent) -> None:
        await self._events.emit(event)

    def _emit_soon(self, event: SessionEvent) -> None:
        """Emit from synchronous code: sync listeners run now, async ones in a task `wait_for_idle` awaits."""
        self._events.emit_soon(event)

    # ----------------------------------------------------------------- agent events

    async def _on_agent_event(self, event: AgentEvent, signal: AbortSignal | None) -> None:
        if isinstance(event, AgentStartEvent):
            # The run copied the agent's tools as it started, and a prompt rebuilt mid-run waits for the next run:
            # the record follows what this run's requests are sent with (taken before any listener runs).
            self._run_declared = (self.base_system_prompt, declarations(self._agent.state.tools))
        runner = self.extension_runner
        if runner is not None:
            if isinstance(event, MessageEndEvent):
                if runner.has_handlers("message_end"):
                    event = await self._recorder.replace_message_end(event, runner)
            elif runner.has_handlers(event.type):  # extension events share the agent events' type names
                forwarded = to_extension_event(event, self._turns)
                if forwarded is not None:
                    await runner.emit(forwarded)
            else:
                # Nobody listens: skip building the pydantic event (it showed up in start-up profiles).
                advance_turns(event, self._turns)
        if isinstance(event, MessageStartEvent):
            if isinstance(event.message, UserMessage):
                self._compaction.new_user_message()
            await self._queues.message_started(event.message)
            await self._emit(event)
        elif isinstance(event, MessageEndEvent):
            await self._recorder.persist_in_run(event.message, self._stop_unsaved_run)
            await self._emit(event)
            message = event.message
            if isinstance(message, AssistantMessage) and message.stop_reason not in ("error", "length"):
                self._compaction.reply_ok()
            if (
                self._retry.attempt > 0
                and isinstance(message, AssistantMessage)
                and message.stop_reason not in ("error", "aborted")
            ):
                await self._retry.succeeded()
        elif isinstance(event, AgentEndEvent):
            await self._on_agent_end(event, signal)
        else:
            await self._emit(event)
            if isinstance(event, TurnStartEvent):
                prompt, tools = self._run_declared or (self.base_system_prompt, declarations(self._agent.state.tools))
                await self._recorder.record_system(prompt, tools)

    async def _on_agent_end(self, event: AgentEndEvent, signal: AbortSignal | None) -> None:
        if self._recorder.write_error is not None:
            event = event.model_copy(update={"stop_reason": "error"})  # stopped because the session is not saved
        failed = self._retry.retryable_failure(event, signal)
        self._retry.failed = failed
        plan: CompactionPlan | None = None
        if failed is None:
            self.last_stop_reason = event.stop_reason
            if signal is None or not signal.aborted:
                plan = self._compaction.plan_after_run(event.messages)
        self._compaction.pending_plan = plan
        will_retry = failed is not None or (plan is not None and plan.will_retry)
        session_event = SessionAgentEndEvent(
            messages=event.messages, stop_reason=event.stop_reason, budget=event.budget, will_retry=will_retry
        )
        await self._emit(session_event)
        if failed is None and self._retry.attempt > 0:
            await self._retry.gave_up(event)

    def retry_policy(self) -> RetryPolicy:
        return self._retry.policy()

    def _stop_unsaved_run(self) -> None:
        self._agent.abort()  # drops the agent's queues: keep the displayed queues in step
        self._queues.clear()

    # ----------------------------------------------------------------- prompting

    def _check_ready(self) -> Model:
        if self._compaction.is_compacting:
            raise RuntimeError(COMPACTING_TEXT)
        model = self.model
        if model is None:
            raise RuntimeError(NO_MODEL_TEXT)
        if not self.model_runtime.is_available(model):
            raise RuntimeError(no_api_key_text(model.provider))
        return model

    async def prompt(
        self,
        text: str,
        images: Sequence[ImageContent] | None = None,
        *,
        streaming_behavior: StreamingBehavior | None = None,
        source: PromptSource = "interactive",
        expand_prompt_templates: bool = True,
        preflight_result: Callable[[bool], None] | None = None,
    ) -> AgentStopReason | None:
        """Send a user message and return once the run settled (retries included) with its stop reason.

        While streaming, `streaming_behavior` queues the text instead (returns None); without it this raises.
        Also raises without a model, without auth, or while compacting. `preflight_result` is called once,
        with True when the message was accepted. With `expand_prompt_templates`, `/skill:` and prompt template
        input is expanded first (`expand_input`).

        Extensions: a `/name` naming an extension command runs that command at
        once (even while streaming) and returns None; then the `input` event may transform the text or handle it
        (returns None); before the run, `before_agent_start` may add custom messages and replace the system
        prompt for this run.
        """
        self._check_alive()

        def preflight(ok: bool) -> None:
            if preflight_result is not None:
                preflight_result(ok)

        accepted = await self._input.before_checks(text, images, source, streaming_behavior)
        if accepted is None:
            preflight(True)
            return None
        text, images = accepted

        if self._compaction.is_compacting and streaming_behavior is None:
            preflight(False)
            raise RuntimeError(COMPACTING_TEXT)
        if self.is_streaming:
            if streaming_behavior is None:
                preflight(False)
                raise RuntimeError(STREAMING_WITHOUT_BEHAVIOR)
            if streaming_behavior == "steer":
                await self._queue_steer(text, images, expand_prompt_templates)
            else:
                await self._queue_follow_up(text, images, expand_prompt_templates)
            preflight(True)
            return None
        try:
            self._check_ready()
        except RuntimeError:
            preflight(False)
            raise
        if expand_prompt_templates:
            text = self.expand_input(text)
        content: list[TextContent | ImageContent] = [TextContent(text=text), *(images or [])]
        message = UserMessage(content=content, timestamp=now_ms())
        self._begin()
        preflight(True)
        try:
            self._bash.flush_pending()
            await self._compaction.compact_before_prompt()
            if self._abort_requested():
                self.last_stop_reason = "aborted"
                await self._settled()
                return self.last_stop_reason
            batch: list[AgentMessage] = [message, *self._take_next_turn()]
            added, run_prompt = await self._input.before_agent_start(
                text, images, self.base_system_prompt, self.system_prompt_options
            )
            batch.extend(added)
            if run_prompt is not None:
                self.agent.state.system_prompt = run_prompt
            return await self._run(lambda: self.agent.prompt(batch))
        finally:
            self.agent.state.system_prompt = self.base_system_prompt
            self._end()

    def _take_next_turn(self) -> list[AgentMessage]:
        pending, self._next_turn = self._next_turn, []
        return pending

    async def continue_(self) -> AgentStopReason | None:
        """Continue from the current transcript (e.g. after an error or with queued messages)."""
        self._check_alive()
        if self.is_streaming:
            raise RuntimeError(STREAMING_WITHOUT_BEHAVIOR)
        self._check_ready()
        self._begin()
        try:
            return await self._run(self.agent.continue_)
        finally:
            self._end()

    def _begin(self) -> None:
        self._busy = True
        self._run_aborted = False
        self._recorder.write_error = None
        self._idle.clear()
        self.agent.run_budget = self.run_budget
        self.agent.budget_usage = BudgetUsage()  # one budget per user prompt; continuations share it

    def _abort_requested(self) -> bool:
        """`abort()` was called during the current prompt (a method: the flag changes across awaits)."""
        return self._run_aborted

    def _end(self) -> None:
        self._busy = False
        self._idle.set()

    async def _run(self, start: Callable[[], Awaitable[AgentStopReason]]) -> AgentStopReason | None:
        self.last_stop_reason = None
        self._compaction.pending_plan = None
        await start()
        await continue_run(
            lambda: self.agent,
            self._retry,
            self._compaction,
            disposed=lambda: self._disposed,
            abort_requested=self._abort_requested,
            on_retry_cancelled=self._retry_cancelled,
        )
        await self._settled()
        return self.last_stop_reason

    async def _settled(self) -> None:
        runner = self.extension_runner
        if runner is not None and runner.has_handlers("agent_settled"):
            await runner.emit(ext.AgentSettledEvent())
        await self._emit(AgentSettledEvent())

    def _retry_cancelled(self) -> None:
        self.last_stop_reason = "aborted"

    def abort_retry(self) -> None:
        """Cancel a pending automatic retry (its wait ends at once)."""
        self._retry.abort()

    async def abort(self) -> None:
        """Stop the current run, any pending retry and an automatic compaction of the run; queued messages are
        dropped. Do not await inside a listener."""
        self.abort_retry()
        if self._busy:
            self._run_aborted = True
            if self._compaction.auto_running:
                self.abort_compaction()
        self._agent.abort()  # not `agent`: stopping a run needs no message list (a run already has it)
        self._queues.clear()
        await self.wait_for_idle()

    async def wait_for_idle(self) -> None:
        await self._idle.wait()
        await self._agent.wait_for_idle()  # not `agent`: an idle agent needs no message list
        await self._events.drain()

    # ----------------------------------------------------------------- queues

    async def steer(self, text: str, images: Sequence[ImageContent] | None = None) -> None:
        """Queue a message to be injected after the current turn (`/skill:` and templates expanded)."""
        await self._queue_steer(text, images, True)

    async def follow_up(self, text: str, images: Sequence[ImageContent] | None = None) -> None:
        """Queue a message for when the agent would otherwise stop (`/skill:` and templates expanded)."""
        await self._queue_follow_up(text, images, True)

    async def _queue_steer(self, text: str, images: Sequence[ImageContent] | None, expand: bool) -> None:
        await self._queue("steer", text, images, expand)

    async def _queue_follow_up(self, text: str, images: Sequence[ImageContent] | None, expand: bool) -> None:
        await self._queue("followUp", text, images, expand)

    async def _queue(
        self, behavior: StreamingBehavior, text: str, images: Sequence[ImageContent] | None, expand: bool
    ) -> None:
        self._check_alive()
        self._input.reject_command(text)
        if expand:
            text = self.expand_input(text)
        message = self._queued_message(text, images)
        if behavior == "steer":
            self.agent.steer(message)
            await self._queues.added(self._queues.steering, text)
        else:
            self.agent.follow_up(message)
            await self._queues.added(self._queues.follow_up, text)

    # ----------------------------------------------------------------- resources

    def expand_input(self, text: str) -> str:
        """Steps 3-4 of the input pipeline: `/skill:<name>`, then prompt templates.

        Without a resource loader the text is returned unchanged. A skill file that cannot be read is recorded in
        `skill_errors` and the text passes through.
        """
        return self._input.expand(text)

    @property
    def skill_errors(self) -> list[str]:
        """Problems met while expanding `/skill:` input (the text then went on unexpanded)."""
        return self._input.skill_errors

    def get_commands(self) -> list[dict[str, object]]:
        """Commands for RPC `get_commands`: extension commands (invocation names), prompt templates, then
        `skill:<slug>` (when skill commands are on), each `{name, description?, source, sourceInfo}`."""
        runner = self.extension_runner
        extension_commands: list[dict[str, object]] = list(runner.get_command_infos()) if runner is not None else []
        return [*extension_commands, *self.get_resource_commands()]

    def get_resource_commands(self) -> list[dict[str, object]]:
        """Prompt templates then skills, as in `get_commands`."""
        return resource_commands(self.resource_loader)

    def clear_queue(self) -> ClearedQueues:
        """Drop both queues and return their display strings."""
        cleared = ClearedQueues(list(self._queues.steering), list(self._queues.follow_up))
        self.agent.clear_all_queues()
        self._queues.clear()
        return cleared

    @staticmethod
    def _queued_message(text: str, images: Sequence[ImageContent] | None) -> UserMessage:
        content: list[TextContent | ImageContent] = [TextContent(text=text), *(images or [])]
        return UserMessage(content=content, timestamp=now_ms())

    # ----------------------------------------------------------------- model and thinking

    def get_available_thinking_levels(self) -> list[ModelThinkingLevel]:
        return self._models.available_thinking_levels(self.model)

    def set_thinking_level(self, level: ModelThinkingLevel) -> ModelThinkingLevel:
        """Set the level (clamped to the model); on a change append an entry and emit `thinking_level_changed`."""
        return self._models.set_thinking_level(level)

    def cycle_thinking_level(self) -> ModelThinkingLevel | None:
        """The next available level (wrapping); None when the model has no reasoning."""
        return self._models.cycle_thinking_level(self.model, self.thinking_level)

    def set_model(self, model: Model, thinking_level: ModelThinkingLevel | None = None) -> None:
        """Switch models for this session only (never written to settings); the thinking level is re-clamped."""
        self._models.select(model, thinking_level, "set")

    def cycle_model(self, direction: Literal["forward", "backward"] = "forward") -> ModelCycleResult | None:
        """Move to the next scoped model (or available model when none are scoped); None if there is no other."""
        return self._models.cycle_model(direction)

    # ----------------------------------------------------------------- user shell commands

    async def execute_bash(
        self,
        command: str,
        exclude_from_context: bool = False,
        *,
        id: str | None = None,
        on_chunk: Callable[[str], None] | None = None,
    ) -> BashResult:
        """Run a user command (`!cmd`; `!!cmd` = `exclude_from_context`), stream `bash_execution_update`
        events, and record a `bashExecution` message (joining the context now, or at the next prompt when a
        run is in progress)."""
        self._check_alive()
        return await self._bash.execute(command, exclude_from_context, id, on_chunk)

    def abort_bash(self) -> None:
        self._bash.abort()

    @property
    def is_bash_running(self) -> bool:
        return self._bash.is_running

    # ----------------------------------------------------------------- session data

    def set_session_name(self, name: str) -> None:
        """Append a `session_info` entry and emit `session_info_changed` (an empty name clears it)."""
        self.session_manager.append_session_info(name)
        self._emit_soon(SessionInfoChangedEvent(name=self.session_name or None))

    def append_entry(self, custom_type: str, data: Any = None) -> str:  # data: extension JSON value
        """Append a `custom` entry (an extension's own state) and emit `entry_appended` with it."""
        entry_id = self.session_manager.append_custom_entry(custom_type, data)
        entry = self.session_manager.get_entry(entry_id)
        if isinstance(entry, CustomEntry):
            self._emit_soon(EntryAppendedEvent(entry=entry))
        return entry_id

    def get_session_stats(self) -> SessionStats:
        """Stats of every entry (counted incrementally: only entries appended since the last call are read)."""
        stats = self._stats.stats()
        model = self.model
        if model is not None and model.context_window:
            messages = self.agent.state.messages
            tokens: int | None = estimate_context_tokens(messages).tokens
            if compacted_without_reply(self.session_manager.get_branch_view()):
                tokens = None  # unknown until the first reply after a compaction reports usage
            percent = tokens / model.context_window * 100 if tokens is not None else None
            stats.context_usage = ContextUsage(tokens=tokens, context_window=model.context_window, percent=percent)
        return stats

    def get_last_assistant_text(self) -> str | None:
        """Text of the last assistant reply (an aborted empty one is skipped), or None."""
        for message in reversed(self.agent.state.messages):
            if not isinstance(message, AssistantMessage):
                continue
            if message.stop_reason == "aborted" and not message.content:
                continue
            text = "".join(block.text for block in message.content if isinstance(block, TextContent)).strip()
            return text or None
        return None

    def get_user_messages_for_forking(self) -> list[ForkMessage]:
        """Every user message entry of the session, in file order."""
        out: list[ForkMessage] = []
        for entry in self.session_manager.get_entries():
            if isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage):
                text = first_user_text(entry.message)
                if text:
                    out.append(ForkMessage(entry.id, text))
        return out

    # ----------------------------------------------------------------- compaction

    @property
    def auto_compaction_enabled(self) -> bool:
        return self._compaction.enabled

    def set_auto_compaction(self, enabled: bool) -> None:
        """Turn automatic compaction on or off (writes `compaction.enabled` to the global settings)."""
        self._compaction.set_enabled(enabled)

    set_auto_compaction_enabled = set_auto_compaction
    """SDK spelling of `set_auto_compaction`."""

    async def compact(self, custom_instructions: str | None = None) -> CompactionResult:
        """Manual compaction of the active branch. Emits `compaction_start`/`compaction_end{reason:"manual"}`;
        raises RuntimeError when nothing was compacted (`Already compacted`, `Nothing to compact ...`, failures).

        A running prompt is aborted first, except while an automatic compaction runs: then this waits for it
        and, when it succeeded, returns its result without touching the run (an overflow recovery keeps its
        retry, so no turn is lost). Manual and automatic compactions never overlap.
        """
        self._check_alive()
        if self.model is None:
            raise RuntimeError(NO_MODEL_TEXT)

        async def stop_run() -> None:
            if self.is_streaming:
                await self.abort()

        return await self._compaction.compact_manual(custom_instructions, stop_run)

    def abort_compaction(self) -> None:
        """Cancel the running manual or automatic compaction (nothing is dropped)."""
        self._compaction.abort()

    # ----------------------------------------------------------------- tree navigation and export

    async def navigate_tree(
        self,
        target_id: str,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> NavigateTreeResult:
        """Move within the session tree in place.

        A user or custom message target moves the leaf to its parent and returns its text as `editor_text`; any
        other entry becomes the leaf. With `summarize`, the abandoned branch is summarized into a `branch_summary`
        entry at the new position (cancelled by `abort_branch_summary`: `{cancelled, aborted}`, nothing changed).
        `label` goes on the summary entry, else on the target. Raises while streaming or compacting, for an
        unknown target, and when the summary request fails.
        """
        self._check_alive()
        if self.is_streaming:
            raise RuntimeError(NAVIGATE_WHILE_STREAMING)
        if self._compaction.is_compacting or self._tree.summarizing:
            raise RuntimeError(NAVIGATE_WHILE_COMPACTING)
        return await self._tree.navigate(target_id, summarize, custom_instructions, replace_instructions, label)

    def abort_branch_summary(self) -> None:
        """Cancel the branch summary of a running `navigate_tree` (the navigation then reports `aborted`)."""
        self._tree.abort()

    def _reload_context(self) -> None:
        """Agent messages from the active branch; per-branch automatic compaction state starts over."""
        context = self.session_manager.build_session_context()
        self.agent.state.messages = [m for m in context.messages if not isinstance(m, SystemMessage)]
        self._recorder.system_record.invalidate(self.session_manager)
        self._compaction.reset_branch_state()

    def export_to_html(self, output_path: str | None = None) -> str:
        """Write the active branch as a self-contained HTML file (relative paths from the session cwd)."""
        # Imported here: the HTML renderer is not needed by a run that never exports.
        from apex_coding_agent.export import export_session_html

        return str(export_session_html(self.session_manager, output_path, self.cwd))

    # ----------------------------------------------------------------- extensions (SessionBinding support)

    def spawn(self, work: Coroutine[Any, Any, Any], what: str) -> None:  # Any: the result is dropped
        """Run extension-triggered async work in the background; `wait_for_idle` waits for it."""
        self._events.spawn(work, what)

    def _extension_event_soon(self, event: ext.ExtensionEvent) -> None:
        """Deliver a notification event from synchronous code (a task `wait_for_idle` awaits)."""
        runner = self.extension_runner
        if runner is not None and runner.has_handlers(event.type):
            self.spawn(runner.emit(event), event.type)

    def send_custom_message(self, message: dict[str, Any], deliver_as: DeliverAs | None, trigger_turn: bool) -> None:
        """`pi.send_message`: while streaming, steer (default) or follow up; `nextTurn` waits for the next prompt;
        idle, append it now (a run starts with `trigger_turn`)."""
        custom = custom_message(message)
        if deliver_as == "nextTurn":
            self._next_turn.append(custom)
        elif self.is_streaming:
            if deliver_as == "followUp":
                self.agent.follow_up(custom)
            else:
                self.agent.steer(custom)
        elif trigger_turn:
            self.spawn(self._run_messages([custom]), "send_message")
        else:
            self._recorder.record(custom)
            self._emit_soon(MessageStartEvent(message=custom))
            self._emit_soon(MessageEndEvent(message=custom))

    def send_user_message(self, content: str | list[TextContent | ImageContent], deliver_as: DeliverAs | None) -> None:
        """`pi.send_user_message`: a prompt when idle; while streaming `deliver_as` is required."""
        if isinstance(content, str):
            text, images = content, None
        else:
            text = "".join(b.text for b in content if isinstance(b, TextContent))
            images = [b for b in content if isinstance(b, ImageContent)] or None
        if self.is_streaming:
            if deliver_as is None:
                raise RuntimeError(STREAMING_WITHOUT_BEHAVIOR)
            if deliver_as == "steer":
                self.spawn(self.steer(text, images), "send_user_message")
            else:
                self.spawn(self.follow_up(text, images), "send_user_message")
            return
        self.spawn(self.prompt(text, images, source="extension"), "send_user_message")

    async def _run_messages(self, messages: list[AgentMessage]) -> None:
        if self.is_streaming:
            for message in messages:
                self.agent.steer(message)
            return
        self._check_ready()
        self._begin()
        try:
            await self._run(lambda: self.agent.prompt(messages))
        finally:
            self._end()

    def all_tools(self) -> dict[str, AgentTool]:
        """Every known tool by name (built-ins, custom and extension tools), active or not."""
        return self._tools.all_tools()

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Activate exactly the known tools named (unknown names are ignored) and rebuild the system prompt."""
        self._tools.set_active(names)

    def refresh_tools(self) -> None:
        """An extension registered a tool after startup: new tools join the active set."""
        self._tools.refresh()

    def reload_messages(self) -> None:
        """Re-read the agent transcript from the session (after an extension's `setup` wrote entries)."""
        self._reload_context()

    async def reload_resources(self) -> list[str]:
        """The resource part of `/reload`: re-read skills, prompt templates, `SYSTEM.md`/`APPEND_SYSTEM.md` and the
        context files, then rebuild the system prompt (used from the next request on). Returns the warnings
        (unreadable context files, skill/template diagnostics)."""
        return await self._tools.reload_resources()

    def replace_extension_tools(self, old: Mapping[str, AgentTool]) -> None:
        """After the extensions were re-imported: drop the tools of the previous load (`old`, by name) and take the
        runner's current ones. An active old tool is swapped for its new version, or dropped when no extension
        registers that name any more; a name that is new joins the active set (as `register_tool` does)."""
        self._tools.replace_extension_tools(old)

    # ----------------------------------------------------------------- lifecycle

    def _check_alive(self) -> None:
        if self._disposed:
            raise RuntimeError("This session was disposed; use the runtime's current session")

    def dispose(self) -> None:
        """Stop delivering events, cancel retries and user commands, and detach from the agent."""
        if self._disposed:
            return
        self._disposed = True
        self.abort_retry()
        self.abort_bash()
        self.abort_compaction()
        self.abort_branch_summary()
        if self._agent.is_running:  # not `agent`: disposing needs no message list
            self._agent.abort()
        self._unsubscribe_agent()
        self._events.clear()

    async def close_connections(self) -> None:
        """Close the keep-alive connections of `connection_pool` (later requests open their own)."""
        await self.connection_pool.aclose()


__all__ = [
    "COMPACTING_TEXT",
    "NAVIGATE_WHILE_COMPACTING",
    "NAVIGATE_WHILE_STREAMING",
    "NO_MODEL_TEXT",
    "STREAMING_WITHOUT_BEHAVIOR",
    "AgentSession",
    "ClearedQueues",
    "ForkMessage",
    "ModelCycleResult",
    "NavigateTreeResult",
    "PromptSetup",
    "PromptSource",
    "RunOptions",
    "ScopedModel",
    "SessionListener",
    "SessionServices",
    "StreamingBehavior",
    "no_api_key_text",
]
