"""The faux provider: a scripted, deterministic, network-free model API.

Tests and offline demos queue replies (`set_responses`); each request pops one and streams it with
the same event protocol as a real provider: `start`, per-block start/deltas/end, then `done` or
`error`. It registers like any other API (`apex_ai.api_registry`) and its models like any other
provider's (`apex_ai.models.default_registry`).
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import itertools
import json
import math
import random
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from apex_ai import api_registry
from apex_ai._wire import to_camel
from apex_ai.abort import ABORTED_MESSAGE, AbortError, AbortSignal, sleep_abortable
from apex_ai.cost import calculate_cost
from apex_ai.event_stream import AssistantMessageEventStream
from apex_ai.events import (
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from apex_ai.models import default_registry
from apex_ai.options import StreamOptions
from apex_ai.partial_json import parse_partial_json
from apex_ai.stream import mark_keyless_api
from apex_ai.types import (
    AssistantContent,
    AssistantMessage,
    Context,
    Message,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    Usage,
    now_ms,
)

DEFAULT_API = "faux"
DEFAULT_PROVIDER = "faux"
DEFAULT_MODEL_ID = "faux-1"
FAUX_BASE_URL = "http://localhost:0"
EMPTY_QUEUE_MESSAGE = "No more faux responses queued"
CHARS_PER_TOKEN = 4


@dataclass
class FauxState:
    """What a step callable can see about the provider: how many requests it has served (this one included)."""

    call_count: int = 0


FauxStepFn: TypeAlias = Callable[
    [Context, StreamOptions, FauxState, Model], "AssistantMessage | Awaitable[AssistantMessage]"
]
FauxStep: TypeAlias = AssistantMessage | FauxStepFn
"""A scripted reply, or a (sync or async) function `(context, options, state, model)` computing one."""

SleepFn: TypeAlias = Callable[[float], Awaitable[None]]

# --------------------------------------------------------------------------- helpers for scripts

_call_ids = itertools.count(1)


def faux_text(text: str) -> TextContent:
    return TextContent(text=text)


def faux_thinking(thinking: str, signature: str | None = None) -> ThinkingContent:
    return ThinkingContent(thinking=thinking, thinking_signature=signature)


def faux_tool_call(name: str, args: Mapping[str, Any] | None = None, id: str | None = None) -> ToolCall:
    """A tool call block; without `id` a fresh `faux_call_N` id is used."""
    return ToolCall(id=id or f"faux_call_{next(_call_ids)}", name=name, arguments=dict(args or {}))


def faux_assistant_message(
    content: str | AssistantContent | Sequence[AssistantContent],
    stop_reason: StopReason = "stop",
    error_message: str | None = None,
) -> AssistantMessage:
    """A scripted reply. The api/provider/model fields are placeholders: each request re-stamps them."""
    blocks: list[AssistantContent]
    if isinstance(content, str):
        blocks = [faux_text(content)]
    elif isinstance(content, TextContent | ThinkingContent | ToolCall):
        blocks = [content]
    else:
        blocks = list(content)
    return AssistantMessage(
        content=blocks,
        api=DEFAULT_API,
        provider=DEFAULT_PROVIDER,
        model=DEFAULT_MODEL_ID,
        stop_reason=stop_reason,
        error_message=error_message,
        timestamp=now_ms(),
    )


def _tokens(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)


class _JsonMemo:
    """`obj.to_json()`, computed once per object: a long run re-sends the same messages every request.

    Context messages and tools are treated as immutable once a request has seen them (the agent
    appends, it never edits). Entries are keyed by identity and dropped when their object is
    collected, so a recycled `id()` can never answer with another object's text.
    """

    def __init__(self) -> None:
        self._texts: dict[int, tuple[weakref.ref[Any], str]] = {}  # Any: a message or tool model

    def text(self, obj: Message | Tool) -> str:
        key = id(obj)
        found = self._texts.get(key)
        if found is not None and found[0]() is obj:
            return found[1]
        text = obj.to_json()
        texts = self._texts
        self._texts[key] = (weakref.ref(obj, lambda _ref: texts.pop(key, None)), text)
        return text


def _serialize_context(context: Context, memo: _JsonMemo | None = None) -> str:
    """The text whose size stands for the prompt's token count; stable, so cache prefixes line up."""
    serialize: Callable[[Message | Tool], str] = memo.text if memo is not None else (lambda obj: obj.to_json())
    parts = [context.system_prompt or ""]
    parts.extend(serialize(message) for message in context.messages)
    parts.extend(serialize(tool) for tool in context.tools or [])
    return "\n".join(parts)


