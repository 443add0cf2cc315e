"""A 200-turn scripted session with a small window, compacted whenever the threshold is crossed (acceptance of the
whole pipeline: prepare -> faux summary -> apply -> rebuild)."""

import random
import re

from compaction_helpers import Recorder, assistant, call, faux_with, result, user

from apex_ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from apex_coding_agent.compaction import (
    CompactionResult,
    CompactionSettings,
    apply_compaction,
    compact_branch,
    estimate_tokens,
    should_compact,
)
from apex_coding_agent.messages import CompactionSummaryMessage, convert_to_llm
from apex_coding_agent.session.session_manager import SessionManager

WINDOW = 6000
SETTINGS = CompactionSettings(reserve_tokens=1000, keep_recent_tokens=1500)
_LAST_USER = re.compile(r"\[User\]: (request \d+)")


def _summarizer(prompt: str) -> str:
    """An ideal summarizer: a turn-prefix summary names the original request, as the instructions ask."""
    if "## Original Request" in prompt:
        requests = _LAST_USER.findall(prompt)
        return "## Original Request\n" + (requests[-1] if requests else "(none)") + "\n\n## Early Progress\n- work"
    return "## Goal\nWork through the requests.\n\n## Progress\n### Done\n- [x] earlier requests\n" + "p" * 300


def _estimate(messages: list) -> int:
    return sum(estimate_tokens(m) for m in messages)


def _check_context(sm: SessionManager, latest_request: str) -> None:
    messages = sm.build_session_context().messages
    assert _estimate(messages) <= WINDOW - SETTINGS.reserve_tokens
    seen_calls: set[str] = set()
    for message in messages:
        if isinstance(message, AssistantMessage):
            seen_calls.update(b.id for b in message.content if isinstance(b, ToolCall))
        if isinstance(message, ToolResultMessage):
            assert message.tool_call_id in seen_calls, "orphaned tool result"
    text = "\n".join(
        b.text
        for m in convert_to_llm(messages)
        if isinstance(m, UserMessage)
        for b in m.content
        if isinstance(b, TextContent)
    )
    assert latest_request in text


async def test_two_hundred_turns_with_repeated_compaction() -> None:
    rng = random.Random(7)
    recorder = Recorder(_summarizer)
    faux = faux_with(recorder, count=2000)
    model = faux.model()
    sm = SessionManager.in_memory("/w")
    compactions = splits = 0

    async def maybe_compact(latest: str) -> None:
        nonlocal compactions, splits
        messages = sm.build_session_context().messages
        # Exact accounting for the scripted session: no provider usage, so estimates are the whole truth.
        if not should_compact(_estimate(messages), WINDOW, SETTINGS):
            return
        outcome = await compact_branch(sm.get_branch(), model, SETTINGS, trigger="threshold")
        assert isinstance(outcome, CompactionResult), outcome
        assert outcome.tokens_after < outcome.tokens_before and not outcome.insufficient
        splits += "**Turn Context (split turn):**" in outcome.summary
        apply_compaction(sm, outcome)
        compactions += 1
        rebuilt = sm.build_session_context().messages
        assert isinstance(rebuilt[0], CompactionSummaryMessage)
        assert _estimate(rebuilt) == outcome.tokens_after
        _check_context(sm, latest)

    for turn in range(200):
        request = f"request {turn}"
        sm.append_message(user(f"{request}: " + "u" * rng.randrange(20, 400)))
        for _ in range(rng.randrange(0, 5)):
            tool = rng.choice(["read", "edit", "write", "bash"])
            tool_call = call(tool, path=f"src/f{rng.randrange(8)}.py")
            sm.append_message(assistant("step", calls=[tool_call]))
            sm.append_message(result(tool_call, "r" * rng.randrange(10, 3000)))
            await maybe_compact(request)
        sm.append_message(assistant(f"finished {request}"))
        await maybe_compact(request)
        _check_context(sm, request)

    assert compactions >= 20
    assert 1 <= splits < compactions  # both cut kinds were exercised
    # The cumulative file lists name each of the 8 scripted paths at most once.
    final = sm.build_session_context().messages[0]
    assert isinstance(final, CompactionSummaryMessage)
    assert final.summary.count("src/f") <= 8
