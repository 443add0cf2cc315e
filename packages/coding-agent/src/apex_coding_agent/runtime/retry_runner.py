"""`RetryRunner`: automatic retries of transient provider errors (settings `retry.*`).

A failed run is continued without a new user message after a backoff; the failed reply leaves the agent's
transcript but stays in the session file. `auto_retry_start`/`auto_retry_end` events report each attempt.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from apex_agent.agent import Agent
from apex_ai.abort import AbortController, AbortError, AbortSignal
from apex_ai.retry import RETRY_CANCELLED, RetryPolicy, Sleep, is_retryable_assistant_error
from apex_ai.types import AssistantMessage
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.events import AgentEndEvent, AutoRetryEndEvent, AutoRetryStartEvent, SessionEvent

Emit = Callable[[SessionEvent], Awaitable[None]]


def retry_policy(settings: SettingsManager) -> RetryPolicy:
    return RetryPolicy(
        enabled=settings.get_bool("retry.enabled", True),
        max_retries=settings.get_int("retry.maxRetries", 3, minimum=0),
        base_delay_ms=settings.get_int("retry.baseDelayMs", 2000, minimum=0),
        # The same cap the provider applies to a server's retry-after (legacy `retry.maxDelayMs`).
        max_delay_ms=settings.get_int("retry.provider.maxRetryDelayMs", 60000, minimum=0),
    )


def _last_reply(event: AgentEndEvent) -> AssistantMessage | None:
    return next((m for m in reversed(event.messages) if isinstance(m, AssistantMessage)), None)


class RetryRunner:
    """The retry state of one session: the attempt count, the failure to retry and the backoff being waited."""

    def __init__(self, agent: Callable[[], Agent], settings_manager: SettingsManager, emit: Emit, sleep: Sleep) -> None:
        self._agent = agent
        self._settings = settings_manager
        self._emit = emit
        self._sleep = sleep
        self._controller: AbortController | None = None
        self.failed: AssistantMessage | None = None
        """The failure of the last run to retry (set at `agent_end`, taken by the run loop)."""
        self.attempt = 0

    def policy(self) -> RetryPolicy:
        return retry_policy(self._settings)

    def retryable_failure(self, event: AgentEndEvent, signal: AbortSignal | None) -> AssistantMessage | None:
        if event.stop_reason != "error" or (signal is not None and signal.aborted):
            return None
        last = _last_reply(event)
        if last is None:
            return None
        policy = self.policy()
        if not policy.enabled or self.attempt >= policy.max_retries:
            return None
        model = self._agent().state.model
        window = model.context_window if model is not None else None
        if not is_retryable_assistant_error(last, window):
            return None
        # A server asking for a longer wait than the cap gets no retry: its failure stands.
        return last if policy.wait_ms(self.attempt + 1, last) is not None else None

    async def succeeded(self) -> None:
        """A reply after a retry arrived: report the retry as successful."""
        attempt, self.attempt = self.attempt, 0
        await self._emit(AutoRetryEndEvent(success=True, attempt=attempt))

    async def gave_up(self, event: AgentEndEvent) -> None:
        """A retried run ended with a failure that is not retried again."""
        attempt, self.attempt = self.attempt, 0
        last = _last_reply(event)
        final = (last.error_message if last is not None else None) or f"Request {event.stop_reason}"
        await self._emit(AutoRetryEndEvent(success=False, attempt=attempt, final_error=final))

    async def wait(self, failed: AssistantMessage, on_cancel: Callable[[], None]) -> bool:
        """Announce and wait out the backoff, dropping the failed reply from the transcript; False if cancelled
        (`on_cancel` runs before `auto_retry_end` is emitted)."""
        policy = self.policy()
        self.attempt += 1
        attempt = self.attempt
        delay = policy.wait_ms(attempt, failed)  # the server's retry-after when it sent one
        if delay is None:  # ruled out by retryable_failure; kept total for a policy changed in between
            delay = policy.delay_ms(attempt)
        # Created before the announcement so a listener reacting to it can already cancel the wait.
        controller = self._controller = AbortController()
        await self._emit(
            AutoRetryStartEvent(
                attempt=attempt,
                max_attempts=policy.max_retries,
                delay_ms=delay,
                error_message=failed.error_message or "",
            )
        )
        agent = self._agent()
        messages = agent.state.messages
        if messages and messages[-1] is failed:
            # Never resent; the file keeps it and the next attempt's entry becomes its child.
            agent.state.messages = messages[:-1]
        try:
            if not controller.signal.aborted:
                await self._sleep(delay, controller.signal)
        except AbortError:
            pass
        finally:
            self._controller = None
        if controller.signal.aborted:
            self.attempt = 0
            on_cancel()
            await self._emit(AutoRetryEndEvent(success=False, attempt=attempt, final_error=RETRY_CANCELLED))
            return False
        return True

    def abort(self) -> None:
        """Cancel a pending automatic retry (its wait ends at once)."""
        if self._controller is not None:
            self._controller.abort()


__all__ = ["RetryRunner", "retry_policy"]
