"""Golden tests: the real `apex-code --mode json -p ...` against the pi 0.73.1 print captures (data/pi/*).

Each capture's scenario is served by the scripted model server (which answers with the upstream fake server's
ids), our process runs as a subprocess, and its stdout is compared with pi's record by record: event order,
types, keys and key order, and every value except the volatile ones (session id, timestamps, cwd). The request
bodies our process sent are compared with the capture's (our system prompt and tool descriptions are our own
prose: compared by type only), and for `print_text` the session file with pi's.

Before comparing, exactly the differences the spec gives are normalized away, each where it happens and with
its section: the Apex additions of modes.md §5/§8 (result envelope, `agent_settled`, `agent_end.stopReason/
willRetry/budget`, slim `message_update`, `stopReason:"pending"` on the assistant `message_start`), the seed's
`rawStopReason` (ai.md §3/§7), the bash tool's `details.execution` (tools.md §5) and the assistant key order
of ai.md §3. The Apex additions are checked for their own values before they are removed. The seed's system
messages (the new session's leading declaration of prompt and tools) postdate pi 0.73.1: they are checked to lead
the session and to match the first request, then dropped (`without_system`, cli_helpers.py).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_leading_system, json_lines, request_prompt_and_tools, run_cli, without_system

from apex_ai.testing.scripted_server import ScriptedModelServer

DATA = Path(__file__).parent / "data" / "pi"
PI_CWD = "/home/user/pi-golden/work"


@dataclass(frozen=True)
class Capture:
    api: str
    prompt: str
    status: str  # our result envelope's status (pi exits 0 without an envelope in every capture)


CAPTURES = {
    "print_text": Capture("anthropic-messages", "Say hello", "completed"),
    "print_tool_openai_completions": Capture("openai-completions", "Run echo hello", "completed"),
    "print_tool_openai_responses": Capture("openai-responses", "Run echo hello", "completed"),
    # Seed (docs/json.md "Result envelope and exit codes"): pi exited 0 here; we end with status error, exit 1.
    "error_529_noretry": Capture("anthropic-messages", "Say hello", "error"),
}
WITH_REQUESTS = [name for name in CAPTURES if (DATA / name / "requests.jsonl").exists()]

# ai.md §3: the assistant message's fields in order. pi 0.73.1 writes the keys it sets late (`responseId`,
# `errorMessage`) after `timestamp`; our order is the spec's, so the capture's keys are put in this order.
ASSISTANT_ORDER = [
    "role",
    "content",
    "api",
    "provider",
    "model",
    "responseModel",
    "responseId",
    "providerThinkingLevel",
    "diagnostics",
    "usage",
    "stopReason",
    "deferred",
    "errorMessage",
    "rawStopReason",
    "endTurn",
    "timestamp",
]


@dataclass
class Run:
    work: Path
    proc: subprocess.CompletedProcess[str]
    records: list[dict[str, Any]]
    requests: list[dict[str, Any]]
    session: list[dict[str, Any]]


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def run_json_mode(
    root: Path, api: str, prompt: str, scenario: list[Any], settings: dict[str, Any] | None = None
) -> Run:
    """Run `apex-code --mode json` once against `scenario`, model `fake/fake-model` as in the captures."""
    work, agent = root / "work", root / "agent"
    work.mkdir(parents=True)
    agent.mkdir()
    if settings is not None:
        (agent / "settings.json").write_text(json.dumps(settings))
    with ScriptedModelServer(scenario) as server:
        base = server.anthropic_base_url if api == "anthropic-messages" else server.openai_base_url
        # maxTokens 8192: the capture's requests ask for 8192 (ai.md §5's default for a declared model is 16384).
        model = {"id": "fake-model", "maxTokens": 8192}
        providers = {"fake": {"baseUrl": base, "api": api, "apiKey": "test-key", "models": [model]}}
        (agent / "models.json").write_text(json.dumps({"providers": providers}))
        proc = run_cli(["--mode", "json", "--permission-mode", "bypassPermissions", "-p", prompt], work, agent)
        requests = server.requests
    files = list((agent / "sessions").rglob("*.jsonl"))
    assert len(files) == 1, proc.stderr
    return Run(work, proc, json_lines(proc.stdout), requests, load_jsonl(files[0]))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], Run]]:
    """Each capture is run once per module and shared by the stream, request and session tests."""
    cache: dict[str, Run] = {}

    def get(name: str) -> Run:
        if name not in cache:
            capture = CAPTURES[name]
            settings_file = DATA / name / "settings.json"
            settings = json.loads(settings_file.read_text()) if settings_file.exists() else None
            scenario = json.loads((DATA / name / "scenario.json").read_text())
            root = tmp_path_factory.mktemp(name)
            cache[name] = run_json_mode(root, capture.api, capture.prompt, scenario, settings)
        return cache[name]

    yield get


# --- normalization -------------------------------------------------------------------------------------------


def ordered(value: Any, key: str | None = None) -> Any:
    """Dicts as lists of pairs (key order is compared: it is JSON.stringify's insertion order); timestamps as
    their type, the only volatile value inside events."""
    if isinstance(value, dict):
        return [(k, ordered(v, k)) for k, v in value.items()]
    if isinstance(value, list):
        return [ordered(v) for v in value]
    if key == "timestamp":
        return f"<{type(value).__name__}>"
    return value


def map_messages(value: Any, fn: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    """Apply `fn` to every assistant message inside `value` (event payloads, agent_end lists, session entries)."""
    if isinstance(value, dict):
        mapped = {k: map_messages(v, fn) for k, v in value.items()}
        return fn(mapped) if mapped.get("role") == "assistant" else mapped
    if isinstance(value, list):
        return [map_messages(v, fn) for v in value]
    return value


def drop_raw_stop_reason(message: dict[str, Any]) -> dict[str, Any]:
    # ai.md §3/§7 (seed message types): `rawStopReason` keeps the provider's value; pi 0.73.1 has no such field.
    if "rawStopReason" in message:
        assert isinstance(message["rawStopReason"], str)
    return {k: v for k, v in message.items() if k != "rawStopReason"}


def spec_key_order(message: dict[str, Any]) -> dict[str, Any]:
    assert set(message) <= set(ASSISTANT_ORDER), set(message) - set(ASSISTANT_ORDER)
    return {k: message[k] for k in ASSISTANT_ORDER if k in message}


def drop_execution_details(value: Any) -> Any:
    """tools.md §5: our bash result's `details.execution`; a `details` left empty by that goes too."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if k == "details" and isinstance(v, dict) and "execution" in v:
                assert set(v["execution"]) == {"cwd", "executable", "argv", "exitCode"}
                v = {dk: dv for dk, dv in v.items() if dk != "execution"}
                if not v:
                    continue
            out[k] = drop_execution_details(v)
        return out
    if isinstance(value, list):
        return [drop_execution_details(v) for v in value]
    return value


def start_usage_as_types(record: dict[str, Any]) -> dict[str, Any]:
    """The assistant `message_start` usage compared by type only.

    pi serializes a shallow copy of the streaming message whose `usage` object its Anthropic adapter has already
    updated from the SSE `message_start` by the time the line is written (90/1 in print_text, while the same
    line has no `responseId` yet); we write the message as it was when `start` was emitted (all zero). The
    final usage is compared exactly in `message_end`.
    """
    message = record["message"]
    if message.get("role") != "assistant":
        return record

    def types(values: dict[str, Any]) -> dict[str, Any]:
        return {k: types(v) if isinstance(v, dict) else type(v).__name__ for k, v in values.items()}

    usage = types(message["usage"])
    return {**record, "message": {**message, "usage": usage}}


def header(record: dict[str, Any], cwd: str) -> dict[str, Any]:
    assert record["type"] == "session" and record["cwd"] == cwd
    assert isinstance(record["id"], str) and isinstance(record["timestamp"], str)
    return {**record, "id": "<session id>", "timestamp": "<iso time>", "cwd": "<cwd>"}


def normalize_events(
    records: list[dict[str, Any]], work: Path, check_agent_end: Callable[[dict[str, Any]], None]
) -> list[Any]:
    """Our header and session events without the Apex additions, each checked before it is removed."""
    out: list[Any] = [ordered(header(records[0], str(work)))]
    for record in records[1:]:
        kind = record["type"]
        if kind == "message_update":
            # modes.md §5: the wire `message_update` carries the assistant event without `partial`, no `message`.
            assert list(record) == ["type", "assistantMessageEvent"]
            assert "partial" not in record["assistantMessageEvent"]
        if kind == "agent_end":
            # modes.md §6/§8: AgentStopReason, willRetry, budget (only for budget-exhausted).
            check_agent_end(record)
            record = {k: v for k, v in record.items() if k not in ("stopReason", "willRetry", "budget")}
        if kind == "message_start" and record["message"]["role"] == "assistant":
            # modes.md §8: "pending" on the assistant message_start; pi's placeholder there is "stop". A request
            # that fails before streaming starts already carries its terminal "error", as pi's does.
            assert record["message"]["content"] == []
            if record["message"]["stopReason"] == "pending":
                record = {**record, "message": {**record["message"], "stopReason": "stop"}}
        record = drop_execution_details(map_messages(record, drop_raw_stop_reason))
        if kind == "message_start":
            record = start_usage_as_types(record)
        out.append(ordered(record))
    return out


def final_agent_end(status: str) -> Callable[[dict[str, Any]], None]:
    def check(record: dict[str, Any]) -> None:
        assert record["stopReason"] == status and record["willRetry"] is False and "budget" not in record

    return check


def normalize_ours(records: list[dict[str, Any]], status: str, work: Path) -> list[Any]:
    """Our whole stdout: the result envelope and `agent_settled` checked and removed, then `normalize_events`."""
    # Seed docs/json.md, modes.md §5: the result envelope is the last line, exactly these two keys.
    assert records[-1] == {"type": "result", "status": status}
    assert list(records[-1]) == ["type", "status"]
    # modes.md §8: `agent_settled` follows the final `agent_end` (no retry left).
    assert records[-2] == {"type": "agent_settled"}
    assert [r["type"] for r in records].count("agent_settled") == 1
    return normalize_events(without_system(records[:-2]), work, final_agent_end(status))


def normalize_pi(records: list[dict[str, Any]]) -> list[Any]:
    out: list[Any] = [ordered(header(records[0], PI_CWD))]
    for record in records[1:]:
        if record["type"] == "message_update":
            # modes.md §5: the slim wire form (no cumulative `message`, no `partial`).
            event = {k: v for k, v in record["assistantMessageEvent"].items() if k != "partial"}
            record = {"type": "message_update", "assistantMessageEvent": event}
        record = map_messages(record, spec_key_order)
        if record["type"] == "message_start":
            record = start_usage_as_types(record)
        out.append(ordered(record))
    return out


def assert_same_records(ours: list[Any], theirs: list[Any]) -> None:
    kinds = [dict(r)["type"] for r in ours]
    assert kinds == [dict(r)["type"] for r in theirs]
    for index, (mine, pi) in enumerate(zip(ours, theirs, strict=True)):
        assert mine == pi, f"record {index} ({kinds[index]}) differs"


# --- event stream --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CAPTURES))
def test_json_stream_matches_pi_capture(runs: Callable[[str], Run], name: str) -> None:
    run = runs(name)
    status = CAPTURES[name].status
    assert run.proc.returncode == (0 if status == "completed" else 1), run.proc.stderr
    prompt, tools = request_prompt_and_tools(run.requests[0]["body"])
    assert assert_leading_system(run.records, tools)["content"] == prompt
    ours = normalize_ours(run.records, status, run.work)
    theirs = normalize_pi(load_jsonl(DATA / name / "stdout.jsonl"))
    assert_same_records(ours, theirs)


def test_json_header_is_the_session_file_header(runs: Callable[[str], Run]) -> None:
    run = runs("print_text")
    assert run.records[0] == run.session[0]
    assert list(run.records[0]) == ["type", "version", "id", "timestamp", "cwd"]


# --- request bodies ------------------------------------------------------------------------------------------


def _own_prose(body: dict[str, Any]) -> dict[str, Any]:
    """System prompt text and tool descriptions are ours: kept only as their type (non-empty strings)."""

    def prose(text: Any) -> str:
        assert isinstance(text, str) and text
        return "<prose>"

    def descriptions(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: prose(v) if k == "description" else descriptions(v) for k, v in value.items()}
        if isinstance(value, list):
            return [descriptions(v) for v in value]
        return value

    body = dict(body)
    if "system" in body:  # anthropic: text blocks
        body["system"] = [{**block, "text": prose(block["text"])} for block in body["system"]]
    key = "messages" if "messages" in body else "input"
    if key in body and body[key] and body[key][0].get("role") == "system":  # chat / responses
        first = body[key][0]
        body[key] = [{**first, "content": prose(first["content"])}, *body[key][1:]]
    if "tools" in body:
        body["tools"] = descriptions(body["tools"])
    return body


def _edit_parameters(body: dict[str, Any]) -> dict[str, Any] | None:
    for tool in body.get("tools", []):
        function = tool.get("function", tool)
        if function.get("name") == "edit" and "parameters" in function:
            parameters: dict[str, Any] = function["parameters"]
            return parameters
    return None


@pytest.mark.parametrize("name", WITH_REQUESTS)
def test_request_bodies_match_pi_capture(runs: Callable[[str], Run], name: str) -> None:
    run = runs(name)
    captured = load_jsonl(DATA / name / "requests.jsonl")
    assert [(r["method"], r["path"], r["api"]) for r in run.requests] == [
        (r["method"], r["path"], r["api"]) for r in captured
    ]
    session_id = run.records[0]["id"]
    first_pi: dict[str, Any] = {}
    for ours_request, pi_request in zip(run.requests, captured, strict=True):
        mine, pi = dict(ours_request["body"]), dict(pi_request["body"])
        # The capture abbreviates a field that repeats the first request's value.
        pi = {k: first_pi.get(k) if v == "<same as request seq 1>" else v for k, v in pi.items()}
        first_pi = first_pi or pi
        if "prompt_cache_key" in pi:
            # Responses API: the session id is the cache key (volatile, but it must be our session's id).
            assert mine.get("prompt_cache_key") == session_id
            mine["prompt_cache_key"] = pi["prompt_cache_key"]
        # Bodies as JSON values: key order inside an HTTP body is the SDK's business, not compared.
        assert _own_prose(mine) == _own_prose(pi), f"request {pi_request['seq']} differs"


def test_no_retry_529_sends_one_request(runs: Callable[[str], Run]) -> None:
    """modes.md §8: `retry.provider.maxRetries` 0 means one HTTP request per attempt (pi sent 12)."""
    run = runs("error_529_noretry")
    assert len(run.requests) == 1
    assert run.requests[0]["body"]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Say hello", "cache_control": {"type": "ephemeral"}}]}
    ]


