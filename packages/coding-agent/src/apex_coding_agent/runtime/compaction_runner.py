"""`CompactionRunner`: an `AgentSession`'s compactions.

Manual (`compact`), automatic at the threshold and after a context overflow (then the run is retried), each
under one lock so they never overlap, with `compaction_start`/`compaction_end` events and the extensions'
`session_before_compact`/`session_compact`. The decision when to compact is compaction_policy.py's.

Compaction proper (prepare, summarize, compact) is imported by the methods that run it: most runs only check the
threshold (settings and token counts), and a print run should not load the rest at start.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from apex_agent.agent import Agent
from apex_agent.messages import AgentMessage
from apex_ai.abort import AbortController, AbortSignal
from apex_ai.retry import RetryCallbacks, Sleep
from apex_ai.types import AssistantMessage, Model, SystemMessage, Usage
from apex_coding_agent.compaction.settings import CompactionSettings
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.events import (
    CompactionEndEvent,
    CompactionReason,
    CompactionStartEvent,
    SessionEvent,
    SummarizationRetryAttemptStartEvent,
    SummarizationRetryFinishedEvent,
    SummarizationRetryScheduledEvent,
    SummarySource,
)
from apex_coding_agent.extensions import events as ext
from apex_coding_agent.extensions.runner import ExtensionRunner
from apex_coding_agent.runtime.compaction_policy import (
    FAILURE_PREFIX,
    OVERFLOW_RECOVERY_FAILED,
    CompactionPlan,
    ThresholdPause,
    plan_compaction,
    stale_test,
)
from apex_coding_agent.runtime.request_hooks import ProviderRequests
from apex_coding_agent.runtime.retry_runner import retry_policy
from apex_coding_agent.runtime.session_errors import CANCELLED_TEXT, NO_MODEL_TEXT
from apex_coding_agent.session.entries import CompactionEntry, EntryBase, MessageEntry
from apex_coding_agent.session.session_manager import SessionManager

if TYPE_CHECKING:
    from apex_coding_agent.compaction.compact import CompactionResult
    from apex_coding_agent.compaction.summarize import SummaryFailure, SummaryRequestOptions

Emit = Callable[[SessionEvent], Awaitable[None]]


def summary_retry_callbacks(emit: Emit, source: SummarySource, reason: CompactionReason | None) -> RetryCallbacks:
    """The `summarization_retry_*` events of a summary request (compaction or branch summary)."""

    async def scheduled(attempt: int, max_attempts: int, delay_ms: int, error_message: str) -> None:
        await emit(
            SummarizationRetryScheduledEvent(
                attempt=attempt, max_attempts=max_attempts, delay_ms=delay_ms, error_message=error_message
            )
        )

    async def attempt_start() -> None:
        await emit(SummarizationRetryAttemptStartEvent(source=source, reason=reason))

    async def finished(success: bool, attempt: int, final_error: str | None) -> None:
        await emit(SummarizationRetryFinishedEvent())

    return RetryCallbacks(
        on_retry_scheduled=scheduled, on_retry_attempt_start=attempt_start, on_retry_finished=finished
    )


class SummaryRequests:
    """How compactions and branch summaries ask the model: the session's request path, its auth and retry
    settings, and the `summarization_retry_*` events."""

    def __init__(
        self,
        requests: ProviderRequests,
        model_runtime: ModelRuntime,
        settings_manager: SettingsManager,
        emit: Emit,
        sleep: Sleep,
    ) -> None:
        self._requests = requests
        self._model_runtime = model_runtime
        self._settings = settings_manager
        self._emit = emit
        self._sleep = sleep

    def options(
        self,
        model: Model,
        signal: AbortSignal,
        source: SummarySource,
        reason: CompactionReason | None,
        thinking_level: str = "off",
    ) -> SummaryRequestOptions:
        from apex_coding_agent.compaction.summarize import SummaryRequestOptions, complete_fn_from_stream

        return SummaryRequestOptions(
            complete_fn=complete_fn_from_stream(self._requests.stream),
            api_key=self._model_runtime.get_api_key(model.provider),
            thinking_level=thinking_level,
            signal=signal,
            retry_policy=retry_policy(self._settings),
            retry_callbacks=summary_retry_callbacks(self._emit, source, reason),
            sleep=self._sleep,
        )


def compacted_without_reply(branch: Sequence[EntryBase]) -> bool:
    """True when the branch's latest compaction has no assistant reply after it."""
    for entry in reversed(branch):
        if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
            return False
        if isinstance(entry, CompactionEntry):
            return True
    return False


