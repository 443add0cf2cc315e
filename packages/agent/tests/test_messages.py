"""The AgentMessage registry: base roles, registered roles, unknown roles (spec agent.md §1)."""

from typing import Literal

import pytest
from pydantic import ValidationError

from apex_agent.messages import (
    MessageRegistry,
    UnknownMessage,
    default_convert_to_llm,
    default_registry,
    dump_message,
)
from apex_ai._wire import WireModel
from apex_ai.types import AssistantMessage, SystemMessage, TextContent, UserMessage


class BranchSummary(WireModel):
    role: Literal["branchSummary"] = "branchSummary"
    summary: str
    from_id: str | None
    timestamp: int


def test_unknown_role_round_trips_unchanged_and_is_dropped_for_llm() -> None:
    data = {"role": "notification", "timestamp": 5, "text": "hey", "nested": {"a": None}, "flag": None}
    msg = default_registry.parse(data)
    assert isinstance(msg, UnknownMessage)
    assert msg.role == "notification"
    assert default_registry.dump(msg) == data
    user = UserMessage(content="hi", timestamp=1)
    assert default_convert_to_llm([msg, user]) == [user]


def test_base_roles_parse_to_provider_types() -> None:
    registry = MessageRegistry()
    msg = registry.parse({"role": "user", "content": [{"type": "text", "text": "x"}], "timestamp": 3})
    assert msg == UserMessage(content=[TextContent(text="x")], timestamp=3)
    assert isinstance(registry.parse({"role": "system", "content": "s", "timestamp": 0}), SystemMessage)
    with pytest.raises(ValidationError):
        registry.parse({"role": "assistant", "content": []})


def test_registered_role_parses_and_keeps_required_null() -> None:
    # The shared registry may already know the role (apex_coding_agent registers it on import when both
    # suites run in one process); what matters is that a private registry leaves it unchanged.
    shared_before = default_registry.is_registered("branchSummary")
    registry = MessageRegistry()
    registry.register("branchSummary", BranchSummary)
    data = {"role": "branchSummary", "summary": "s", "fromId": None, "timestamp": 9}
    msg = registry.parse(data)
    assert isinstance(msg, BranchSummary)
    assert registry.dump(msg) == data
    assert registry.is_registered("branchSummary") and registry.is_registered("user")
    assert not registry.is_registered("notification")
    assert default_registry.is_registered("branchSummary") == shared_before
    assert default_convert_to_llm([msg]) == []


def test_duplicate_or_base_role_registration_fails() -> None:
    registry = MessageRegistry()
    registry.register("branchSummary", BranchSummary)
    with pytest.raises(ValueError, match="already registered"):
        registry.register("branchSummary", BranchSummary)
    with pytest.raises(ValueError, match="already registered"):
        registry.register("user", BranchSummary)
    clone = registry.copy()
    assert clone.is_registered("branchSummary")


def test_dump_message_of_assistant_is_camel_case() -> None:
    msg = AssistantMessage(api="a", provider="p", model="m", stop_reason="stop", timestamp=1)
    out = dump_message(msg)
    assert out["stopReason"] == "stop" and "errorMessage" not in out