# --- session file --------------------------------------------------------------------------------------------


def normalize_session(entries: list[dict[str, Any]], cwd: str, ours: bool) -> list[Any]:
    """Entries with ids replaced by their position; the parent chain must be linear (each entry's parent is the
    one before it)."""
    out: list[Any] = [ordered(header(entries[0], cwd))]
    ids: dict[str, int] = {}
    for index, entry in enumerate(entries[1:], start=1):
        assert entry["parentId"] == (entries[index - 1]["id"] if index > 1 else None)
        ids[entry["id"]] = index
        entry = {**entry, "id": index, "parentId": index - 1 if index > 1 else None, "timestamp": "<iso time>"}
        entry = map_messages(entry, drop_raw_stop_reason if ours else spec_key_order)
        out.append(ordered(entry))
    return out


def test_session_file_matches_pi_capture(runs: Callable[[str], Run]) -> None:
    run = runs("print_text")
    prompt, tools = request_prompt_and_tools(run.requests[0]["body"])
    assert assert_leading_system(run.session[1:], tools)["content"] == prompt
    # sessions.md §3 calls key order irrelevant in the file; we still match pi's.
    ours = normalize_session(without_system(run.session), str(run.work), ours=True)
    theirs = normalize_session(load_jsonl(DATA / "print_text" / "session.jsonl"), PI_CWD, ours=False)
    assert [dict(e)["type"] for e in ours] == [dict(e)["type"] for e in theirs]
    assert ours == theirs


