"""The loop through the `Agent` and the faux provider: acceptance checks 1-3 and 7-11 of agent.md."""

import asyncio
from collections.abc import Mapping
from typing import Any

from apex_agent.agent import Agent, AgentState
from apex_agent.agent_loop import agent_loop
from apex_agent.events import to_wire
from apex_agent.tool_execution import LENGTH_STOP_TEXT
from apex_agent.tools import AgentToolResult, FunctionTool, ToolExecutionError, ToolUpdateCallback
from apex_agent.types import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentLoopConfig,
    BeforeToolCallContext,
    BeforeToolCallResult,
    NextTurnUpdate,
    RunBudget,
)
from apex_ai.abort import AbortSignal
from apex_ai.credentials import Credentials
from apex_ai.event_stream import AssistantMessageEventStream
from apex_ai.options import SimpleStreamOptions, StreamOptions
from apex_ai.providers.faux import FauxProvider, FauxState, faux_assistant_message, faux_text, faux_tool_call
from apex_ai.stream import stream_simple
from apex_ai.types import AssistantMessage, Context, Model, TextContent, ToolResultMessage, UserMessage

SCHEMA = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}


def text_tool(name: str, reply: str = "ok", calls: list[str] | None = None, **kwargs: Any) -> FunctionTool:
    async def run(call_id: str, params: dict[str, Any], signal: AbortSignal | None, on_update: Any) -> AgentToolResult:
        if calls is not None:
            calls.append(call_id)
        return AgentToolResult(content=[TextContent(text=reply)], details={"x": params.get("x")})

    return FunctionTool(name, f"the {name} tool", SCHEMA, run, **kwargs)


def make_agent(model: Model, *tools: FunctionTool, **kwargs: Any) -> Agent:
    return Agent(AgentState(model=model, tools=list(tools)), stream_fn=stream_simple, **kwargs)


def result_texts(messages: list[Any]) -> list[str]:
    return [m.content[0].text for m in messages if isinstance(m, ToolResultMessage)]


async def test_text_reply_event_sequence(faux: FauxProvider, model: Model, recorder: Any) -> None:
    faux.set_responses([faux_assistant_message("hi there, this is a longer reply")])
    agent = make_agent(model)
    agent.subscribe(recorder)
    assert await agent.prompt("hello") == "completed"
    assert recorder.compact() == [
        "agent_start",
        "turn_start",
        "message_start(user)",
        "message_end(user)",
        "message_start(assistant)",
        "message_update",
        "message_end(assistant)",
        "turn_end",
        "agent_end",
    ]
    assert len(recorder.of("message_update")) >= 3
    turn_end = recorder.of("turn_end")[0]
    assert turn_end.tool_results == []
    end = recorder.of("agent_end")[0]
    assert end.stop_reason == "completed" and end.budget is None
    assert [m.role for m in end.messages] == ["user", "assistant"]
    assert end.messages[1].content == [TextContent(text="hi there, this is a longer reply")]
    assert agent.state.messages == end.messages  # system_messages=True but no prompt/tools: no baseline
    assert not agent.state.is_streaming and agent.state.last_stop_reason == "completed"


async def test_tool_call_then_text(faux: FauxProvider, model: Model, recorder: Any) -> None:
    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("t", {"x": 1}, id="c1")], stop_reason="toolUse"),
            faux_assistant_message("done"),
        ]
    )
    calls: list[str] = []
    agent = make_agent(model, text_tool("t", calls=calls))
    agent.subscribe(recorder)
    assert await agent.prompt("go") == "completed"
    assert calls == ["c1"]
    assert recorder.compact() == [
        "agent_start",
        "turn_start",
        "message_start(user)",
        "message_end(user)",
        "message_start(assistant)",
        "message_update",
        "message_end(assistant)",
        "tool_execution_start",
        "tool_execution_end",
        "message_start(toolResult)",
        "message_end(toolResult)",
        "turn_end",
        "turn_start",
        "message_start(assistant)",
        "message_update",
        "message_end(assistant)",
        "turn_end",
        "agent_end",
    ]
    end = recorder.of("agent_end")[0]
    assert [m.role for m in end.messages] == ["user", "assistant", "toolResult", "assistant"]
    result = end.messages[2]
    assert result.tool_call_id == "c1" and result.details == {"x": 1} and not result.is_error
    assert recorder.of("turn_end")[0].tool_results == [result]
    start = recorder.of("tool_execution_start")[0]
    assert to_wire(start, for_stream=True) == {
        "type": "tool_execution_start",
        "toolCallId": "c1",
        "toolName": "t",
        "args": {"x": 1},
    }


