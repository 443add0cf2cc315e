"""`SessionManager.get_stored_model_and_thinking` / `stored_settings`: the branch's model and thinking level as the
context reads them (spec sessions.md §6.2), from a backward scan that parses only the entries it stops at."""

from __future__ import annotations

from pathlib import Path

from session_test_helpers import assistant, user

from apex_ai.types import AssistantMessage
from apex_coding_agent.session import MessageEntry, ModelChangeEntry, SessionManager, ThinkingLevelChangeEntry
from apex_coding_agent.session.context import ModelRef, StoredSettings


def _forward_scan(sm: SessionManager) -> StoredSettings:
    """The spec's wording, read literally: a forward pass over every entry of the branch, the last setter wins."""
    level: str | None = None
    model: ModelRef | None = None
    for entry in sm.get_branch():
        if isinstance(entry, ThinkingLevelChangeEntry):
            level = entry.thinking_level
        elif isinstance(entry, ModelChangeEntry):
            model = ModelRef(entry.provider, entry.model_id)
        elif isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
            model = ModelRef(entry.message.provider, entry.message.model)
    return StoredSettings(thinking_level=level or "off", has_thinking_change=level is not None, model=model)


def _from_context(sm: SessionManager) -> StoredSettings:
    ctx = sm.build_session_context()
    return StoredSettings(
        thinking_level=ctx.thinking_level, has_thinking_change=ctx.has_thinking_change, model=ctx.model
    )


def _main_branch(sm: SessionManager) -> dict[str, str]:
    """Model changes, thinking changes, replies from other models and a compaction; returns ids by name."""
    ids: dict[str, str] = {}
    ids["u0"] = sm.append_message(user("before any setting", 1))
    ids["model_m1"] = sm.append_model_change("p", "m1")
    ids["think_low"] = sm.append_thinking_level_change("low")
    ids["u1"] = sm.append_message(user("u1", 2))
    ids["a1_other"] = sm.append_message(assistant("a1", 3, provider="other", model="o1"))
    ids["u2"] = sm.append_message(user("u2", 4))
    ids["a2_other"] = sm.append_message(assistant("a2", 5, provider="other", model="o1"))
    ids["compaction"] = sm.append_compaction("summary", ids["u2"], 400)
    ids["u3"] = sm.append_message(user("u3", 6))
    ids["model_m2"] = sm.append_model_change("p", "m2")
    ids["think_high"] = sm.append_thinking_level_change("high")
    ids["a3_o2"] = sm.append_message(assistant("a3", 7, provider="other", model="o2"))
    ids["u4"] = sm.append_message(user("u4", 8))
    return ids


def test_every_point_of_a_branch_matches_the_forward_scan_and_the_context(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    ids = _main_branch(sm)
    expected = {
        "u0": StoredSettings(),
        "model_m1": StoredSettings(model=ModelRef("p", "m1")),
        "think_low": StoredSettings("low", True, ModelRef("p", "m1")),
        "u1": StoredSettings("low", True, ModelRef("p", "m1")),
        "a1_other": StoredSettings("low", True, ModelRef("other", "o1")),
        # The compaction summarises the replies but their settings still hold after it.
        "compaction": StoredSettings("low", True, ModelRef("other", "o1")),
        "u3": StoredSettings("low", True, ModelRef("other", "o1")),
        "model_m2": StoredSettings("low", True, ModelRef("p", "m2")),
        "think_high": StoredSettings("high", True, ModelRef("p", "m2")),
        # A reply names the model that answered, even right after a model change.
        "a3_o2": StoredSettings("high", True, ModelRef("other", "o2")),
        "u4": StoredSettings("high", True, ModelRef("other", "o2")),
    }
    for name, entry_id in ids.items():
        sm.branch(entry_id)
        stored = sm.get_stored_model_and_thinking()
        assert stored == _forward_scan(sm) == _from_context(sm), name
        if name in expected:
            assert stored == expected[name], name


def test_a_sibling_branch_does_not_see_the_other_branch_settings(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    ids = _main_branch(sm)
    sm.branch(ids["u1"])
    sm.append_model_change("side", "s1")
    sm.append_thinking_level_change("minimal")
    sm.append_message(user("side question", 9))
    assert sm.get_stored_model_and_thinking() == StoredSettings("minimal", True, ModelRef("side", "s1"))
    assert sm.get_stored_model_and_thinking() == _from_context(sm)
    sm.branch(ids["u4"])
    assert sm.get_stored_model_and_thinking() == StoredSettings("high", True, ModelRef("other", "o2"))


def test_empty_session_and_a_branch_without_settings(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    assert sm.get_stored_model_and_thinking() == StoredSettings() == _from_context(sm)
    sm.append_message(user("hi"))
    stored = sm.get_stored_model_and_thinking()
    assert (stored.thinking_level, stored.has_thinking_change, stored.model) == ("off", False, None)


def test_a_reopened_file_parses_only_the_entries_the_scan_stops_at(tmp_path: Path) -> None:
    sm = SessionManager.create(str(tmp_path / "project"), tmp_path / "sessions")
    _main_branch(sm)
    sm.append_message(assistant("a4", 10, provider="other", model="o3"))
    path = sm.session_file
    sm.close()
    assert path is not None

    reopened = SessionManager.open(path, tmp_path / "sessions")
    parsed_at_open = {r.id for r in reopened.iter_records() if r.is_parsed}
    records = reopened.get_branch_records()
    stored = reopened.get_stored_model_and_thinking()

    assert stored == StoredSettings("high", True, ModelRef("other", "o3"))
    # From the leaf back: the reply a4 gives the model, so later `message` records (u4, a3) are passed over unread;
    # the scan ends at `think_high`, and nothing before it is touched.
    think_high = next(i for i in range(len(records) - 1, -1, -1) if records[i].type == "thinking_level_change")
    newly_parsed = {r.id for r in records if r.is_parsed} - parsed_at_open
    assert newly_parsed == {records[-1].id, records[think_high].id}
    assert all(not r.is_parsed for r in records[:think_high] if r.id not in parsed_at_open)
    assert stored == _from_context(reopened)
    reopened.close()
