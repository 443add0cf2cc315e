"""Malformed input never kills the server (issue 5): 2,000 bad lines, one failure response each."""

from __future__ import annotations

import json
import random
from typing import Any

from rpc_harness import RpcHarness

# Commands with typed fields, and a value of the wrong type for one of them.
WRONG_TYPES: list[dict[str, Any]] = [
    {"type": "prompt", "message": 5},
    {"type": "prompt", "message": "x", "images": "no"},
    {"type": "prompt", "message": "x", "streamingBehavior": "later"},
    {"type": "steer", "message": None},
    {"type": "follow_up", "message": ["a"]},
    {"type": "new_session", "parentSession": 3},
    {"type": "set_model", "provider": "faux"},
    {"type": "set_model", "provider": 1, "modelId": "faux-1"},
    {"type": "set_thinking_level", "level": "huge"},
    {"type": "set_steering_mode", "mode": "some"},
    {"type": "set_follow_up_mode", "mode": True},
    {"type": "compact", "customInstructions": {}},
    {"type": "set_auto_compaction", "enabled": "true"},
    {"type": "set_auto_retry", "enabled": 1},
    {"type": "bash", "command": ["ls"]},
    {"type": "bash", "command": "ls", "excludeFromContext": "yes"},
    {"type": "export_html", "outputPath": 7},
    {"type": "switch_session"},
    {"type": "fork", "entryId": 12},
    {"type": "get_entries", "since": 4},
    {"type": "set_session_name", "name": None},
    {"type": "extension_ui_response", "id": "u", "confirmed": "yes"},
]
VALID = [
    '{"type":"get_state"}',
    '{"id":"x","type":"set_session_name","name":"n"}',
    '{"type":"prompt","message":"hello \\u2028 world"}',
]


def bad_line(rng: random.Random) -> bytes:
    kind = rng.randrange(9)
    if kind == 0:  # random bytes
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80))).replace(b"\n", b" ")
    if kind == 1:  # truncated JSON of a valid command: any proper prefix of an object is invalid
        text = rng.choice(VALID)
        return text[: rng.randrange(len(text) - 1)].encode()
    if kind == 2:  # valid JSON, not a command object
        return rng.choice([b"null", b"[]", b"3", b'"get_state"', b"true", b"{}", b'{"type":null}', b"[1]", b"-0.5e3"])
    if kind == 3:  # wrong field types for real commands
        command = dict(rng.choice(WRONG_TYPES))
        if rng.random() < 0.5:
            command["id"] = rng.choice(["a", 5, "é\u2028"])
        return json.dumps(command, ensure_ascii=rng.random() < 0.5).encode()
    if kind == 4:  # deep nesting
        depth = rng.randrange(2_000, 60_000)
        return rng.choice([b"[" * depth, b"[" * depth + b"]" * depth, b'{"a":' * depth + b"1" + b"}" * depth])
    if kind == 5:  # NUL bytes
        return rng.choice([b'{"type":"get_state"\x00}', b"\x00", b'{"type":"get\x00state"}'])
    if kind == 6:  # line separators inside otherwise valid JSON of an unknown command
        return '{"type":"nope\u2028\u2029","x":"\u2028"}'.encode()
    if kind == 7:  # unknown command with an id (answered without it)
        return json.dumps({"id": rng.randrange(100), "type": f"cmd_{rng.randrange(1000)}"}).encode()
    return b'{"type":"prompt","message":"' + b"\xff" * rng.randrange(1, 5) + b'"'  # invalid UTF-8, unterminated


async def test_two_thousand_bad_lines(rpc: RpcHarness) -> None:
    rng = random.Random(20261130)
    lines = [bad_line(rng) for _ in range(1_995)]
    big = "x" * (1 << 20)
    lines += [
        json.dumps({"type": "prompt", "message": big, "images": 5}).encode(),
        json.dumps({"type": "set_model", "provider": big, "modelId": None}).encode(),
        ('{"type":"prompt","message":"' + big).encode(),
        json.dumps({"type": "no_" + big[:1000]}).encode(),
        big.encode(),
    ]
    client = await rpc.client()
    for line in lines:
        client.send_raw(line + b"\n")
    responses = [await client.recv() for _ in lines]
    for line, response in zip(lines, responses, strict=True):
        assert response["type"] == "response", line[:80]
        assert response["success"] is False, line[:80]
        assert isinstance(response["error"], str) and response["error"]
        assert len(json.dumps(response)) < 5_000  # failures never echo a 1 MB input back
    state = await client.request({"id": "alive", "type": "get_state"})
    assert state["success"] is True
    assert state["data"]["messageCount"] == 0  # none of the bad lines ran a command
    assert [r for r in client.received if r["type"] != "response"] == []
    assert await client.close() == 0