def _block_text(block: AssistantContent) -> str:
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ThinkingContent):
        return block.thinking
    return block.name + json.dumps(block.arguments)


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix, by string comparisons (C speed) instead of a per-character loop."""
    if b.startswith(a):
        return len(a)  # the usual case: the new prompt extends the previous one
    if a.startswith(b):
        return len(b)
    low, high = 0, min(len(a), len(b))  # a[:low] == b[:low] holds; a[:high] == b[:high] may not
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


class _Aborted(Exception):
    """Internal: the request's signal fired while streaming."""


# --------------------------------------------------------------------------- the provider

_instances: dict[str, FauxProvider] = {}


class FauxProvider:
    """A scripted provider serving API `api` for provider `provider`.

    Constructing one registers `api` in `apex_ai.api_registry` (replacing an earlier faux provider of the
    same api) and its models in `apex_ai.models.default_registry`.
    """

    def __init__(
        self,
        api: str = DEFAULT_API,
        provider: str = DEFAULT_PROVIDER,
        models: Sequence[Model | Mapping[str, Any]] | None = None,
        tokens_per_second: float | None = None,
        token_size: tuple[int, int] = (3, 5),
        seed: int = 0,
        *,
        sleep: SleepFn | None = None,
    ) -> None:
        """`token_size` is the (min, max) tokens per delta; `tokens_per_second` paces deltas with `sleep`
        (default: an abortable `asyncio.sleep`), otherwise deltas only yield to the event loop."""
        if token_size[0] < 1 or token_size[1] < token_size[0]:
            raise ValueError(f"token_size must be (min, max) with 1 <= min <= max, got {token_size}")
        self.api = api
        self.provider = provider
        self.tokens_per_second = tokens_per_second
        self.token_size = token_size
        self.state = FauxState()
        self._sleep = sleep
        self._rng = random.Random(seed)
        self._queue: deque[FauxStep] = deque()
        self._session_prompts: dict[str, str] = {}
        self._json_memo = _JsonMemo()
        self.models: list[Model] = [self._make_model(spec) for spec in (models or [{"id": DEFAULT_MODEL_ID}])]
        _instances[api] = self
        api_registry.register_api(api, self.stream_fn)
        mark_keyless_api(api)
        default_registry.register_provider(provider, api=api, base_url=FAUX_BASE_URL, models=self.models)

    def _make_model(self, spec: Model | Mapping[str, Any]) -> Model:
        if isinstance(spec, Model):
            return spec.model_copy(update={"api": self.api, "provider": self.provider})
        declared = {to_camel(key): value for key, value in spec.items()}
        defaults: dict[str, Any] = {
            "name": "Faux Model" if declared.get("id") == DEFAULT_MODEL_ID else declared.get("id", ""),
            "baseUrl": FAUX_BASE_URL,
            "reasoning": False,
            "input": ["text", "image"],
            "contextWindow": 128000,
            "maxTokens": 16384,
        }
        return Model.model_validate({**defaults, **declared, "api": self.api, "provider": self.provider})

    def model(self, id: str | None = None) -> Model:
        """A copy of the model `id` (default: the first model); `KeyError` if it is not one of ours."""
        for candidate in self.models:
            if id is None or candidate.id == id:
                return candidate.model_copy(deep=True)
        raise KeyError(f"Unknown faux model: {id}")

    # ----------------------------------------------------------------- script

    def set_responses(self, steps: Iterable[FauxStep]) -> None:
        """Replace the queue of scripted replies."""
        self._queue = deque(steps)

    def append_responses(self, steps: Iterable[FauxStep]) -> None:
        self._queue.extend(steps)

    @property
    def pending_count(self) -> int:
        """Scripted replies not yet served."""
        return len(self._queue)

    def reset(self) -> None:
        """Forget the queue, the call count and the per-session prompt caches."""
        self._queue.clear()
        self.state = FauxState()
        self._session_prompts.clear()

    # ----------------------------------------------------------------- streaming

    async def stream_fn(
        self,
        model: Model,
        context: Context,
        options: StreamOptions,
        out: AssistantMessageEventStream,
        api_key: str | None,
    ) -> None:
        """The `ApiStreamFn` of this provider; `api_key` is ignored."""
        self.state.call_count += 1
        if not self._queue:
            out.push(ErrorEvent(reason="error", error=self._failed(model, EMPTY_QUEUE_MESSAGE)))
            return
        step = self._queue.popleft()
        scripted = await self._resolve(step, context, options, model)
        signal = options.signal
        if signal is not None and signal.aborted:
            out.push(ErrorEvent(reason="aborted", error=self._failed(model, ABORTED_MESSAGE, aborted=True)))
            return
        prompt_usage = self._prompt_usage(context, options)
        partial = scripted.model_copy(
            deep=True,
            update={
                "content": [],
                "api": model.api,
                "provider": model.provider,
                "model": model.id,
                "usage": prompt_usage,
                "stop_reason": "pending",
                "error_message": None,
                "timestamp": now_ms(),
            },
        )
        self._update_usage(model, partial)
        out.push(StartEvent(partial=partial))
        try:
            for block in scripted.content:
                await self._stream_block(block, partial, out, signal)
        except _Aborted:
            partial.stop_reason = "aborted"
            partial.error_message = ABORTED_MESSAGE
            self._update_usage(model, partial)
            out.push(ErrorEvent(reason="aborted", error=partial))
            return
        self._update_usage(model, partial)
        final = scripted.stop_reason
        if final in ("error", "aborted"):
            partial.stop_reason = final
            partial.error_message = scripted.error_message or (
                ABORTED_MESSAGE if final == "aborted" else "Faux provider error"
            )
            out.push(ErrorEvent(reason=final, error=partial))
            return
        partial.stop_reason = "stop" if final == "pending" else final
        partial.error_message = scripted.error_message
        out.push(DoneEvent(reason=partial.stop_reason, message=partial))

    async def _resolve(
        self, step: FauxStep, context: Context, options: StreamOptions, model: Model
    ) -> AssistantMessage:
        if isinstance(step, AssistantMessage):
            return step
        produced = step(context, options, self.state, model)
        if inspect.isawaitable(produced):
            produced = await produced
        if not isinstance(produced, AssistantMessage):
            raise TypeError(f"faux step returned {type(produced).__name__}, expected AssistantMessage")
        return produced

    def _failed(self, model: Model, message: str, *, aborted: bool = False) -> AssistantMessage:
        return AssistantMessage(
            content=[],
            api=model.api,
            provider=model.provider,
            model=model.id,
            stop_reason="aborted" if aborted else "error",
            error_message=message,
            timestamp=now_ms(),
        )

    # ----------------------------------------------------------------- usage

    def _prompt_usage(self, context: Context, options: StreamOptions) -> Usage:
        """Prompt tokens: with a session and caching on, the prefix shared with the session's previous
        prompt is a cache read and the rest a cache write; otherwise all of it is plain input."""
        prompt = _serialize_context(context, self._json_memo)
        prompt_tokens = _tokens(len(prompt))
        session = options.session_id
        if not session or options.cache_retention == "none":
            return Usage(input=prompt_tokens)
        previous = self._session_prompts.get(session)
        self._session_prompts[session] = prompt
        cache_read = _common_prefix(previous, prompt) // CHARS_PER_TOKEN if previous is not None else 0
        return Usage(cache_read=cache_read, cache_write=max(0, prompt_tokens - cache_read))

    @staticmethod
    def _update_usage(model: Model, message: AssistantMessage) -> None:
        usage = message.usage
        usage.output = _tokens(sum(len(_block_text(block)) for block in message.content))
        usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
        calculate_cost(model, usage)

    # ----------------------------------------------------------------- chunking

    def _chunks(self, text: str) -> Iterator[str]:
        position = 0
        while position < len(text):
            size = self._rng.randint(*self.token_size) * CHARS_PER_TOKEN
            yield text[position : position + size]
            position += size

    async def _pace(self, chunk: str, signal: AbortSignal | None) -> None:
        """Let the consumer run (and pace by `tokens_per_second`), then stop if the signal fired."""
        if self.tokens_per_second:
            delay = _tokens(len(chunk)) / self.tokens_per_second
            if self._sleep is not None:
                await self._sleep(delay)
            else:
                try:
                    await sleep_abortable(delay, signal)
                except AbortError:
                    raise _Aborted from None
        else:
            await asyncio.sleep(0)
        if signal is not None and signal.aborted:
            raise _Aborted

    async def _stream_block(
        self,
        source: AssistantContent,
        partial: AssistantMessage,
        out: AssistantMessageEventStream,
        signal: AbortSignal | None,
    ) -> None:
        index = len(partial.content)
        if isinstance(source, TextContent):
            text = TextContent(text="", text_signature=source.text_signature)
            partial.content.append(text)
            out.push(TextStartEvent(content_index=index, partial=partial))
            for chunk in self._chunks(source.text):
                text.text += chunk
                out.push(TextDeltaEvent(content_index=index, delta=chunk, partial=partial))
                await self._pace(chunk, signal)
            out.push(TextEndEvent(content_index=index, content=text.text, partial=partial))
        elif isinstance(source, ThinkingContent):
            thinking = ThinkingContent(
                thinking="", thinking_signature=source.thinking_signature, redacted=source.redacted
            )
            partial.content.append(thinking)
            out.push(ThinkingStartEvent(content_index=index, partial=partial))
            for chunk in self._chunks(source.thinking):
                thinking.thinking += chunk
                out.push(ThinkingDeltaEvent(content_index=index, delta=chunk, partial=partial))
                await self._pace(chunk, signal)
            out.push(ThinkingEndEvent(content_index=index, content=thinking.thinking, partial=partial))
        else:
            call = ToolCall(
                id=source.id,
                name=source.name,
                arguments={},
                thought_signature=source.thought_signature,
                namespace=source.namespace,
            )
            partial.content.append(call)
            out.push(ToolCallStartEvent(content_index=index, partial=partial))
            buffer = ""
            for chunk in self._chunks(json.dumps(source.arguments)):
                buffer += chunk
                call.arguments = parse_partial_json(buffer)
                out.push(ToolCallDeltaEvent(content_index=index, delta=chunk, partial=partial))
                await self._pace(chunk, signal)
            call.arguments = copy.deepcopy(source.arguments)
            out.push(ToolCallEndEvent(content_index=index, tool_call=call, partial=partial))


def faux_provider() -> FauxProvider:
    """The faux provider currently serving api `faux` (created with defaults on first use)."""
    found = _instances.get(DEFAULT_API)
    return found if found is not None else FauxProvider()


async def stream_faux(
    model: Model,
    context: Context,
    options: StreamOptions,
    out: AssistantMessageEventStream,
    api_key: str | None,
) -> None:
    """The built-in `ApiStreamFn` of api `faux`: serves the request with the instance registered for
    `model.api`, falling back to the default instance."""
    provider = _instances.get(model.api) or faux_provider()
    await provider.stream_fn(model, context, options, out, api_key)


__all__ = [
    "EMPTY_QUEUE_MESSAGE",
    "FauxProvider",
    "FauxState",
    "FauxStep",
    "FauxStepFn",
    "faux_assistant_message",
    "faux_provider",
    "faux_text",
    "faux_thinking",
    "faux_tool_call",
    "stream_faux",
]