async def test_parallel_end_events_follow_completion_order(faux: FauxProvider, model: Model, recorder: Any) -> None:
    b_done = asyncio.Event()

    async def slow(call_id: str, params: dict[str, Any], signal: AbortSignal | None, on_update: Any) -> AgentToolResult:
        await b_done.wait()
        return AgentToolResult(content=[TextContent(text="A")])

    async def fast(call_id: str, params: dict[str, Any], signal: AbortSignal | None, on_update: Any) -> AgentToolResult:
        b_done.set()
        return AgentToolResult(content=[TextContent(text="B")])

    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("a", {"x": 1}, id="A"), faux_tool_call("b", {"x": 2}, id="B")], stop_reason="toolUse"
            ),
            faux_assistant_message("done"),
        ]
    )
    agent = make_agent(model, FunctionTool("a", "", SCHEMA, slow), FunctionTool("b", "", SCHEMA, fast))
    agent.subscribe(recorder)
    await agent.prompt("go")
    assert [e.tool_call_id for e in recorder.of("tool_execution_end")] == ["B", "A"]
    assert [e.tool_call_id for e in recorder.of("tool_execution_start")] == ["A", "B"]
    assert [r.tool_call_id for r in recorder.of("turn_end")[0].tool_results] == ["A", "B"]
    results = [e.message.tool_call_id for e in recorder.of("message_end") if e.message.role == "toolResult"]
    assert results == ["A", "B"]


async def test_sequential_tool_makes_whole_batch_sequential(faux: FauxProvider, model: Model) -> None:
    log: list[str] = []

    def tracked(name: str, mode: Any = None) -> FunctionTool:
        async def run(
            call_id: str, params: dict[str, Any], signal: AbortSignal | None, on_update: Any
        ) -> AgentToolResult:
            log.append(f"start {name}")
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            log.append(f"end {name}")
            return AgentToolResult(content=[TextContent(text=name)])

        return FunctionTool(name, "", SCHEMA, run, execution_mode=mode)

    script = [
        faux_assistant_message([faux_tool_call("a", {"x": 1}), faux_tool_call("b", {"x": 2})], stop_reason="toolUse"),
        faux_assistant_message("done"),
    ]
    faux.set_responses(script)
    await make_agent(model, tracked("a", "sequential"), tracked("b")).prompt("go")
    assert log == ["start a", "end a", "start b", "end b"]
    log.clear()
    faux.set_responses(script)
    await make_agent(model, tracked("a"), tracked("b")).prompt("go")
    assert log == ["start a", "start b", "end a", "end b"]


async def test_length_stop_never_executes_tools(faux: FauxProvider, model: Model, recorder: Any) -> None:
    calls: list[str] = []
    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("t", {"x": 1})], stop_reason="length"),
            faux_assistant_message("retried"),
        ]
    )
    agent = make_agent(model, text_tool("t", calls=calls))
    agent.subscribe(recorder)
    assert await agent.prompt("go") == "completed"
    assert calls == []
    assert recorder.types.count("tool_execution_start") == 1 and recorder.types.count("tool_execution_end") == 1
    result = recorder.of("turn_end")[0].tool_results[0]
    assert result.is_error
    assert result.content[0].text == LENGTH_STOP_TEXT.format(name="t")
    assert result.content[0].text.startswith('Tool call "t" was not executed: the response hit the output token limit')
    assert faux.state.call_count == 2


