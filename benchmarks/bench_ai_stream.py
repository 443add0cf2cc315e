"""Decode throughput of the streaming adapters: SSE events in, assistant events out.

For each API a 10,000-event SSE stream (made by the scripted model server's encoders, as it would send
it) is replayed through the real SDK and our adapter with `httpx2.MockTransport`, in 16 KiB reads like a
socket would deliver them; the same Anthropic stream is also read over 127.0.0.1 from the scripted server.
The faux provider is measured streaming 10,000 deltas. Figures are the median of a few runs, after one
warm-up run that pays the SDK import.

Run: `uv run python benchmarks/bench_ai_stream.py`
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx2

from apex_ai.options import StreamOptions
from apex_ai.providers.faux import FauxProvider, faux_assistant_message, faux_text
from apex_ai.stream import stream
from apex_ai.testing._scripted_sse import ENCODERS
from apex_ai.testing._scripted_wire import Api, RequestInfo, parse_reply
from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_ai.types import Context, Model, UserMessage

EVENTS = 10_000
RUNS = 5
READ_SIZE = 16 * 1024
# Frames around the text deltas in each API's stream (see `apex_ai.testing._scripted_sse`).
_OVERHEAD: dict[Api, int] = {"anthropic": 6, "chat": 4, "responses": 8}
_API_NAMES: dict[Api, str] = {
    "anthropic": "anthropic-messages",
    "chat": "openai-completions",
    "responses": "openai-responses",
}


@dataclass
class Figure:
    label: str
    seconds: float
    wire_events: int
    emitted: int

    def line(self) -> str:
        rate = self.wire_events / self.seconds
        per = self.seconds / self.wire_events * 1e6
        return (
            f"{self.label:<44} {rate:>10,.0f} events/s {per:>8.1f} µs/event "
            f"({self.wire_events:,} in, {self.emitted:,} out, {self.seconds * 1000:,.0f} ms)"
        )


def recorded_stream(api: Api) -> bytes:
    """The SSE body of a reply whose text streams as exactly `EVENTS` frames in all."""
    words = EVENTS - _OVERHEAD[api]
    reply = parse_reply({"text": " ".join(f"w{i}" for i in range(words)), "usage": {"input": 10, "output": words}}, 0)
    frames = ENCODERS[api](reply, RequestInfo(seq=1, model="bench-model", created=0, include_usage=True))
    assert len(frames) == EVENTS, (api, len(frames))
    return b"".join(frames)


class _Reads(httpx2.AsyncByteStream):
    def __init__(self, body: bytes) -> None:
        self.body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self.body), READ_SIZE):
            yield self.body[start : start + READ_SIZE]


def _model(api: Api, base_url: str) -> Model:
    return Model(id="bench-model", api=_API_NAMES[api], provider="bench", base_url=base_url, max_tokens=8192)


def _context() -> Context:
    return Context(system_prompt="Be brief.", messages=[UserMessage(content="Go", timestamp=1)])


async def _drain(model: Model, options: StreamOptions) -> tuple[float, int, str]:
    start = time.perf_counter()
    emitted = 0
    last = ""
    async for event in stream(model, _context(), options):
        emitted += 1
        last = event.type
    return time.perf_counter() - start, emitted, last


async def bench_mock_transport(api: Api) -> Figure:
    body = recorded_stream(api)

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=_Reads(body))

    base_url = "http://bench.invalid" + ("" if api == "anthropic" else "/v1")
    times: list[float] = []
    emitted = 0
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as client:
        options = StreamOptions(api_key="bench-key", http_client=client)
        for run in range(RUNS + 1):
            seconds, emitted, last = await _drain(_model(api, base_url), options)
            assert last == "done", last
            if run:  # run 0 pays the SDK import and first-use costs
                times.append(seconds)
    return Figure(f"{_API_NAMES[api]} (SDK + adapter, MockTransport)", statistics.median(times), EVENTS, emitted)


async def bench_loopback_anthropic() -> Figure:
    words = EVENTS - _OVERHEAD["anthropic"]
    scenario = [
        {"text": " ".join(f"w{i}" for i in range(words)), "usage": {"input": 10, "output": words}, "repeat": True}
    ]
    times: list[float] = []
    emitted = 0
    with ScriptedModelServer(scenario) as server:
        options = StreamOptions(api_key="bench-key")
        for run in range(RUNS + 1):
            seconds, emitted, last = await _drain(_model("anthropic", server.anthropic_base_url), options)
            assert last == "done", last
            if run:
                times.append(seconds)
    return Figure("anthropic-messages (SDK + adapter, 127.0.0.1)", statistics.median(times), EVENTS, emitted)


async def bench_faux() -> Figure:
    provider = FauxProvider(api="faux-bench", provider="faux-bench", token_size=(1, 1))
    # One token (4 characters) per delta: EVENTS deltas.
    text = "abcd" * EVENTS
    times: list[float] = []
    emitted = 0
    for run in range(RUNS + 1):
        provider.set_responses([faux_assistant_message([faux_text(text)])])
        seconds, emitted, last = await _drain(provider.model(), StreamOptions())
        assert last == "done", last
        if run:
            times.append(seconds)
    return Figure("faux provider (10k text deltas)", statistics.median(times), EVENTS, emitted)


async def main() -> None:
    print(f"{EVENTS:,} events per stream, median of {RUNS} runs after a warm-up run")
    for api in ("anthropic", "chat", "responses"):
        print((await bench_mock_transport(api)).line(), flush=True)
    print((await bench_loopback_anthropic()).line(), flush=True)
    print((await bench_faux()).line(), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
