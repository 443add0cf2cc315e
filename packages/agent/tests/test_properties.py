"""Event-stream invariants over random faux scripts, tool mixes, queues, budgets and abort points."""

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apex_agent.agent import Agent, AgentState
from apex_agent.events import AgentEvent
from apex_agent.tools import AgentToolResult, FunctionTool
from apex_agent.types import RunBudget, StopAfterTurnContext
from apex_ai.abort import AbortSignal
from apex_ai.providers.faux import FauxProvider, faux_assistant_message, faux_text, faux_thinking, faux_tool_call
from apex_ai.stream import stream_simple
from apex_ai.types import AssistantMessage, TextContent, ToolCall

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}}


async def _ok(call_id: str, params: dict[str, Any], signal: AbortSignal | None, on_update: Any) -> AgentToolResult:
    if on_update is not None:
        on_update(AgentToolResult(content=[TextContent(text="…")]))
    await asyncio.sleep(0)
    return AgentToolResult(content=[TextContent(text="ok")])


async def _raise(call_id: str, params: dict[str, Any], signal: AbortSignal | None, on_update: Any) -> AgentToolResult:
    raise RuntimeError("tool broke")


async def _stop(call_id: str, params: dict[str, Any], signal: AbortSignal | None, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text="stop")], terminate=True)


TOOLS = [
    FunctionTool("ok", "", SCHEMA, _ok),
    FunctionTool("raise", "", SCHEMA, _raise),
    FunctionTool("stop", "", SCHEMA, _stop),
    FunctionTool("serial", "", SCHEMA, _ok, execution_mode="sequential"),
]

tool_calls = st.lists(
    st.builds(
        lambda name, n: faux_tool_call(name, {"n": n}),
        st.sampled_from(["ok", "raise", "stop", "serial", "missing"]),
        st.one_of(st.integers(0, 9), st.integers(0, 9), st.just("bad")),
    ),
    min_size=1,
    max_size=3,
)
steps = st.one_of(
    st.builds(lambda t: faux_assistant_message(t), st.text(min_size=0, max_size=30)),
    st.builds(lambda t: faux_assistant_message([faux_thinking("hmm " * 3), faux_text(t)]), st.text(max_size=10)),
    st.builds(lambda calls: faux_assistant_message(calls, stop_reason="toolUse"), tool_calls),
    st.builds(lambda calls: faux_assistant_message(calls, stop_reason="length"), tool_calls),
    st.just(faux_assistant_message("fail", stop_reason="error", error_message="provider down")),
)

scenarios = st.fixed_dictionaries(
    {
        "script": st.lists(steps, min_size=0, max_size=6),
        "abort_at": st.one_of(st.none(), st.integers(0, 60)),
        "steer_at": st.one_of(st.none(), st.integers(0, 60)),
        "follow_at": st.one_of(st.none(), st.integers(0, 60)),
        "mode": st.sampled_from(["parallel", "sequential"]),
        "max_turns": st.one_of(st.none(), st.integers(1, 4)),
        "hook_fails_at_turn": st.one_of(st.none(), st.integers(1, 3)),
        "system_messages": st.booleans(),
        "final_text": st.integers(0, 3),
    }
)


async def run_scenario(scenario: dict[str, Any]) -> tuple[Agent, list[AgentEvent]]:
    faux = FauxProvider(token_size=(1, 3))
    # Mostly end the script with a plain reply (and spares for queued input); sometimes let it run dry.
    finals = [faux_assistant_message("final")] * scenario["final_text"]
    faux.set_responses([*scenario["script"], *finals])
    turns = 0

    def should_stop(ctx: StopAfterTurnContext) -> bool:
        nonlocal turns
        turns += 1
        if turns == scenario["hook_fails_at_turn"]:
            raise RuntimeError("hook broke")
        return False

    agent = Agent(
        AgentState(model=faux.model(), tools=TOOLS, system_prompt="sys"),
        stream_fn=stream_simple,
        tool_execution=scenario["mode"],
        run_budget=RunBudget(max_turns=scenario["max_turns"]),
        should_stop_after_turn=should_stop,
        system_messages=scenario["system_messages"],
    )
    events: list[AgentEvent] = []

    def listener(event: AgentEvent, signal: AbortSignal | None) -> None:
        index = len(events)
        events.append(event)
        if index == scenario["steer_at"]:
            agent.steer("steer")
        if index == scenario["follow_at"]:
            agent.follow_up("follow")
        if index == scenario["abort_at"]:
            agent.abort()

    agent.subscribe(listener)
    before = list(agent.state.messages)
    result = await agent.prompt("start")
    assert result == agent.state.last_stop_reason
    ended = [e.message for e in events if e.type == "message_end"]
    assert agent.state.messages == before + ended
    return agent, events


def check_invariants(events: list[AgentEvent]) -> None:
    kinds = [e.type for e in events]
    assert kinds[0] == "agent_start" and kinds.count("agent_start") == 1
    assert kinds[-1] == "agent_end" and kinds.count("agent_end") == 1

    open_message: Any = None
    turn_open = False
    running_tools: set[str] = set()
    last_assistant: AssistantMessage | None = None
    for event in events:
        if event.type == "message_start":
            assert open_message is None, "message_start inside another message"
            open_message = event.message
        elif event.type == "message_update":
            assert open_message is not None and open_message.role == "assistant"
        elif event.type == "message_end":
            assert open_message is not None and open_message.role == event.message.role
            open_message = None
            if isinstance(event.message, AssistantMessage):
                last_assistant = event.message
                assert event.message.stop_reason != "pending"
        elif event.type == "turn_start":
            assert not turn_open and open_message is None
            turn_open = True
        elif event.type == "turn_end":
            assert turn_open and open_message is None and not running_tools
            turn_open = False
            assert event.message is last_assistant
            calls = {b.id for b in last_assistant.content if isinstance(b, ToolCall)}
            assert {r.tool_call_id for r in event.tool_results} <= calls
        elif event.type == "tool_execution_start":
            assert event.tool_call_id not in running_tools
            running_tools.add(event.tool_call_id)
        elif event.type == "tool_execution_update":
            assert event.tool_call_id in running_tools
        elif event.type == "tool_execution_end":
            running_tools.remove(event.tool_call_id)
    assert open_message is None and not turn_open and not running_tools

    end = events[-1]
    assert end.type == "agent_end"
    if end.stop_reason == "budget-exhausted":
        assert end.budget is not None
    else:
        assert end.budget is None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scenarios)
def test_event_stream_invariants(scenario: dict[str, Any]) -> None:
    agent, events = asyncio.run(run_scenario(scenario))
    check_invariants(events)
    end = events[-1]
    assert end.type == "agent_end"
    if scenario["abort_at"] is not None and scenario["abort_at"] < len(events) - 1:
        assert end.stop_reason == "aborted"
    if end.stop_reason == "completed":
        assert agent.state.error_message is None
    assert not agent.state.is_streaming and not agent.state.pending_tool_calls