async def test_tool_failures_become_error_results(faux: FauxProvider, model: Model) -> None:
    async def raising(
        call_id: str, params: dict[str, Any], signal: AbortSignal | None, on_update: Any
    ) -> AgentToolResult:
        raise ToolExecutionError("bad", {"k": 1})

    async def crashing(
        call_id: str, params: dict[str, Any], signal: AbortSignal | None, on_update: Any
    ) -> AgentToolResult:
        raise KeyError("oops")

    blocked_calls: list[str] = []

    def before(ctx: BeforeToolCallContext, signal: AbortSignal | None) -> BeforeToolCallResult | None:
        if ctx.tool_call.name == "blocked":
            return BeforeToolCallResult(block=True, reason="no")
        return None

    def after(ctx: AfterToolCallContext, signal: AbortSignal | None) -> AfterToolCallResult | None:
        if ctx.tool_call.name == "flip":
            return AfterToolCallResult(is_error=True)
        return None

    faux.set_responses(
        [
            faux_assistant_message(
                [
                    faux_tool_call("nope", {}),
                    faux_tool_call("t", {"x": "not a number"}),
                    faux_tool_call("raise", {"x": 1}),
                    faux_tool_call("crash", {"x": 1}),
                    faux_tool_call("blocked", {"x": 1}),
                    faux_tool_call("flip", {"x": 1}),
                ],
                stop_reason="toolUse",
            ),
            faux_assistant_message("done"),
        ]
    )
    agent = make_agent(
        model,
        text_tool("t"),
        FunctionTool("raise", "", SCHEMA, raising),
        FunctionTool("crash", "", SCHEMA, crashing),
        text_tool("blocked", calls=blocked_calls),
        text_tool("flip", reply="kept"),
        before_tool_call=before,
        after_tool_call=after,
    )
    assert await agent.prompt("go") == "completed"
    results = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert [r.is_error for r in results] == [True] * 6
    texts = result_texts(results)
    assert texts[0] == "Tool nope not found"
    assert texts[1].startswith('Validation failed for tool "t":\n  - x: ')
    assert texts[2] == "bad" and results[2].details == {"k": 1}
    assert texts[3] == "'oops'" and results[3].details == {}
    assert texts[4] == "no" and blocked_calls == []
    assert texts[5] == "kept" and results[5].details == {"x": 1}
    # The loop went on after the failures: the model got the results and answered.
    assert isinstance(agent.state.messages[-1], AssistantMessage) and agent.state.messages[-1].stop_reason == "stop"


async def test_terminate_ends_run_only_when_every_result_terminates(faux: FauxProvider, model: Model) -> None:
    async def final(
        call_id: str, params: dict[str, Any], signal: AbortSignal | None, on_update: Any
    ) -> AgentToolResult:
        return AgentToolResult(content=[TextContent(text="bye")], terminate=True)

    tools = (FunctionTool("end", "", SCHEMA, final), text_tool("t"))
    faux.set_responses([faux_assistant_message([faux_tool_call("end", {"x": 1})], stop_reason="toolUse")])
    agent = make_agent(model, *tools)
    assert await agent.prompt("go") == "completed"
    assert faux.state.call_count == 1 and faux.pending_count == 0
    assert agent.state.messages[-1].role == "toolResult"
    assert "terminate" not in agent.registry.dump(agent.state.messages[-1])

    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("end", {"x": 1}), faux_tool_call("t", {"x": 1})], stop_reason="toolUse"
            ),
            faux_assistant_message("went on"),
        ]
    )
    agent = make_agent(model, *tools)
    await agent.prompt("go")
    assert faux.state.call_count == 3 and agent.state.messages[-1].role == "assistant"


