"""`AgentSession`: one conversation of the coding agent, a coordinator over named collaborators.

It owns an `Agent` built with `system_messages=False` and ties it to the session file, settings, models,
the permission gate and the tools. session_wiring.py builds the collaborators (`SessionParts`); each concern
lives in a module of its own:

* prompt_runner.py: prompts, continuations, the steering/follow-up queues, abort and settling, extension
  messages; agent_event_router.py: where each agent event goes (extensions, collaborators, subscribers);
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
  `willRetry`, `agent_settled`, `queue_update`, ...); session_queries.py: stats, last reply, fork points.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from apex_agent.agent import Agent
from apex_agent.messages import AgentMessage
from apex_agent.tools import AgentTool
from apex_agent.types import AgentStopReason
from apex_ai.connection_pool import ConnectionPool
from apex_ai.retry import RetryPolicy
from apex_ai.types import ImageContent, Model, ModelThinkingLevel, TextContent
from apex_coding_agent.checkpoints.manager import Checkpoints
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.events import EntryAppendedEvent, SessionEvent, SessionInfoChangedEvent
from apex_coding_agent.extensions import events as ext
from apex_coding_agent.extensions.bindings import DeliverAs
from apex_coding_agent.runtime.agent_event_router import AgentEventRouter
from apex_coding_agent.runtime.event_hub import SessionListener
from apex_coding_agent.runtime.model_selector import ModelCycleResult, ScopedModel
from apex_coding_agent.runtime.prompt_input import PromptSource, StreamingBehavior
from apex_coding_agent.runtime.prompt_runner import ClearedQueues, PromptRunner
from apex_coding_agent.runtime.session_errors import (
    COMPACTING_TEXT,
    NAVIGATE_WHILE_COMPACTING,
    NAVIGATE_WHILE_STREAMING,
    NO_MODEL_TEXT,
    STREAMING_WITHOUT_BEHAVIOR,
    no_api_key_text,
)
from apex_coding_agent.runtime.session_parts import PromptSetup, RunOptions, RunState, SessionServices
from apex_coding_agent.runtime.session_queries import ForkMessage, fork_messages, last_assistant_text, session_stats
from apex_coding_agent.runtime.session_wiring import wire_parts
from apex_coding_agent.runtime.tool_set import resource_commands
from apex_coding_agent.runtime.tree_navigator import NavigateTreeResult
from apex_coding_agent.session.context import LazyContextMessages
from apex_coding_agent.session.entries import CustomEntry
from apex_coding_agent.session.stats import SessionStats
from apex_coding_agent.tools import SessionEnvironment

if TYPE_CHECKING:
    from apex_coding_agent.compaction.compact import CompactionResult
    from apex_coding_agent.runtime.bash_executor import BashResult


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
        self.session_manager = services.session_manager
        self.settings_manager = services.settings_manager
        self.model_runtime = services.model_runtime
        self.cwd = services.cwd
        self.agent_dir = services.agent_dir
        self.extension_runner = services.extension_runner
        """Delivers extension events; None runs without extensions."""
        self.resource_loader = services.resource_loader
        self.project_trusted = services.project_trusted
        self.run_budget = run.run_budget
        self.scoped_models = list(run.scoped_models)
        self._state = state = RunState()
        self._parts = parts = wire_parts(agent, services, prompt, run, self)
        self._runs = PromptRunner(agent, self, parts, state)
        router = AgentEventRouter(agent, parts, state)
        self._unsubscribe_agent = parts.hooks.install(agent, parts.requests, self.model_runtime, router.on_agent_event)
        agent.get_turn_tools = router.turn_tools
        self.checkpoints = parts.hooks.tool_observer = Checkpoints(self)
        """File checkpoints of the user turns: `rewind`, `redo` (checkpoints/, docs/checkpoints.md)."""

    @property
    def connection_pool(self) -> ConnectionPool:
        """Keep-alive connections of this session's model requests (a runtime hands one pool from session to
        session); `close_connections` ends them."""
        return self._parts.requests.connection_pool

    @connection_pool.setter
    def connection_pool(self, pool: ConnectionPool) -> None:
        self._parts.requests.connection_pool = pool

    @property
    def permission_gate(self) -> PermissionGate | None:
        """Every tool call passes it (None: every call is allowed)."""
        return self._parts.hooks.permission_gate

    @permission_gate.setter
    def permission_gate(self, gate: PermissionGate | None) -> None:
        self._parts.hooks.permission_gate = gate

    @property
    def base_system_prompt(self) -> str:
        """The prompt without a `before_agent_start` replacement (restored after each run)."""
        return self._parts.tools.base_system_prompt

    @property
    def system_prompt_options(self) -> ext.SystemPromptOptions:
        """What the system prompt was built from, for `before_agent_start` handlers."""
        return self._parts.tools.system_prompt_options

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
    def last_stop_reason(self) -> AgentStopReason | None:
        """How the last run stopped (None while one runs, or before the first)."""
        return self._state.last_stop_reason

    @last_stop_reason.setter
    def last_stop_reason(self, reason: AgentStopReason | None) -> None:
        self._state.last_stop_reason = reason

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
        return self._state.busy or self._agent.state.is_streaming

    @property
    def is_compacting(self) -> bool:
        return self._parts.compaction.is_compacting

    @property
    def is_retrying(self) -> bool:
        return self._parts.retry.attempt > 0

    @property
    def steering_messages(self) -> list[str]:
        return list(self._parts.queues.steering)

    @property
    def follow_up_messages(self) -> list[str]:
        return list(self._parts.queues.follow_up)

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
        return self._parts.events.subscribe(listener)

    def emit_event(self, event: SessionEvent) -> None:
        """Deliver an event of a part that lives beside the session (an MCP server's status) to the listeners."""
        self._parts.events.emit_soon(event)

    def _emit_soon(self, event: SessionEvent) -> None:
        """Emit from synchronous code: sync listeners run now, async ones in a task `wait_for_idle` awaits."""
        self._parts.events.emit_soon(event)

    def retry_policy(self) -> RetryPolicy:
        return self._parts.retry.policy()

    # ----------------------------------------------------------------- prompting

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
        return await self._runs.prompt(
            text, images, streaming_behavior, source, expand_prompt_templates, preflight_result
        )

    async def continue_(self) -> AgentStopReason | None:
        """Continue from the current transcript (e.g. after an error or with queued messages)."""
        return await self._runs.continue_()

    def abort_retry(self) -> None:
        """Cancel a pending automatic retry (its wait ends at once)."""
        self._parts.retry.abort()

    async def abort(self) -> None:
        """Stop the current run, any pending retry and an automatic compaction of the run; queued messages are
        dropped. Do not await inside a listener."""
        await self._runs.abort()

    async def wait_for_idle(self) -> None:
        await self._runs.wait_for_idle()

    # ----------------------------------------------------------------- queues

    async def steer(self, text: str, images: Sequence[ImageContent] | None = None) -> None:
        """Queue a message to be injected after the current turn (`/skill:` and templates expanded)."""
        await self._runs.queue("steer", text, images, True)

    async def follow_up(self, text: str, images: Sequence[ImageContent] | None = None) -> None:
        """Queue a message for when the agent would otherwise stop (`/skill:` and templates expanded)."""
        await self._runs.queue("followUp", text, images, True)

    # ----------------------------------------------------------------- resources

    def expand_input(self, text: str) -> str:
        """Steps 3-4 of the input pipeline: `/skill:<name>`, then prompt templates.

        Without a resource loader the text is returned unchanged. A skill file that cannot be read is recorded in
        `skill_errors` and the text passes through.
        """
        return self._parts.input.expand(text)

    @property
    def skill_errors(self) -> list[str]:
        """Problems met while expanding `/skill:` input (the text then went on unexpanded)."""
        return self._parts.input.skill_errors

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
        return self._runs.clear_queue()

    # ----------------------------------------------------------------- model and thinking

    def get_available_thinking_levels(self) -> list[ModelThinkingLevel]:
        return self._parts.models.available_thinking_levels(self.model)

    def set_thinking_level(self, level: ModelThinkingLevel) -> ModelThinkingLevel:
        """Set the level (clamped to the model); on a change append an entry and emit `thinking_level_changed`."""
        return self._parts.models.set_thinking_level(level)

    def cycle_thinking_level(self) -> ModelThinkingLevel | None:
        """The next available level (wrapping); None when the model has no reasoning."""
        return self._parts.models.cycle_thinking_level(self.model, self.thinking_level)

    def set_model(self, model: Model, thinking_level: ModelThinkingLevel | None = None) -> None:
        """Switch models for this session only (never written to settings); the thinking level is re-clamped."""
        self._parts.models.select(model, thinking_level, "set")

    def cycle_model(self, direction: Literal["forward", "backward"] = "forward") -> ModelCycleResult | None:
        """Move to the next scoped model (or available model when none are scoped); None if there is no other."""
        return self._parts.models.cycle_model(direction)

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
        return await self._parts.bash.execute(command, exclude_from_context, id, on_chunk)

    def abort_bash(self) -> None:
        self._parts.bash.abort()

    @property
    def is_bash_running(self) -> bool:
        return self._parts.bash.is_running

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
        return session_stats(self._parts.stats, self.session_manager, self.model, lambda: self.agent.state.messages)

    def get_last_assistant_text(self) -> str | None:
        """Text of the last assistant reply (an aborted empty one is skipped), or None."""
        return last_assistant_text(self.agent.state.messages)

    def get_user_messages_for_forking(self) -> list[ForkMessage]:
        """Every user message entry of the session, in file order."""
        return fork_messages(self.session_manager)

    # ----------------------------------------------------------------- compaction

    @property
    def auto_compaction_enabled(self) -> bool:
        return self._parts.compaction.enabled

    def set_auto_compaction(self, enabled: bool) -> None:
        """Turn automatic compaction on or off (writes `compaction.enabled` to the global settings)."""
        self._parts.compaction.set_enabled(enabled)

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

        return await self._parts.compaction.compact_manual(custom_instructions, stop_run)

    def abort_compaction(self) -> None:
        """Cancel the running manual or automatic compaction (nothing is dropped)."""
        self._parts.compaction.abort()

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
        if self._parts.compaction.is_compacting or self._parts.tree.summarizing:
            raise RuntimeError(NAVIGATE_WHILE_COMPACTING)
        return await self._parts.tree.navigate(target_id, summarize, custom_instructions, replace_instructions, label)

    def abort_branch_summary(self) -> None:
        """Cancel the branch summary of a running `navigate_tree` (the navigation then reports `aborted`)."""
        self._parts.tree.abort()

    def export_to_html(self, output_path: str | None = None) -> str:
        """Write the active branch as a self-contained HTML file (relative paths from the session cwd)."""
        # Imported here: the HTML renderer is not needed by a run that never exports.
        from apex_coding_agent.export import export_session_html

        return str(export_session_html(self.session_manager, output_path, self.cwd))

    # ----------------------------------------------------------------- extensions (SessionBinding support)

    def spawn(self, work: Coroutine[Any, Any, Any], what: str) -> None:  # Any: the result is dropped
        """Run extension-triggered async work in the background; `wait_for_idle` waits for it."""
        self._parts.events.spawn(work, what)

    def send_custom_message(self, message: dict[str, Any], deliver_as: DeliverAs | None, trigger_turn: bool) -> None:
        """`pi.send_message`: while streaming, steer (default) or follow up; `nextTurn` waits for the next prompt;
        idle, append it now (a run starts with `trigger_turn`)."""
        self._runs.send_custom_message(message, deliver_as, trigger_turn)

    def send_user_message(self, content: str | list[TextContent | ImageContent], deliver_as: DeliverAs | None) -> None:
        """`pi.send_user_message`: a prompt when idle; while streaming `deliver_as` is required."""
        self._runs.send_user_message(content, deliver_as)

    def all_tools(self) -> dict[str, AgentTool]:
        """Every known tool by name (built-ins, custom and extension tools), active or not."""
        return self._parts.tools.all_tools()

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Activate exactly the known tools named (unknown names are ignored) and rebuild the system prompt."""
        self._parts.tools.set_active(names)

    def refresh_tools(self) -> None:
        """An extension registered a tool after startup: new tools join the active set."""
        self._parts.tools.refresh()

    def reload_messages(self) -> None:
        """Re-read the agent transcript from the session (after an extension's `setup` wrote entries)."""
        self._parts.reload_context()

    async def reload_resources(self) -> list[str]:
        """The resource part of `/reload`: re-read skills, prompt templates, `SYSTEM.md`/`APPEND_SYSTEM.md` and the
        context files, then rebuild the system prompt (used from the next request on). Returns the warnings
        (unreadable context files, skill/template diagnostics)."""
        return await self._parts.tools.reload_resources()

    def replace_extension_tools(self, old: Mapping[str, AgentTool]) -> None:
        """After the extensions were re-imported: drop the tools of the previous load (`old`, by name) and take the
        runner's current ones. An active old tool is swapped for its new version, or dropped when no extension
        registers that name any more; a name that is new joins the active set (as `register_tool` does)."""
        self._parts.tools.replace_extension_tools(old)

    # ----------------------------------------------------------------- lifecycle

    def _check_alive(self) -> None:
        self._runs.check_alive()

    def dispose(self) -> None:
        """Stop delivering events, cancel retries and user commands, and detach from the agent."""
        if self._state.disposed:
            return
        self._state.disposed = True
        self.abort_retry()
        self.abort_bash()
        self.abort_compaction()
        self.abort_branch_summary()
        if self._agent.is_running:  # not `agent`: disposing needs no message list
            self._agent.abort()
        self._unsubscribe_agent()
        self._parts.events.clear()

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
