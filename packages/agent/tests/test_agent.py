"""The `Agent` class: queues, abort, system deltas, misuse and listeners (acceptance checks 4-6, 12-15)."""

import asyncio
import logging
from typing import Any

import pytest

from apex_agent.agent import BUSY_TEXT, Agent, AgentState
from apex_agent.events import AgentEvent
from apex_agent.messages import UnknownMessage, default_registry
from apex_agent.tools import AgentToolResult, FunctionTool
from apex_ai.abort import AbortSignal
from apex_ai.options import StreamOptions
from apex_ai.providers.faux import FauxProvider, FauxState, faux_assistant_message, faux_tool_call
from apex_ai.stream import stream_simple
from apex_ai.transcript import content_text, current_system_message, render_system_prompt, system_prompt_and_tools
from apex_ai.types import (
    AssistantMessage,
    Context,
    Model,
    SystemMessage,
    TextContent,
    Tool,
    ToolReference,
    ToolResultMessage,
    UserMessage,
)

SCHEMA = {"type": "object", "properties": {}}


def tool(name: str, fn: Any = None) -> FunctionTool:
    async def run(call_id: str, params: dict[str, Any], signal: AbortSignal | None, on_update: Any) -> AgentToolResult:
        if fn is not None:
            await fn()
        return AgentToolResult(content=[TextContent(text=f"{name} ok")])

    return FunctionTool(name, f"{name} tool", SCHEMA, run)


def make_agent(model: Model, *tools: FunctionTool, **kwargs: Any) -> Agent:
    state = AgentState(model=model, tools=list(tools), system_prompt=kwargs.pop("system_prompt", ""))
    return Agent(state, stream_fn=stream_simple, **kwargs)


class Capture:
    """A faux step that records the request context and answers with a fixed reply."""

    def __init__(self, reply: AssistantMessage, seen: list[Context]) -> None:
        self.reply, self.seen = reply, seen

    def __call__(self, context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        self.seen.append(context)
        return self.reply


def user_texts(context: Context) -> list[str]:
    users = [m for m in context.messages if isinstance(m, UserMessage)]
    return [u.content if isinstance(u.content, str) else content_text(u.content) for u in users]


async def test_steering_enters_after_all_tool_results(faux: FauxProvider, model: Model, recorder: Any) -> None:
    seen: list[Context] = []
    agent: Agent

    async def steer_now() -> None:
        agent.steer("change course")

    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("one", id="c1"), faux_tool_call("two", id="c2")], stop_reason="toolUse"
            ),
            Capture(faux_assistant_message("ok"), seen),
        ]
    )
    agent = make_agent(model, tool("one", steer_now), tool("two"), tool_execution="sequential")
    agent.subscribe(recorder)
    await agent.prompt("start")
    compact = recorder.compact()
    first_turn_end = compact.index("turn_end")
    assert compact[first_turn_end - 2 : first_turn_end + 5] == [
        "message_start(toolResult)",
        "message_end(toolResult)",
        "turn_end",
        "turn_start",
        "message_start(user)",
        "message_end(user)",
        "message_start(assistant)",
    ]
    results = [e.message.tool_call_id for e in recorder.of("message_end") if e.message.role == "toolResult"]
    assert results == ["c1", "c2"]
    assert user_texts(seen[0]) == ["start", "change course"]
    assert not agent.has_queued_messages()


