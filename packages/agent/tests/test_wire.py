"""Wire shape of agent events against a capture of pi 0.73.1 (`--mode json`, one bash call then text).

The capture is `tests/data/pi_print_tool_stdout.jsonl`. Our deliberate differences (spec agent.md §4):
`message_update` carries neither `message` nor `assistantMessageEvent.partial` on the JSON/RPC wire, and
`agent_end` adds `stopReason`.
"""

import itertools
import json
from pathlib import Path
from typing import Any

from apex_agent.agent import Agent, AgentState
from apex_agent.events import AgentEvent, MessageUpdateEvent, to_wire
from apex_agent.tools import AgentToolResult, FunctionTool
from apex_ai.abort import AbortSignal
from apex_ai.providers.faux import FauxProvider, faux_assistant_message, faux_tool_call
from apex_ai.stream import stream_simple
from apex_ai.types import TextContent

CAPTURE = Path(__file__).parent / "data" / "pi_print_tool_stdout.jsonl"


def collapse(kinds: list[str]) -> list[str]:
    return [kind for kind, _ in itertools.groupby(kinds)]


def keys_by_type(lines: list[dict[str, Any]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for line in lines:
        out.setdefault(line["type"], set()).update(line)
    return out


async def bash_like_run(faux: FauxProvider) -> list[AgentEvent]:
    async def bash(call_id: str, params: dict[str, Any], signal: AbortSignal | None, on_update: Any) -> AgentToolResult:
        await on_update(AgentToolResult(content=[]))
        await on_update(AgentToolResult(content=[TextContent(text="hello\n")], details={}))
        return AgentToolResult(content=[TextContent(text="hello\n")])

    schema = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("bash", {"command": "echo hello"})], stop_reason="toolUse"),
            faux_assistant_message("The command printed: hello"),
        ]
    )
    agent = Agent(
        AgentState(model=faux.model(), tools=[FunctionTool("bash", "run", schema, bash)]),
        stream_fn=stream_simple,
        system_messages=False,
    )
    events: list[AgentEvent] = []
    agent.subscribe(lambda event, signal: events.append(event))
    await agent.prompt("Run echo hello")
    return events


async def test_event_sequence_and_keys_match_pi_capture(faux: FauxProvider) -> None:
    pi = [json.loads(line) for line in CAPTURE.read_text().splitlines()][1:]  # the first line is the session header
    ours = [to_wire(event, for_stream=True) for event in await bash_like_run(faux)]
    assert collapse([e["type"] for e in ours]) == collapse([e["type"] for e in pi])

    pi_keys, our_keys = keys_by_type(pi), keys_by_type(ours)
    pi_keys["message_update"] -= {"message"}
    pi_keys["agent_end"] |= {"stopReason"}
    assert our_keys == pi_keys

    pi_update_keys = {k for e in pi if e["type"] == "message_update" for k in e["assistantMessageEvent"]}
    our_update_keys = {k for e in ours if e["type"] == "message_update" for k in e["assistantMessageEvent"]}
    assert our_update_keys == pi_update_keys - {"partial"}

    def message_keys(events: list[dict[str, Any]], role: str) -> set[str]:
        return {k for e in events if e["type"] == "message_end" and e["message"]["role"] == role for k in e["message"]}

    assert message_keys(ours, "user") == message_keys(pi, "user")
    assert message_keys(ours, "toolResult") == message_keys(pi, "toolResult")
    # pi's assistant also has responseId (an OpenAI response id); everything else is the same.
    assert message_keys(ours, "assistant") == message_keys(pi, "assistant") - {"responseId"}
    assert ours[-1]["stopReason"] == "completed"


async def test_full_form_keeps_partial_and_message(faux: FauxProvider) -> None:
    events = await bash_like_run(faux)
    update = next(e for e in events if isinstance(e, MessageUpdateEvent))
    full = to_wire(update, for_stream=False)
    assert full["message"]["role"] == "assistant" and "partial" in full["assistantMessageEvent"]
    assert json.loads(update.to_json()) == full
