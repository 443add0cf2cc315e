"""Cut point selection and preparation (compaction.md §4-§5; acceptance 3-6, 10)."""

from compaction_helpers import assistant, call, result, tool_turn, user

from apex_ai.types import ToolResultMessage, UserMessage
from apex_coding_agent.compaction import (
    CompactionSettings,
    context_messages,
    estimate_context_tokens,
    find_cut_point,
    prepare_compaction,
)
from apex_coding_agent.compaction.prepare import estimate_path_tokens
from apex_coding_agent.session.entries import MessageEntry
from apex_coding_agent.session.session_manager import SessionManager


def _tool_heavy_session(turns: int = 12) -> SessionManager:
    sm = SessionManager.in_memory("/w")
    for turn in range(turns):
        steps = [(call("read", path=f"f{turn}_{i}.py"), "x" * (100 + 37 * i)) for i in range(4)]
        tool_turn(sm, f"request {turn}", steps, f"done {turn}")
    return sm


def test_first_kept_entry_is_never_a_tool_result() -> None:
    sm = _tool_heavy_session()
    path = sm.get_branch()
    for keep in (1, 10, 30, 60, 100, 150, 400, 1000):
        prep = prepare_compaction(path, CompactionSettings(keep_recent_tokens=keep))
        assert prep is not None
        kept = sm.get_entry(prep.first_kept_entry_id)
        assert isinstance(kept, MessageEntry)
        assert not isinstance(kept.message, ToolResultMessage)
        # Every kept tool result has its call in the kept messages.
        kept_calls = {
            c.id
            for m in prep.kept_messages
            if hasattr(m, "content")
            for c in getattr(m, "content", [])
            if getattr(c, "type", None) == "toolCall"
        }
        for message in prep.kept_messages:
            if isinstance(message, ToolResultMessage):
                assert message.tool_call_id in kept_calls


def test_model_change_before_the_cut_is_kept() -> None:
    sm = SessionManager.in_memory("/w")
    sm.append_message(user("old " * 200))
    sm.append_message(assistant("old answer " * 50))
    change = sm.append_model_change("anthropic", "claude")
    level = sm.append_thinking_level_change("high")
    new_user = sm.append_message(user("new request"))
    sm.append_message(assistant("new answer"))
    path = sm.get_branch()
    cut = find_cut_point(path, 0, len(path), keep_recent_tokens=5)
    assert path[cut.first_kept_index].id == change
    assert [e.id for e in path[cut.first_kept_index : cut.first_kept_index + 3]] == [change, level, new_user]
    assert not cut.is_split_turn
    prep = prepare_compaction(path, CompactionSettings(keep_recent_tokens=5))
    assert prep is not None and prep.first_kept_entry_id == change
    assert len(prep.messages_to_summarize) == 2


def test_one_huge_turn_is_split() -> None:
    sm = SessionManager.in_memory("/w")
    ids = tool_turn(
        sm, "fix everything", [(call("bash", command=f"step {i}"), "o" * 400) for i in range(6)], "all done"
    )
    path = sm.get_branch()
    prep = prepare_compaction(path, CompactionSettings(keep_recent_tokens=150))
    assert prep is not None
    assert prep.is_split_turn
    assert prep.messages_to_summarize == []
    assert isinstance(prep.turn_prefix_messages[0], UserMessage)
    first_kept = path[[e.id for e in path].index(prep.first_kept_entry_id)]
    assert isinstance(first_kept, MessageEntry) and first_kept.message.role == "assistant"
    assert prep.first_kept_entry_id in ids[1:]


def test_cut_with_no_valid_entries_summarizes_nothing() -> None:
    sm = SessionManager.in_memory("/w")
    sm.append_model_change("faux", "faux-1")
    sm.append_custom_entry("state", {"a": 1})
    path = sm.get_branch()
    cut = find_cut_point(path, 0, len(path), 10)
    assert (cut.first_kept_index, cut.is_split_turn) == (0, False)
    assert prepare_compaction(path) is None