async def test_budget_max_turns(faux: FauxProvider, model: Model, recorder: Any) -> None:
    def always_tool(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        return faux_assistant_message([faux_tool_call("t", {"x": state.call_count})], stop_reason="toolUse")

    faux.set_responses([always_tool] * 5)
    agent = make_agent(model, text_tool("t"), run_budget=RunBudget(max_turns=2))
    agent.subscribe(recorder)
    assert await agent.prompt("go") == "budget-exhausted"
    assert faux.state.call_count == 2
    end = recorder.of("agent_end")[0]
    assert end.stop_reason == "budget-exhausted" and end.budget.limit == "maxTurns"
    assert end.budget.usage.turns == 2 and end.budget.usage.tool_calls == 2
    assert to_wire(end, for_stream=True)["budget"]["usage"]["toolCalls"] == 2
    assert RunBudget(max_turns=2).to_wire() == {"maxTurns": 2}

    faux.set_responses([faux_assistant_message("plain")])
    agent = make_agent(model, run_budget=RunBudget(max_turns=1))
    assert await agent.prompt("go") == "completed"


async def test_budget_tool_calls_keeps_queue(faux: FauxProvider, model: Model) -> None:
    faux.set_responses([faux_assistant_message([faux_tool_call("t", {"x": 1})], stop_reason="toolUse")] * 3)
    agent = make_agent(model, text_tool("t"), run_budget=RunBudget(max_tool_calls=1))
    agent.follow_up("later")
    # The first poll drains nothing from follow-up; the tool batch then needs another request.
    assert await agent.prompt("go") == "budget-exhausted"
    assert faux.state.call_count == 1
    assert agent.has_queued_messages()


async def test_provider_error_ends_run_with_error(faux: FauxProvider, model: Model, recorder: Any) -> None:
    faux.set_responses([faux_assistant_message([faux_text("part")], stop_reason="error", error_message="boom")])
    agent = make_agent(model)
    agent.subscribe(recorder)
    assert await agent.prompt("go") == "error"
    assert recorder.of("turn_end")[0].tool_results == []
    assert recorder.of("agent_end")[0].stop_reason == "error"
    assert agent.state.error_message == "boom"

    # An empty script fails before `start`: message_start and message_end arrive together.
    recorder.events.clear()
    assert await agent.prompt("again") == "error"
    assert recorder.compact()[-4:] == ["message_start(assistant)", "message_end(assistant)", "turn_end", "agent_end"]
    assert agent.state.error_message == "No more faux responses queued"


async def test_convert_to_llm_failure_is_a_run_failure(faux: FauxProvider, model: Model, recorder: Any) -> None:
    def broken(messages: list[Any]) -> list[Any]:
        raise RuntimeError("cannot convert")

    agent = make_agent(model, convert_to_llm=broken)
    agent.subscribe(recorder)
    assert await agent.prompt("go") == "error"
    assert recorder.compact()[-4:] == ["message_start(assistant)", "message_end(assistant)", "turn_end", "agent_end"]
    end = recorder.of("agent_end")[0]
    assert end.stop_reason == "error"
    assert [m.error_message for m in end.messages] == ["cannot convert"]
    assert end.messages[0].content == [TextContent(text="")]
    assert agent.state.error_message == "cannot convert"
    assert recorder.types.count("agent_end") == 1


async def test_low_level_agent_loop_stream(faux: FauxProvider, model: Model) -> None:
    faux.set_responses(
        [faux_assistant_message([faux_tool_call("t", {"x": 3})], stop_reason="toolUse"), faux_assistant_message("ok")]
    )
    updates: list[str] = []

    async def updating(
        call_id: str, params: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        assert on_update is not None
        on_update(AgentToolResult(content=[TextContent(text="half")]))
        updates.append("sent")
        return AgentToolResult(content=[TextContent(text="full")])

    context = AgentContext(system_prompt="be brief", tools=[FunctionTool("t", "", SCHEMA, updating)])
    config = AgentLoopConfig(model=model)
    prompt = UserMessage(content="hi", timestamp=1)
    stream = agent_loop([prompt], context, config, stream_fn=stream_simple)
    kinds = [event.type async for event in stream]
    messages = await stream.result()
    assert kinds[0] == "agent_start" and kinds[-1] == "agent_end"
    assert kinds.index("tool_execution_update") < kinds.index("tool_execution_end")
    assert [m.role for m in messages] == ["user", "assistant", "toolResult", "assistant"]
    assert context.messages == messages
    assert updates == ["sent"]


async def test_hooks_shape_requests(faux: FauxProvider, model: Model) -> None:
    other = faux.model().model_copy(update={"id": "faux-2"})
    seen: list[tuple[str, Any, list[str]]] = []

    def capture(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        roles = [m.role for m in context.messages]
        seen.append((model.id, (options.api_key, getattr(options, "reasoning", None)), roles))
        if state.call_count == 1:
            return faux_assistant_message([faux_tool_call("t", {"x": 1})], stop_reason="toolUse")
        return faux_assistant_message("done")

    def transform(messages: list[Any], signal: AbortSignal | None) -> list[Any]:
        assert signal is not None and not signal.aborted
        return messages[-2:]  # a stand-in for pruning: only the last two messages are sent

    def prepare(turn: Any) -> NextTurnUpdate:
        return NextTurnUpdate(model=other, thinking_level="high")

    faux.set_responses([capture, capture])
    agent = make_agent(
        model,
        text_tool("t"),
        transform_context=transform,
        get_api_key=lambda provider: f"key-{provider}",
        prepare_next_turn=prepare,
        system_messages=False,
    )
    agent.state.thinking_level = "low"
    assert await agent.prompt("go") == "completed"
    assert seen[0] == ("faux-1", ("key-faux", "low"), ["user"])
    assert seen[1] == ("faux-2", ("key-faux", "high"), ["assistant", "toolResult"])
    assert [m.role for m in agent.state.messages] == ["user", "assistant", "toolResult", "assistant"]


class TeamCredentials(Credentials):
    def request_headers(self, provider: str, api_key: str | None) -> Mapping[str, str | None]:
        return {"X-Team": provider}


async def test_credentials_are_applied_before_the_stream_function(faux: FauxProvider, model: Model) -> None:
    faux.set_responses([faux_assistant_message("ok")])
    seen: list[SimpleStreamOptions] = []

    def stream_fn(model: Model, context: Context, options: SimpleStreamOptions) -> AssistantMessageEventStream:
        seen.append(options)
        return stream_simple(model, context, options)

    agent = Agent(AgentState(model=model), stream_fn=stream_fn, credentials=TeamCredentials())
    assert await agent.prompt("go") == "completed"
    assert seen[0].headers == {"X-Team": model.provider} and seen[0].credentials_applied


async def test_should_stop_after_turn_skips_queues(faux: FauxProvider, model: Model) -> None:
    faux.set_responses(
        [faux_assistant_message([faux_tool_call("t", {"x": 1})], stop_reason="toolUse"), faux_assistant_message("no")]
    )
    contexts: list[Any] = []

    def stop(ctx: Any) -> bool:
        contexts.append(ctx)
        return True

    agent = make_agent(model, text_tool("t"), should_stop_after_turn=stop)
    agent.follow_up("later")
    assert await agent.prompt("go") == "completed"
    assert faux.state.call_count == 1 and agent.has_queued_messages()
    ctx = contexts[0]
    assert [m.role for m in ctx.new_messages] == ["user", "assistant", "toolResult"]
    assert ctx.message.stop_reason == "toolUse" and len(ctx.tool_results) == 1


async def test_abort_in_sequential_batch_leaves_later_calls_unanswered(faux: FauxProvider, model: Model) -> None:
    calls: list[str] = []
    agent: Agent

    async def aborting(
        call_id: str, params: dict[str, Any], signal: AbortSignal | None, on_update: Any
    ) -> AgentToolResult:
        agent.abort()
        assert signal is not None and signal.aborted
        return AgentToolResult(content=[TextContent(text="stopped")])

    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("a", {"x": 1}, id="A"), faux_tool_call("t", {"x": 2}, id="B")], stop_reason="toolUse"
            )
        ]
    )
    agent = make_agent(
        model, FunctionTool("a", "", SCHEMA, aborting), text_tool("t", calls=calls), tool_execution="sequential"
    )
    assert await agent.prompt("go") == "aborted"
    assert calls == []
    results = [m.tool_call_id for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert results == ["A"]
    last = agent.state.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "aborted"


async def test_budget_carries_across_continuation_runs(faux: FauxProvider, model: Model) -> None:
    from apex_agent.types import BudgetUsage

    tool_reply = faux_assistant_message([faux_tool_call("t", {"x": 1})], stop_reason="toolUse")
    faux.set_responses([tool_reply, faux_assistant_message("boom", stop_reason="error", error_message="overloaded")])
    agent = make_agent(model, text_tool("t"), run_budget=RunBudget(max_turns=3))
    agent.budget_usage = BudgetUsage()
    assert await agent.prompt("go") == "error"
    assert agent.budget_usage.turns == 2 and agent.budget_usage.tool_calls == 1
    # The host retries the same prompt: one turn of the budget is left, so the retry's tool batch ends it.
    agent.state.messages = agent.state.messages[:-1]
    faux.set_responses([tool_reply, faux_assistant_message("never")])
    assert await agent.continue_() == "budget-exhausted"
    assert faux.pending_count == 1 and agent.budget_usage.turns == 3


async def test_turn_tools_are_asked_before_each_turn_start(faux: FauxProvider, model: Model) -> None:
    """`get_turn_tools` decides each turn's tools; its request declares them as they were when the turn started,
    even if a tool changes in place while the turn's listeners run."""
    late, first = text_tool("late"), text_tool("t")
    order: list[str] = []
    declared: list[list[str]] = []

    def capture(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        declared.append([f"{t.name}:{t.description}" for t in context.tools or []])
        if state.call_count == 1:
            return faux_assistant_message([faux_tool_call("t", {"x": 1})], stop_reason="toolUse")
        return faux_assistant_message("done")

    def turn_tools(current: list[Any]) -> list[Any] | None:
        order.append("asked")
        return [*current, late] if order.count("asked") == 2 else None

    def listener(event: Any, signal: AbortSignal | None) -> None:
        order.append(event.type)
        if event.type == "turn_start" and order.count("turn_start") == 2:
            late.description = "changed after its turn started"  # declared from the next turn on

    faux.set_responses([capture, capture])
    agent = make_agent(model, first, get_turn_tools=turn_tools, system_messages=False)
    agent.subscribe(listener)
    assert await agent.prompt("go") == "completed"
    starts = [i for i, kind in enumerate(order) if kind == "turn_start"]
    assert len(starts) == 2 and all(order[i - 1] == "asked" for i in starts)
    assert declared == [["t:the t tool"], ["t:the t tool", "late:the late tool"]]
    assert [t.name for t in agent.state.tools] == ["t"]  # the host's list is its own business
