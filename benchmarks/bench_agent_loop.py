"""Agent loop overhead: µs per turn (faux model + no-op tool) and µs per streamed delta event.

Each figure is shown next to the cost of the faux stream alone (consumed without the loop), so the
difference is what the loop adds: event objects, transcript bookkeeping, tool dispatch, listeners.
Turns are measured as many short runs (tool call, then a text reply) with the transcript reset in
between: the faux provider serializes the whole context per request to estimate usage, which would
otherwise make a long single run quadratic and measure the faux provider instead of the loop.
Run with the workspace's python: `uv run python benchmarks/bench_agent_loop.py`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from apex_agent.agent import Agent, AgentState
from apex_agent.events import AgentEvent
from apex_agent.tools import AgentToolResult, FunctionTool
from apex_ai.abort import AbortSignal
from apex_ai.providers.faux import FauxProvider, faux_assistant_message, faux_tool_call
from apex_ai.stream import stream_simple
from apex_ai.types import Context, TextContent, UserMessage

RUNS = 150
TURNS = 2 * RUNS
DELTAS = 4000
REPEATS = 5


async def _noop(call_id: str, params: dict[str, Any], signal: AbortSignal | None, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text="ok")])


NOOP_TOOL = FunctionTool("noop", "does nothing", {"type": "object", "properties": {}}, _noop)


def _listener(event: AgentEvent, signal: AbortSignal | None) -> None:
    return None


async def _agent_runs(faux: FauxProvider, script: list[Any], runs: int) -> float:
    """Seconds for `runs` prompts, each answered by `script` (transcript reset between runs)."""
    faux.set_responses(script * runs)
    agent = Agent(AgentState(model=faux.model(), tools=[NOOP_TOOL]), stream_fn=stream_simple, system_messages=False)
    agent.subscribe(_listener)
    start = time.perf_counter()
    for _ in range(runs):
        await agent.prompt("go")
        agent.reset()
    return time.perf_counter() - start


async def _raw_streams(faux: FauxProvider, script: list[Any], runs: int) -> float:
    """The same replies consumed straight from `stream_simple`, one request per scripted reply."""
    faux.set_responses(script * runs)
    model = faux.model()
    context = Context(messages=[UserMessage(content="go", timestamp=0)])
    start = time.perf_counter()
    for _ in range(runs * len(script)):
        async for _event in stream_simple(model, context):
            pass
    return time.perf_counter() - start


def _best(samples: list[float]) -> float:
    return min(samples)


async def main() -> None:
    faux = FauxProvider(token_size=(1, 1))
    turn_script = [
        faux_assistant_message([faux_tool_call("noop", {}, id="call_1")], stop_reason="toolUse"),
        faux_assistant_message("done"),
    ]
    delta_script = [faux_assistant_message("abcd" * DELTAS)]  # token_size 1 => one 4-char delta per event

    loop_turns = _best([await _agent_runs(faux, turn_script, RUNS) for _ in range(REPEATS)])
    raw_turns = _best([await _raw_streams(faux, turn_script, RUNS) for _ in range(REPEATS)])
    loop_deltas = _best([await _agent_runs(faux, delta_script, 1) for _ in range(REPEATS)])
    raw_deltas = _best([await _raw_streams(faux, delta_script, 1) for _ in range(REPEATS)])

    per_turn, raw_per_turn = loop_turns / TURNS * 1e6, raw_turns / TURNS * 1e6
    per_delta, raw_per_delta = loop_deltas / DELTAS * 1e6, raw_deltas / DELTAS * 1e6
    print(f"turns (faux + no-op tool, {RUNS} runs of 2 turns, best of {REPEATS}):")
    print(f"  agent loop        {per_turn:8.1f} µs/turn")
    print(f"  faux stream alone {raw_per_turn:8.1f} µs/turn")
    print(f"  loop overhead     {per_turn - raw_per_turn:8.1f} µs/turn")
    print(f"streamed deltas ({DELTAS} text deltas in one reply, best of {REPEATS}):")
    print(f"  agent loop        {per_delta:8.2f} µs/delta")
    print(f"  faux stream alone {raw_per_delta:8.2f} µs/delta")
    print(f"  loop overhead     {per_delta - raw_per_delta:8.2f} µs/delta")


if __name__ == "__main__":
    asyncio.run(main())