def failure_text(reason: CompactionReason, failure: SummaryFailure) -> str:
    if failure.reason == "aborted":
        return CANCELLED_TEXT  # however it was stopped (abort_compaction, an extension)
    if reason == "manual" and failure.reason in ("already_compacted", "nothing_to_compact"):
        return failure.message  # what `/compact` answers, said as is
    return FAILURE_PREFIX[reason] + failure.message


def _last_reply(messages: Sequence[AgentMessage]) -> AssistantMessage | None:
    return next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)


class CompactionRunner:
    """The compaction state of one session: the lock, the running compaction and the automatic checks' state."""

    def __init__(
        self,
        *,
        agent: Callable[[], Agent],
        model: Callable[[], Model | None],
        session_manager: SessionManager,
        settings_manager: SettingsManager,
        summaries: SummaryRequests,
        extension_runner: ExtensionRunner | None,
        emit: Emit,
    ) -> None:
        self._agent = agent
        self._model = model
        self._manager = session_manager
        self._settings = settings_manager
        self._summaries = summaries
        self._runner = extension_runner
        self._emit = emit
        self.lock = asyncio.Lock()
        """Held by every compaction and branch summary (they never overlap)."""
        self.is_compacting = False
        self._controller: AbortController | None = None
        self._auto: asyncio.Future[CompactionResult | SummaryFailure] | None = None
        self._manual = False
        self.pending_plan: CompactionPlan | None = None
        """The plan `agent_end` left for the run loop."""
        self._overflow_attempted = False
        self._threshold_pause: ThresholdPause | None = None

    # ----------------------------------------------------------------- state

    @property
    def auto_running(self) -> bool:
        return self._auto is not None

    @property
    def enabled(self) -> bool:
        return self._settings.get_bool("compaction.enabled", True)

    def set_enabled(self, enabled: bool) -> None:
        """Turn automatic compaction on or off (writes `compaction.enabled` to the global settings)."""
        self._settings.set("compaction.enabled", enabled)
        if enabled:
            self._threshold_pause = None

    def reset_branch_state(self) -> None:
        """Another branch is active: the automatic compaction state is per branch and starts over."""
        self._threshold_pause = None
        self._overflow_attempted = False

    def new_user_message(self) -> None:
        self._overflow_attempted = False  # a new user message starts a new recovery budget

    def reply_ok(self) -> None:
        self._overflow_attempted = False  # a reply that did not overflow ends the recovery

    def take_plan(self) -> CompactionPlan | None:
        """The plan `agent_end` left for the run loop (a method: listeners set it across awaits)."""
        plan, self.pending_plan = self.pending_plan, None
        return plan

    def abort(self) -> None:
        """Cancel the running manual or automatic compaction (nothing is dropped)."""
        if self._controller is not None:
            self._controller.abort()

    # ----------------------------------------------------------------- planning

    def settings(self) -> CompactionSettings:
        """The configured sizes, scaled to the current model's window (README, *Local models*)."""
        settings = CompactionSettings.from_settings(self._settings)
        model = self._model()
        return settings.for_window(model.context_window) if model is not None else settings

    def plan(self, message: AssistantMessage | None, *, after_run: bool) -> CompactionPlan | None:
        plan = plan_compaction(
            message,
            model=self._model(),
            messages=self._agent().state.messages,
            settings=self.settings(),
            is_stale=stale_test(self._manager.get_branch_view()),
            after_run=after_run,
            overflow_attempted=self._overflow_attempted,
        )
        pause = self._threshold_pause
        if plan is not None and not plan.recovery_failed and pause is not None:
            # The last automatic compaction could not help: not again until the context grew.
            if not pause.allows(plan.tokens):
                return None
            self._threshold_pause = None
        return plan

    def plan_after_run(self, messages: Sequence[AgentMessage]) -> CompactionPlan | None:
        """Check (a): after a run that is not retried, with its last reply."""
        plan = self.plan(_last_reply(messages), after_run=True)
        if plan is not None and plan.will_retry:
            self._overflow_attempted = True
        return plan

    async def compact_before_prompt(self) -> None:
        """Check (b), before a prompt: the last reply in the transcript, aborted ones included."""
        plan = self.plan(_last_reply(self._agent().state.messages), after_run=False)
        if plan is not None:
            await self.auto_compact(plan)

    # ----------------------------------------------------------------- running

    async def compact_manual(
        self, custom_instructions: str | None, stop_run: Callable[[], Awaitable[None]]
    ) -> CompactionResult:
        """`AgentSession.compact` once the session is checked: waits for a running automatic compaction (its
        result stands when it succeeded), else stops the run (`stop_run`) and compacts."""
        from apex_coding_agent.compaction.compact import CompactionResult
        from apex_coding_agent.compaction.summarize import SummaryFailure

        if self._manual:
            raise RuntimeError("Compaction is already in progress.")
        self._manual = True
        try:
            running = self._auto
            if running is not None:
                outcome = await asyncio.shield(running)
                if isinstance(outcome, CompactionResult):
                    return outcome
            await stop_run()
            async with self.lock:
                outcome = await self._compact_now("manual", custom_instructions=custom_instructions)
        finally:
            self._manual = False
        if isinstance(outcome, SummaryFailure):
            raise RuntimeError(failure_text("manual", outcome))
        return outcome

    async def auto_compact(self, plan: CompactionPlan) -> CompactionResult | SummaryFailure | None:
        """Execute an automatic plan under the lock; None when only the recovery failure was reported."""
        from apex_coding_agent.compaction.compact import CompactionResult

        if plan.recovery_failed:
            await self._emit(
                CompactionEndEvent(
                    reason="overflow", aborted=False, will_retry=False, error_message=OVERFLOW_RECOVERY_FAILED
                )
            )
            return None
        agent = self._agent()
        dropped: AssistantMessage | None = None
        if plan.failing is not None:
            messages = agent.state.messages
            if messages and messages[-1] is plan.failing:
                # Out of the transcript while compacting, so a retry continues from the prompt (the file keeps it).
                agent.state.messages = messages[:-1]
                dropped = plan.failing
        loop = asyncio.get_running_loop()
        future: asyncio.Future[CompactionResult | SummaryFailure] = loop.create_future()
        self._auto = future
        try:
            async with self.lock:
                outcome = await self._compact_now(plan.reason, will_retry=plan.will_retry)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved here so an unawaited future never logs it again
            raise
        finally:
            self._auto = None
        future.set_result(outcome)
        if isinstance(outcome, CompactionResult):
            self._threshold_pause = ThresholdPause() if outcome.insufficient else None
        else:
            if outcome.reason != "aborted":
                self._threshold_pause = ThresholdPause()
            if dropped is not None and agent.state.messages[-1:] != [dropped]:
                # Nothing was compacted: the transcript matches the file again (the reply is no longer retried).
                agent.state.messages = [*agent.state.messages, dropped]
        return outcome

    async def _compact_now(
        self, reason: CompactionReason, *, will_retry: bool = False, custom_instructions: str | None = None
    ) -> CompactionResult | SummaryFailure:
        """One compaction with its events; the caller holds the lock. Failures change nothing in the session."""
        from apex_coding_agent.compaction.compact import CompactionResult, apply_compaction
        from apex_coding_agent.compaction.summarize import SummaryFailure

        model = self._model()
        if model is None:
            failure = SummaryFailure("error", NO_MODEL_TEXT)
            await self._emit(CompactionStartEvent(reason=reason))
            await self._emit(CompactionEndEvent(reason=reason, error_message=failure_text(reason, failure)))
            return failure
        self.is_compacting = True
        controller = self._controller = AbortController()
        try:
            await self._emit(CompactionStartEvent(reason=reason))
            thinking_level = self._agent().state.thinking_level
            options = self._summaries.options(model, controller.signal, "compaction", reason, thinking_level)
            outcome = await self._summarize(model, options, reason, will_retry, custom_instructions, controller.signal)
            entry_id: str | None = None
            if isinstance(outcome, CompactionResult):
                try:
                    entry_id = apply_compaction(self._manager, outcome)
                except ValueError as exc:  # the branch moved while the summary was generated
                    outcome = SummaryFailure("stale", str(exc))
            if isinstance(outcome, SummaryFailure):
                aborted = outcome.reason == "aborted"
                await self._emit(
                    CompactionEndEvent(
                        reason=reason,
                        aborted=aborted,
                        will_retry=False,
                        error_message=None if aborted else failure_text(reason, outcome),
                    )
                )
                return outcome
            context = self._manager.build_session_context()
            self._agent().state.messages = [m for m in context.messages if not isinstance(m, SystemMessage)]
            runner = self._runner
            if runner is not None and runner.has_handlers("session_compact"):
                await runner.emit(
                    ext.SessionCompactEvent(
                        compaction_entry=self._manager.get_entry(entry_id) if entry_id else None,
                        from_extension=outcome.from_hook,
                        reason=reason,
                        will_retry=will_retry,
                    )
                )
            await self._emit(
                CompactionEndEvent(
                    reason=reason, result=outcome.to_wire(), will_retry=will_retry, warning=outcome.warning
                )
            )
            return outcome
        finally:
            self.is_compacting = False
            self._controller = None

    async def _summarize(
        self,
        model: Model,
        options: SummaryRequestOptions,
        reason: CompactionReason,
        will_retry: bool,
        custom_instructions: str | None,
        signal: AbortSignal,
    ) -> CompactionResult | SummaryFailure:
        """Prepare the branch, ask `session_before_compact` handlers (cancel, or a summary of their own), else
        summarize with the model."""
        from apex_coding_agent.compaction.compact import (
            ALREADY_COMPACTED,
            NOTHING_TO_COMPACT,
            CompactionResult,
            compact,
            result_from_summary,
        )
        from apex_coding_agent.compaction.prepare import prepare_compaction
        from apex_coding_agent.compaction.summarize import SummaryFailure

        path = self._manager.get_branch_view()
        if path and isinstance(path[-1], CompactionEntry):
            return SummaryFailure("already_compacted", ALREADY_COMPACTED)
        preparation = prepare_compaction(path, self.settings())
        if preparation is None:
            return SummaryFailure("nothing_to_compact", NOTHING_TO_COMPACT)
        runner = self._runner
        if runner is not None and runner.has_handlers("session_before_compact"):
            decision = await runner.emit_session_before(
                ext.SessionBeforeCompactEvent(
                    preparation=preparation,
                    branch_entries=path,
                    custom_instructions=custom_instructions,
                    reason=reason,
                    will_retry=will_retry,
                    signal=signal,
                )
            )
            if decision is not None and decision.cancel:
                return SummaryFailure("aborted", "Compaction cancelled")
            supplied = decision.compaction if decision is not None else None
            if supplied is not None:
                usage = supplied.get("usage")
                return result_from_summary(
                    preparation,
                    str(supplied.get("summary", "")),
                    trigger=reason,
                    model=f"{model.provider}/{model.id}",
                    details=supplied.get("details"),
                    usage=Usage.model_validate(usage) if isinstance(usage, dict) else None,
                    from_hook=True,
                    first_kept_entry_id=supplied.get("firstKeptEntryId") or supplied.get("first_kept_entry_id"),
                    tokens_before=supplied.get("tokensBefore") or supplied.get("tokens_before"),
                )
        outcome = await compact(preparation, model, options, custom_instructions=custom_instructions, trigger=reason)
        if isinstance(outcome, CompactionResult) and signal.aborted:
            return SummaryFailure("aborted", "Compaction cancelled")
        return outcome


__all__ = ["CompactionRunner", "SummaryRequests", "compacted_without_reply", "failure_text", "summary_retry_callbacks"]