async def test_follow_ups_wait_for_final_reply_one_at_a_time(faux: FauxProvider, model: Model, recorder: Any) -> None:
    agent: Agent
    seen: list[Context] = []

    async def queue_two() -> None:
        agent.follow_up("first extra")
        agent.follow_up("second extra")

    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("q")], stop_reason="toolUse"),
            Capture(faux_assistant_message("final"), seen),
            Capture(faux_assistant_message("answer one"), seen),
            Capture(faux_assistant_message("answer two"), seen),
        ]
    )
    agent = make_agent(model, tool("q", queue_two))
    agent.subscribe(recorder)
    assert await agent.prompt("go") == "completed"
    assert faux.state.call_count == 4
    assert [user_texts(c) for c in seen] == [
        ["go"],
        ["go", "first extra"],
        ["go", "first extra", "second extra"],
    ]
    assert recorder.types.count("turn_start") == 4
    roles = [m.role for m in agent.state.messages]
    assert roles == ["system", "user", "assistant", "toolResult", "assistant", "user", "assistant", "user", "assistant"]


async def test_follow_up_mode_all_takes_whole_queue(faux: FauxProvider, model: Model) -> None:
    agent: Agent

    async def queue_two() -> None:
        agent.follow_up("a")
        agent.follow_up("b")

    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("q")], stop_reason="toolUse"),
            faux_assistant_message("x"),
            faux_assistant_message("y"),
        ]
    )
    agent = make_agent(model, tool("q", queue_two), follow_up_mode="all")
    await agent.prompt("go")
    assert faux.state.call_count == 3


async def test_abort_while_streaming_returns_queues(faux: FauxProvider, model: Model, recorder: Any) -> None:
    faux.set_responses([faux_assistant_message("a long reply " * 20)])
    agent = make_agent(model)
    returned: list[Any] = []

    def listener(event: AgentEvent, signal: AbortSignal | None) -> None:
        if event.type == "message_start" and event.message.role == "assistant":
            agent.steer("s")
            agent.follow_up("f")
        if event.type == "message_update" and len(returned) == 0 and event.assistant_message_event.type == "text_delta":
            returned.append(agent.abort())

    agent.subscribe(listener)
    agent.subscribe(recorder)
    assert await agent.prompt("go") == "aborted"
    final = agent.state.messages[-1]
    assert isinstance(final, AssistantMessage) and final.stop_reason == "aborted"
    assert final.content and 0 < len(final.content[0].text) < len("a long reply " * 20)  # type: ignore[union-attr]
    assert recorder.of("agent_end")[0].stop_reason == "aborted"
    queued = returned[0]
    assert [m.content[0].text for m in queued.steering] == ["s"]
    assert [m.content[0].text for m in queued.follow_up] == ["f"]
    assert not agent.has_queued_messages()
    assert agent.abort().steering == []  # idle: no-op


async def test_abort_after_tool_batch_closes_turn_without_request(
    faux: FauxProvider, model: Model, recorder: Any
) -> None:
    agent: Agent

    async def abort_now() -> None:
        agent.abort()

    faux.set_responses(
        [faux_assistant_message([faux_tool_call("stop")], stop_reason="toolUse"), faux_assistant_message("never")]
    )
    agent = make_agent(model, tool("stop", abort_now))
    agent.subscribe(recorder)
    assert await agent.prompt("go") == "aborted"
    assert faux.state.call_count == 1
    assert recorder.compact()[-6:] == [
        "turn_end",
        "turn_start",
        "message_start(assistant)",
        "message_end(assistant)",
        "turn_end",
        "agent_end",
    ]
    closing = agent.state.messages[-1]
    assert isinstance(closing, AssistantMessage)
    assert closing.stop_reason == "aborted" and closing.error_message == "Request was aborted" and closing.content == []
    assert (closing.api, closing.provider, closing.model) == (model.api, model.provider, model.id)


def test_system_replay() -> None:
    a, b, c, d = (Tool(name=n, description=n) for n in "abcd")
    s0 = SystemMessage(content="A", sections={"x": "1", "y": "2"}, tools_added=[a, b])
    s1 = SystemMessage(sections={"x": None}, tools_removed=[ToolReference(name="a")], tools_added=[c])
    s2 = SystemMessage(content="B")
    transcript: list[Any] = [s0, UserMessage(content="u", timestamp=1), s1, s2]
    current = current_system_message(transcript)
    assert current is not None
    assert current.content == "A\n\nB" and current.sections == {"y": "2"}
    assert [t.name for t in current.tools_added or []] == ["b", "c"]
    s3 = SystemMessage(replace=True, content="Z", tools_added=[d])
    current = current_system_message([*transcript, s3])
    assert current is not None and current.content == "Z" and current.sections is None
    assert [t.name for t in current.tools_added or []] == ["d"]
    assert render_system_prompt(s0) == "A\n\n1\n\n2"


