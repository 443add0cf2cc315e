"""Command parsing and the response envelope (spec modes.md §7, acceptance check 13)."""

from __future__ import annotations

import json

from apex_coding_agent.modes.rpc.rpc_types import (
    COMMAND_MODELS,
    NO_DATA,
    BashCommand,
    ParsedCommand,
    PromptCommand,
    Rejected,
    RpcErrorResponse,
    RpcSuccessResponse,
    UiReply,
    error_response,
    parse_line,
    success_response,
)

SPEC_COMMANDS = {
    "prompt", "steer", "follow_up", "abort", "new_session", "get_state", "get_messages", "set_model", "cycle_model",
    "get_available_models", "set_thinking_level", "cycle_thinking_level", "get_available_thinking_levels",
    "set_steering_mode", "set_follow_up_mode", "compact", "set_auto_compaction", "set_auto_retry", "abort_retry",
    "bash", "abort_bash", "get_session_stats", "export_html", "switch_session", "fork", "clone", "get_fork_messages",
    "get_entries", "get_tree", "get_last_assistant_text", "set_session_name", "get_commands", "list_sessions",
    "search_sessions",
}  # fmt: skip
SPEC_COMMANDS |= {"get_mcp_servers"}  # ours: MCP servers (docs/mcp.md)
CHECKPOINT_COMMANDS = {"get_checkpoints", "rewind", "redo", "recover_restore"}
"""Ours, beyond the spec's table (docs/checkpoints.md)."""


def test_every_command_of_the_table_has_a_model() -> None:
    assert set(COMMAND_MODELS) == SPEC_COMMANDS | CHECKPOINT_COMMANDS


def test_camel_case_fields_are_read() -> None:
    outcome = parse_line(
        '{"id":"a","type":"prompt","message":"hi","streamingBehavior":"followUp",'
        '"images":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}'
    )
    assert isinstance(outcome, ParsedCommand)
    command = outcome.command
    assert isinstance(command, PromptCommand)
    assert command.id == "a"
    assert command.streaming_behavior == "followUp"
    assert command.images is not None and command.images[0].mime_type == "image/png"


def test_unknown_fields_are_ignored() -> None:
    outcome = parse_line('{"type":"bash","command":"ls","extra":1,"excludeFromContext":true}')
    assert isinstance(outcome, ParsedCommand)
    assert isinstance(outcome.command, BashCommand)
    assert outcome.command.exclude_from_context is True


def test_garbage_is_a_parse_failure_without_id() -> None:
    outcome = parse_line("this is not json")
    assert isinstance(outcome, Rejected)
    assert outcome.response["command"] == "parse"
    assert outcome.response["error"].startswith("Failed to parse command: ")
    assert "id" not in outcome.response


def test_non_objects_and_missing_type_are_parse_failures() -> None:
    for line in ("[1]", "null", "3", '"x"', "{}", '{"type":5}', '{"id":"q"}'):
        outcome = parse_line(line)
        assert isinstance(outcome, Rejected), line
        assert outcome.response == {
            "type": "response",
            "command": "parse",
            "success": False,
            "error": 'Failed to parse command: expected an object with a string "type"',
        }


def test_unknown_command_drops_the_id() -> None:
    outcome = parse_line('{"id":"x","type":"nope"}')
    assert isinstance(outcome, Rejected)
    assert outcome.response == {
        "type": "response",
        "command": "nope",
        "success": False,
        "error": "Unknown command: nope",
    }


def test_wrong_field_types_fail_with_id_and_field_name() -> None:
    outcome = parse_line('{"id":7,"type":"set_auto_retry","enabled":"true"}')
    assert isinstance(outcome, Rejected)
    assert outcome.response["id"] == 7
    assert outcome.response["command"] == "set_auto_retry"
    assert outcome.response["success"] is False
    assert "enabled" in outcome.response["error"]


def test_missing_required_field_is_named() -> None:
    outcome = parse_line('{"type":"set_model","provider":"p"}')
    assert isinstance(outcome, Rejected)
    assert "modelId" in outcome.response["error"]


def test_nan_and_deep_nesting_are_parse_failures() -> None:
    for line in ("NaN", '{"type":"get_state","x":Infinity}', "[" * 50_000):
        outcome = parse_line(line)
        assert isinstance(outcome, Rejected)
        assert outcome.response["command"] == "parse"


def test_extension_ui_response_is_not_a_command() -> None:
    outcome = parse_line('{"type":"extension_ui_response","id":"u1","confirmed":true}')
    assert isinstance(outcome, UiReply)
    assert outcome.reply.id == "u1"
    assert outcome.reply.confirmed is True


def test_envelope_keys_and_order() -> None:
    assert json.dumps(success_response("abort")) == '{"type": "response", "command": "abort", "success": true}'
    assert success_response("cycle_model", "1", None) == {
        "id": "1",
        "type": "response",
        "command": "cycle_model",
        "success": True,
        "data": None,
    }
    assert "data" not in success_response("abort", "1", NO_DATA)
    assert error_response("x", "boom", 3) == {
        "id": 3,
        "type": "response",
        "command": "x",
        "success": False,
        "error": "boom",
    }
    RpcSuccessResponse.model_validate(success_response("get_state", "1", {"a": 1}))
    RpcErrorResponse.model_validate(error_response("x", "boom"))
