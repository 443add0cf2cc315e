"""Golden transcript: the pi 0.73.1 RPC capture's commands in, our records out, compared by shape.

The capture (data/rpc_in.jsonl -> data/rpc_out.jsonl) was made against a scripted Anthropic-wire model;
we replay its script (data/scenario.json) with the faux provider. Values that depend on the provider,
the clock or random ids are normalized away; everything else must match: the response envelope, ids
echoed only when sent, the failure shapes, the event order (prompt response before agent_start,
session_info_changed before the set_session_name response) and every payload's keys.

Apex additions the spec names are removed from our side before comparing: the seed's system message (checked to
open the first turn, then dropped: pi 0.73.1 predates it), `agent_settled`,
`agent_end.stopReason/willRetry/budget`, the slim `message_update`, `stopReason:"pending"` on the
assistant `message_start`. The bash tool's `details.execution` (tools.md §5) is removed from ours. Provider-specific fields
(`responseId`) are removed from the capture.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rpc_harness import GOLDEN_MODELS, RpcHarness, without_system

from apex_ai.providers.faux import faux_assistant_message, faux_tool_call

DATA = Path(__file__).parent / "data"
COLLAPSED = {"message_update", "tool_execution_update"}
VALUE_KEYS = {"type", "command", "success", "role", "toolName", "stopReason", "isError", "name", "text"}


def shape(value: Any, key: str | None = None, top: bool = True) -> Any:
    """Keys and types, with the values kept only where they are protocol (types, commands, request ids, roles...)."""
    if isinstance(value, dict):
        # A list of pairs, not a dict: key order is part of the shape (it is JSON.stringify's insertion order).
        return [(k, shape(v, k, False) if k != "id" or not top else v) for k, v in value.items()]
    if isinstance(value, list):
        return [shape(v, None, False) for v in value]
    if key in VALUE_KEYS:
        return value
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "null" if value is None else "str"


def drop_keys(value: Any, keys: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: drop_keys(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [drop_keys(v, keys) for v in value]
    return value


def drop_execution_details(value: Any) -> Any:
    """Remove the bash tool's `details.execution` (an Apex addition, tools.md §5) and details left empty."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k == "details" and isinstance(v, dict):
                v = {dk: dv for dk, dv in v.items() if dk != "execution"}
                if not v:
                    continue
            out[k] = drop_execution_details(v)
        return out
    if isinstance(value, list):
        return [drop_execution_details(v) for v in value]
    return value


def normalize(records: list[dict[str, Any]], *, ours: bool) -> list[Any]:
    out: list[Any] = []
    for record in records:
        kind = record["type"]
        if kind in COLLAPSED:
            if out and out[-1] == kind:
                continue
            out.append(kind)  # delta chunking is the provider's business: a run of updates is one item
            continue
        if ours:
            if kind == "agent_settled":
                continue
            record = drop_execution_details(record)
            if kind == "agent_end":
                record = {k: v for k, v in record.items() if k not in ("stopReason", "willRetry", "budget")}
            if kind == "message_start" and record["message"].get("role") == "assistant":
                # stopReason "pending" is an Apex addition; the content must already be empty, as pi sends it.
                assert record["message"]["content"] == []
                record = {**record, "message": {**record["message"], "stopReason": "stop"}}
        else:
            record = drop_keys(record, {"responseId"})
        if kind == "response" and record.get("command") == "parse":
            # The detail is the JSON parser's own wording (V8 vs Python).
            record = {**record, "error": record["error"].split(":")[0]}
        out.append(shape(record))
    return out


def load(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line]


def script(rpc: RpcHarness) -> None:
    steps = json.loads((DATA / "scenario.json").read_text(encoding="utf-8"))
    replies = []
    for step in steps:
        if "tool_calls" in step:
            calls = [faux_tool_call(c["name"], c["arguments"]) for c in step["tool_calls"]]
            replies.append(faux_assistant_message(calls, stop_reason="toolUse"))
        else:
            replies.append(faux_assistant_message(step["text"]))
    rpc.script(*replies)


async def test_pi_rpc_capture_shapes(tmp_path: Path) -> None:
    rpc = RpcHarness(tmp_path, models=GOLDEN_MODELS, provider="fake")
    script(rpc)
    client = await rpc.client(persisted=True)
    requests = (DATA / "rpc_in.jsonl").read_text(encoding="utf-8").splitlines()
    for line in requests:
        client.send_raw(line.encode() + b"\n")
        try:
            command: dict[str, Any] = json.loads(line)
        except ValueError:
            command = {"type": "parse"}

        def answered(record: dict[str, Any], command: dict[str, Any] = command) -> bool:
            if record["type"] != "response":
                return False
            if "id" in command and record["command"] != "no_such_command":
                return record.get("id") == command["id"]
            return record["command"] in (command["type"], "parse")

        await client.until(answered)
        if command["type"] == "prompt":
            await client.until(lambda r: r["type"] == "agent_settled")
    assert await client.close() == 0

    # The new session's leading system message opens the prompt's first turn, before the user message, once.
    kinds = [(r["type"], r.get("message", {}).get("role")) for r in client.received if r["type"] != "message_update"]
    first_turn = kinds.index(("turn_start", None)) + 1
    assert kinds[first_turn : first_turn + 3] == [
        ("message_start", "system"),
        ("message_end", "system"),
        ("message_start", "user"),
    ]
    assert [kind for kind in kinds if kind[1] == "system"] == [("message_start", "system"), ("message_end", "system")]
    ours = normalize(without_system(client.received), ours=True)
    theirs = normalize(load("rpc_out.jsonl"), ours=False)
    assert len(ours) == len(theirs), [r if isinstance(r, str) else dict(r).get("type") for r in ours]
    for index, (mine, pi) in enumerate(zip(ours, theirs, strict=True)):
        assert mine == pi, f"record {index} differs"


async def test_ids_and_key_order_of_responses(tmp_path: Path) -> None:
    """Beyond shapes: the envelope's key order and the exact failure lines of the capture."""
    rpc = RpcHarness(tmp_path, models=GOLDEN_MODELS, provider="fake")
    client = await rpc.client()
    client.send_raw(
        b'{"id": "1", "type": "get_state"}\n{"type": "get_state"}\n{"id": "10", "type": "no_such_command"}\n'
    )
    first, second, third = await client.recv(), await client.recv(), await client.recv()
    assert list(first)[:4] == ["id", "type", "command", "success"]
    assert list(second) == ["type", "command", "success", "data"]
    assert third == load("rpc_out.jsonl")[-2]
    assert await client.close() == 0