async def test_agent_requests_use_replayed_prompt(faux: FauxProvider, model: Model) -> None:
    seen: list[Context] = []
    faux.set_responses([Capture(faux_assistant_message("ok"), seen)])
    agent = make_agent(model, tool("a"), system_prompt="base")
    assert isinstance(agent.state.messages[0], SystemMessage)  # the initial baseline
    agent.update_system(sections={"rules": "be kind"})
    agent.set_system_prompt("fresh")
    agent.update_system(content="more")
    await agent.wait_for_idle()
    await agent.prompt("hi")
    prompt, tools = system_prompt_and_tools(seen[0])
    assert prompt == "fresh\n\nmore" and [t.name for t in tools] == ["a"]
    agent.reset()
    assert len(agent.state.messages) == 1
    baseline = agent.state.messages[0]
    assert isinstance(baseline, SystemMessage) and baseline.content == "fresh\n\nmore"


async def test_set_tools_during_run_waits_for_turn_boundary(faux: FauxProvider, model: Model, recorder: Any) -> None:
    agent: Agent
    seen: list[Context] = []

    async def swap() -> None:
        agent.set_tools([tool("b")])

    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("a", id="c1")], stop_reason="toolUse"),
            Capture(faux_assistant_message([faux_tool_call("a", id="c2")], stop_reason="toolUse"), seen),
            faux_assistant_message("done"),
        ]
    )
    agent = make_agent(model, tool("a", swap), system_prompt="p")
    agent.subscribe(recorder)
    await agent.prompt("go")
    roles = [e.message.role for e in recorder.of("message_end")]
    # user, assistant(c1), toolResult(c1), system delta, assistant(c2), toolResult(c2), assistant
    assert roles == ["user", "assistant", "toolResult", "system", "assistant", "toolResult", "assistant"]
    compact = recorder.compact()
    system_at = compact.index("message_start(system)")
    assert compact[system_at - 1] == "turn_start"
    _, tools = system_prompt_and_tools(seen[0])
    assert [t.name for t in tools] == ["b"]
    results = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert [r.content[0].text for r in results] == ["a ok", "Tool a not found"]  # type: ignore[union-attr]


async def test_system_messages_off_only_assigns(faux: FauxProvider, model: Model, recorder: Any) -> None:
    seen: list[Context] = []
    faux.set_responses([Capture(faux_assistant_message("ok"), seen)])
    agent = make_agent(model, tool("a"), system_prompt="p", system_messages=False)
    agent.subscribe(recorder)
    agent.set_system_prompt("q")
    agent.set_tools([tool("b")])
    await agent.prompt("hi")
    assert all(m.role != "system" for m in agent.state.messages)
    assert "message_start(system)" not in recorder.compact()
    assert system_prompt_and_tools(seen[0])[0] == "q"
    assert [t.name for t in system_prompt_and_tools(seen[0])[1]] == ["b"]


async def test_unknown_role_kept_but_not_sent(faux: FauxProvider, model: Model) -> None:
    seen: list[Context] = []
    data = {"role": "notification", "timestamp": 3, "text": "ding", "meta": {"n": None}}
    note = default_registry.parse(data)
    assert isinstance(note, UnknownMessage) and default_registry.dump(note) == data
    faux.set_responses([Capture(faux_assistant_message("ok"), seen)])
    agent = make_agent(model, system_messages=False)
    agent.state.messages = [note]
    await agent.prompt("hi")
    assert [m.role for m in seen[0].messages] == ["user"]
    assert agent.state.messages[0] is note


