"""A tool whose progress helper is cancelled while awaiting an update still finishes normally."""

import asyncio
from typing import Any

from apex_agent.agent import Agent, AgentState
from apex_agent.events import AgentEvent
from apex_agent.tools import AgentToolResult, FunctionTool, ToolUpdateCallback
from apex_ai.abort import AbortSignal
from apex_ai.providers.faux import FauxProvider, faux_assistant_message, faux_tool_call
from apex_ai.stream import stream_simple
from apex_ai.types import Model, TextContent, ToolResultMessage

SCHEMA = {"type": "object", "properties": {}}


async def test_cancelled_update_emission_does_not_fail_a_finished_tool(faux: FauxProvider, model: Model) -> None:
    listener_entered = asyncio.Event()
    update_cancelled: list[bool] = []

    async def run(
        call_id: str, params: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        assert on_update is not None

        async def pump() -> None:
            outcome = on_update(AgentToolResult(content=[TextContent(text="partial")]))
            assert outcome is not None
            await outcome  # unshielded on purpose: cancelling the pump cancels the emission

        pump_task = asyncio.ensure_future(pump())
        await listener_entered.wait()
        pump_task.cancel()  # what BashTool does when the command ends
        return AgentToolResult(content=[TextContent(text="finished")])

    async def slow_listener(event: AgentEvent, signal: AbortSignal | None) -> None:
        if event.type == "tool_execution_update":
            listener_entered.set()
            try:
                await asyncio.Event().wait()  # stays busy until cancelled
            except asyncio.CancelledError:
                update_cancelled.append(True)
                raise

    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("progress", {}, id="c1")], stop_reason="toolUse"),
            faux_assistant_message("done"),
        ]
    )
    tool = FunctionTool("progress", "reports progress", SCHEMA, run)
    agent = Agent(AgentState(model=model, tools=[tool]), stream_fn=stream_simple)
    ends: list[Any] = []
    agent.subscribe(slow_listener)
    agent.subscribe(lambda event, signal: ends.append(event) if event.type == "tool_execution_end" else None)

    assert await agent.prompt("go") == "completed"
    assert update_cancelled == [True]  # the race really happened
    results = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert [(r.content, r.is_error) for r in results] == [([TextContent(text="finished")], False)]
    assert [e.is_error for e in ends] == [False]
