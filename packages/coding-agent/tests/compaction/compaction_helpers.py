"""Message factories and a small session builder for the compaction tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from apex_ai.providers.faux import FauxProvider
from apex_ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from apex_coding_agent.session.session_manager import SessionManager

_ids = iter(range(1, 1_000_000))


def user(text: str, ts: int = 1) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=ts)


def user_with_image(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text), ImageContent(data="AAAA", mime_type="image/png")], timestamp=1)


def assistant(
    text: str = "",
    *,
    calls: Sequence[ToolCall] = (),
    thinking: str | None = None,
    total: int = 0,
    stop_reason: str = "stop",
    provider: str = "faux",
    model: str = "faux-1",
) -> AssistantMessage:
    content: list[Any] = []
    if thinking is not None:
        content.append(ThinkingContent(thinking=thinking))
    if text:
        content.append(TextContent(text=text))
    content.extend(calls)
    return AssistantMessage(
        content=content,
        api="faux",
        provider=provider,
        model=model,
        usage=Usage(input=total, total_tokens=total),
        stop_reason="toolUse" if calls and stop_reason == "stop" else stop_reason,
        timestamp=2,
    )


def call(name: str, **args: Any) -> ToolCall:
    return ToolCall(id=f"call_{next(_ids)}", name=name, arguments=args)


def result(tool_call: ToolCall, text: str) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=tool_call.id, tool_name=tool_call.name, content=[TextContent(text=text)], timestamp=3
    )


def tool_turn(sm: SessionManager, request: str, steps: Sequence[tuple[ToolCall, str]], answer: str) -> list[str]:
    """Append user, (assistant call + result) per step, final assistant; returns the entry ids."""
    ids = [sm.append_message(user(request))]
    for tool_call, output in steps:
        ids.append(sm.append_message(assistant(calls=[tool_call])))
        ids.append(sm.append_message(result(tool_call, output)))
    ids.append(sm.append_message(assistant(answer)))
    return ids


def prompt_of(context: Context) -> str:
    """The text of the single user message a summary request sends."""
    message = context.messages[0]
    assert isinstance(message, UserMessage) and not isinstance(message.content, str)
    return "".join(block.text for block in message.content if isinstance(block, TextContent))


class Recorder:
    """Faux step that records each request's context and options and replies with `reply(prompt)`."""

    def __init__(self, reply: Any = None) -> None:
        self.contexts: list[Context] = []
        self.options: list[Any] = []
        self._reply = reply or (lambda prompt: "## Goal\nsummary")

    def __call__(self, context: Context, options: Any, state: Any, model: Any) -> AssistantMessage:
        self.contexts.append(context)
        self.options.append(options)
        return AssistantMessage(
            content=[TextContent(text=self._reply(prompt_of(context)))],
            api="faux",
            provider="faux",
            model="faux-1",
            stop_reason="stop",
            timestamp=0,
        )

    @property
    def prompts(self) -> list[str]:
        return [prompt_of(c) for c in self.contexts]


def faux_with(recorder: Recorder, count: int = 1, **model: Any) -> FauxProvider:
    faux = FauxProvider(models=[{"id": "faux-1", **model}])
    faux.set_responses([recorder] * count)
    return faux