# --- auto-retry (retries enabled) ----------------------------------------------------------------------------

OVERLOADED = {"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}}
RETRY_SETTINGS = {"retry": {"enabled": True, "maxRetries": 2, "baseDelayMs": 1}}


def _first_attempt_matches_capture(run: Run) -> int:
    """The failed first attempt is pi's error_529 stream up to its `agent_end`, which here announces a retry.
    Returns the index of that `agent_end` in our records."""
    end = next(i for i, r in enumerate(run.records) if r["type"] == "agent_end")

    def retrying(record: dict[str, Any]) -> None:
        assert record["stopReason"] == "error" and record["willRetry"] is True

    assert_leading_system(run.records[: end + 1])
    ours = normalize_events(without_system(run.records[: end + 1]), run.work, retrying)
    assert_same_records(ours, normalize_pi(load_jsonl(DATA / "error_529_noretry" / "stdout.jsonl")))
    return end


def _skeleton(records: list[dict[str, Any]]) -> list[str]:
    """Event types (assistant/user roles spelled out), `message_update` runs collapsed."""
    out: list[str] = []
    for record in records:
        kind = record["type"]
        if kind == "message_update" and out[-1] == kind:
            continue
        if kind in ("message_start", "message_end"):
            kind = f"{kind}:{record['message']['role']}"
        out.append(kind)
    return out


def test_auto_retry_after_529_succeeds_in_the_error_529_order(tmp_path: Path) -> None:
    """modes.md §8: failed `agent_end{willRetry}` -> `auto_retry_start` -> new run without a new user message;
    `auto_retry_end{success}` right after the assistant's `message_end`, before its `turn_end`."""
    reply = {"text": "Hello! I am a fake model.", "usage": {"input": 90, "output": 7}}
    run = run_json_mode(tmp_path, "anthropic-messages", "Say hello", [OVERLOADED, reply], RETRY_SETTINGS)
    assert run.proc.returncode == 0, run.proc.stderr
    end = _first_attempt_matches_capture(run)
    failed = run.records[end]["messages"][-1]
    rest = run.records[end + 1 :]
    assert rest[0] == {
        "type": "auto_retry_start",
        "attempt": 1,
        "maxAttempts": 2,
        "delayMs": 1,
        "errorMessage": failed["errorMessage"],
    }
    assert _skeleton(rest) == [
        "auto_retry_start",
        "agent_start",
        "turn_start",
        "message_start:assistant",
        "message_update",
        "message_end:assistant",
        "auto_retry_end",
        "turn_end",
        "agent_end",
        "agent_settled",
        "result",
    ]
    assert next(r for r in rest if r["type"] == "auto_retry_end") == {
        "type": "auto_retry_end",
        "success": True,
        "attempt": 1,
    }
    final_end = next(r for r in rest if r["type"] == "agent_end")
    assert final_end["stopReason"] == "completed" and final_end["willRetry"] is False
    assert [m["role"] for m in final_end["messages"]] == ["assistant"]
    assert rest[-1] == {"type": "result", "status": "completed"}
    # The failed assistant message is never resent; both requests carry the user message only.
    assert [[m["role"] for m in r["body"]["messages"]] for r in run.requests] == [["user"], ["user"]]
    # ...but it stays in the session file, and the retried answer is its child.
    messages = [e for e in run.session if e["type"] == "message"]
    assert [e["message"]["role"] for e in messages] == ["system", "user", "assistant", "assistant"]
    assert [e["message"].get("stopReason") for e in messages] == [None, None, "error", "stop"]
    assert messages[3]["parentId"] == messages[2]["id"]


def test_auto_retry_exhausted_ends_with_failed_retry_end_and_error(tmp_path: Path) -> None:
    """modes.md §8: after the last `agent_end{willRetry:false}`, `auto_retry_end{success:false, attempt,
    finalError}`; delays double from `baseDelayMs`; one HTTP request per attempt."""
    scenario = [{**OVERLOADED, "repeat": True}]
    run = run_json_mode(tmp_path, "anthropic-messages", "Say hello", scenario, RETRY_SETTINGS)
    assert run.proc.returncode == 1
    _first_attempt_matches_capture(run)
    attempt = ["agent_start", "turn_start", "message_start:assistant", "message_end:assistant", "turn_end", "agent_end"]
    assert _skeleton(run.records) == [
        "session",
        "agent_start",
        "turn_start",
        "message_start:system",
        "message_end:system",
        "message_start:user",
        "message_end:user",
        *attempt[2:],
        "auto_retry_start",
        *attempt,
        "auto_retry_start",
        *attempt,
        "auto_retry_end",
        "agent_settled",
        "result",
    ]
    starts = [r for r in run.records if r["type"] == "auto_retry_start"]
    assert [(r["attempt"], r["maxAttempts"], r["delayMs"]) for r in starts] == [(1, 2, 1), (2, 2, 2)]
    ends = [r for r in run.records if r["type"] == "agent_end"]
    assert [(r["stopReason"], r["willRetry"]) for r in ends] == [("error", True), ("error", True), ("error", False)]
    last_error = ends[-1]["messages"][-1]["errorMessage"]
    assert '"request_id":"req_fake_3"' in last_error
    retry_end = next(r for r in run.records if r["type"] == "auto_retry_end")
    assert retry_end == {"type": "auto_retry_end", "success": False, "attempt": 2, "finalError": last_error}
    assert run.records[-1] == {"type": "result", "status": "error"}
    assert len(run.requests) == 3