def test_small_session_has_nothing_to_compact() -> None:
    sm = SessionManager.in_memory("/w")
    sm.append_message(user("hi"))
    sm.append_message(assistant("hello"))
    assert prepare_compaction(sm.get_branch()) is None


def test_branch_ending_in_compaction_is_not_prepared() -> None:
    sm = _tool_heavy_session(2)
    path = sm.get_branch()
    sm.append_compaction("s", path[3].id, 100)
    assert prepare_compaction(sm.get_branch(), CompactionSettings(keep_recent_tokens=1)) is None


def test_second_compaction_starts_at_first_kept_and_passes_previous_summary() -> None:
    sm = _tool_heavy_session(6)
    settings = CompactionSettings(keep_recent_tokens=300)
    first = prepare_compaction(sm.get_branch(), settings)
    assert first is not None and first.previous_summary is None
    sm.append_compaction("FIRST SUMMARY", first.first_kept_entry_id, first.tokens_before)
    tool_turn(sm, "more work", [(call("edit", path="z.py"), "y" * 900)], "ok")
    path = sm.get_branch()
    second = prepare_compaction(path, settings)
    assert second is not None
    assert second.previous_summary == "FIRST SUMMARY"
    first_kept = sm.get_entry(first.first_kept_entry_id)
    assert isinstance(first_kept, MessageEntry)
    assert second.messages_to_summarize[0] == first_kept.message


def test_tokens_before_uses_the_context_estimate() -> None:
    sm = SessionManager.in_memory("/w")
    sm.append_message(user("a" * 400))
    sm.append_message(assistant("b", total=1000))
    sm.append_message(user("c" * 400))
    sm.append_message(assistant("d" * 40))
    prep = prepare_compaction(sm.get_branch(), CompactionSettings(keep_recent_tokens=5))
    assert prep is not None
    assert prep.tokens_before == 1000 + 100 + 10


def test_a_large_tool_result_is_summarized_together_with_its_call() -> None:
    sm = SessionManager.in_memory("/w")
    sm.append_message(user("q " * 300))
    c = call("read", path="a.py")
    sm.append_message(assistant(calls=[c]))
    sm.append_message(result(c, "r" * 4000))
    final = sm.append_message(assistant("the file says r"))
    prep = prepare_compaction(sm.get_branch(), CompactionSettings(keep_recent_tokens=100))
    assert prep is not None
    assert prep.first_kept_entry_id == final
    assert prep.is_split_turn
    assert [m.role for m in prep.turn_prefix_messages] == ["user", "assistant", "toolResult"]
    assert [m.role for m in prep.kept_messages] == ["assistant"]


def test_no_valid_cut_after_the_budget_point_keeps_everything() -> None:
    # The budget is reached at the trailing tool result, and no valid cut follows it: the spec's default cut
    # (the first valid entry) applies, so nothing is summarized rather than orphaning the result.
    sm = SessionManager.in_memory("/w")
    sm.append_message(user("q " * 300))
    c = call("read", path="a.py")
    sm.append_message(assistant(calls=[c]))
    sm.append_message(result(c, "r" * 4000))
    assert prepare_compaction(sm.get_branch(), CompactionSettings(keep_recent_tokens=100)) is None


def test_tail_only_token_estimate_matches_the_rebuilt_context() -> None:
    sm = _tool_heavy_session(3)
    sm.append_message(assistant("no usage yet"))
    path = sm.get_branch()
    checks = [path]
    sm.append_compaction("summary " * 20, path[5].id, 100)  # no retained tail: kept range from the entries
    sm.append_message(user("after"))
    checks.append(sm.get_branch())
    sm.append_compaction("again", sm.get_branch()[-1].id, 10, retained_tail=[user("tail"), assistant("t", total=77)])
    sm.append_message(user("later " * 10))
    checks.append(sm.get_branch())
    for branch in checks:
        expected = estimate_context_tokens(context_messages(branch)).tokens
        assert estimate_path_tokens(branch) == expected
    assert context_messages(sm.get_branch()) == sm.build_session_context().messages
    assert estimate_path_tokens(sm.get_branch()) == 77 + 15