async def test_misuse_raises(faux: FauxProvider, model: Model) -> None:
    release = asyncio.Event()
    faux.set_responses(
        [faux_assistant_message([faux_tool_call("wait")], stop_reason="toolUse"), faux_assistant_message("ok")]
    )
    agent = make_agent(model, tool("wait", release.wait), system_messages=False)
    run = asyncio.create_task(agent.prompt("go"))
    while not agent.state.pending_tool_calls:
        await asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="already processing a prompt"):
        await agent.prompt("again")
    with pytest.raises(RuntimeError):
        await agent.continue_()
    with pytest.raises(RuntimeError):
        agent.reset()
    release.set()
    assert await run == "completed"
    assert BUSY_TEXT.startswith("Agent is already processing a prompt. Use steer() or follow_up()")
    with pytest.raises(ValueError, match="Cannot continue from message role: assistant"):
        await agent.continue_()
    agent.reset()
    with pytest.raises(ValueError, match="No messages to continue from"):
        await agent.continue_()


async def test_continue_paths(faux: FauxProvider, model: Model) -> None:
    seen: list[Context] = []
    faux.set_responses([Capture(faux_assistant_message("one"), seen), Capture(faux_assistant_message("two"), seen)])
    agent = make_agent(model, system_messages=False)
    agent.state.messages = [UserMessage(content="pending question", timestamp=1)]
    assert await agent.continue_() == "completed"
    agent.steer("nudge")
    assert await agent.continue_() == "completed"
    assert user_texts(seen[1]) == ["pending question", "nudge"]
    assert [m.role for m in agent.state.messages] == ["user", "assistant", "user", "assistant"]


async def test_async_listeners_are_awaited(faux: FauxProvider, model: Model) -> None:
    faux.set_responses([faux_assistant_message("hi")])
    agent = make_agent(model)
    order: list[str] = []

    async def slow_end(event: AgentEvent, signal: AbortSignal | None) -> None:
        if event.type == "agent_end":
            assert agent.state.is_streaming
            await asyncio.sleep(0.01)
            order.append("listener done")

    agent.subscribe(slow_end)
    await agent.prompt("hello")
    order.append("prompt returned")
    assert order == ["listener done", "prompt returned"]
    assert not agent.state.is_streaming


async def test_raising_listener_is_logged_not_fatal(
    faux: FauxProvider, model: Model, recorder: Any, caplog: pytest.LogCaptureFixture
) -> None:
    faux.set_responses(
        [faux_assistant_message([faux_tool_call("t")], stop_reason="toolUse"), faux_assistant_message("ok")]
    )
    agent = make_agent(model, tool("t"))

    def broken(event: AgentEvent, signal: AbortSignal | None) -> None:
        raise ValueError("listener bug")

    agent.subscribe(broken)
    unsubscribe = agent.subscribe(recorder)
    with caplog.at_level(logging.ERROR):
        assert await agent.prompt("go") == "completed"
    assert recorder.types[-1] == "agent_end" and recorder.types.count("turn_end") == 2
    assert "agent listener failed" in caplog.text
    unsubscribe()
    faux.set_responses([faux_assistant_message("again")])
    count = len(recorder.events)
    await agent.prompt("more")
    assert len(recorder.events) == count


async def test_cancelled_task_is_not_swallowed(faux: FauxProvider, model: Model) -> None:
    faux.set_responses([faux_assistant_message([faux_tool_call("hang")], stop_reason="toolUse")])
    agent = make_agent(model, tool("hang", asyncio.Event().wait))
    run = asyncio.create_task(agent.prompt("go"))
    while not agent.state.pending_tool_calls:
        await asyncio.sleep(0)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert not agent.is_running and agent.state.last_stop_reason == "aborted"
    await agent.wait_for_idle()
