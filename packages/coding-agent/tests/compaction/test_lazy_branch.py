"""Compaction over a lazy branch view: a reopened session parses only what compaction reads (compaction.md §4)."""

from __future__ import annotations

from pathlib import Path

from compaction_helpers import Recorder, assistant, call, faux_with, tool_turn, user

from apex_coding_agent.compaction import (
    CompactionSettings,
    compact_branch,
    context_messages,
    estimate_tokens,
    latest_compaction_index,
    prepare_compaction,
)
from apex_coding_agent.compaction.compact import CompactionResult, apply_compaction
from apex_coding_agent.compaction.prepare import estimate_path_tokens
from apex_coding_agent.messages import CompactionSummaryMessage
from apex_coding_agent.session.entries import MessageEntry
from apex_coding_agent.session.session_manager import SessionManager

SETTINGS = CompactionSettings(keep_recent_tokens=200)


def _long_session(directory: Path, turns: int = 30, retained_tail: bool = False) -> tuple[Path, str]:
    """A persisted session: `turns` tool turns, a compaction keeping the last 4 turns, 3 more turns.
    Returns the file and the previous compaction's firstKeptEntryId."""
    sm = SessionManager.create("/w", session_dir=directory)
    ids: list[str] = []
    for turn in range(turns):
        steps = [(call("read", path=f"f{turn}_{i}.py"), "x" * 300) for i in range(2)]
        ids += tool_turn(sm, f"request {turn}", steps, f"done {turn}")
    first_kept = ids[-24]
    tail = [e.agent_message for e in sm.get_branch()[-24:] if isinstance(e, MessageEntry)] if retained_tail else None
    sm.append_compaction(
        "earlier work", first_kept, 5000, details={"readFiles": ["a.py"], "modifiedFiles": []}, retained_tail=tail
    )
    for turn in range(3):
        tool_turn(sm, f"later {turn}", [(call("edit", path=f"g{turn}.py"), "y" * 300)], f"ok {turn}")
    file = sm.session_file
    assert file is not None
    sm.close()
    return file, first_kept


def test_prepare_on_a_reopened_view_parses_only_from_the_kept_range(tmp_path: Path) -> None:
    for retained in (False, True):
        file, first_kept = _long_session(tmp_path / str(retained), retained_tail=retained)
        sm = SessionManager.open(file)
        view = sm.get_branch_view()
        before = [r.is_parsed for r in view.records]
        prep = prepare_compaction(view, SETTINGS)
        boundary = view.index_of(first_kept)
        assert prep is not None and boundary is not None and boundary > 100
        newly_parsed = [i for i, r in enumerate(view.records) if r.is_parsed and not before[i]]
        assert newly_parsed and min(newly_parsed) == boundary
        assert view.parsed_count() < len(view) // 3
        eager = prepare_compaction(SessionManager.open(file).get_branch(), SETTINGS)
        assert eager is not None
        assert prep.first_kept_entry_id == eager.first_kept_entry_id
        assert prep.messages_to_summarize == eager.messages_to_summarize
        assert prep.turn_prefix_messages == eager.turn_prefix_messages
        assert prep.kept_messages == eager.kept_messages
        assert prep.tokens_before == eager.tokens_before
        assert prep.previous_summary == "earlier work"
        assert prep.file_ops.details() == eager.file_ops.details()
        assert "a.py" in prep.file_ops.details()["readFiles"]
        sm.close()


def test_context_and_estimate_skip_an_older_compaction_in_the_kept_range() -> None:
    sm = SessionManager.in_memory("/w")
    sm.append_message(user("one"))
    sm.append_message(assistant("a1"))
    two = sm.append_message(user("two"))
    sm.append_message(assistant("a2"))
    sm.append_compaction("S1", two, 100, retained_tail=[user("two"), assistant("a2")])
    sm.append_message(user("three"))
    sm.append_message(assistant("a3"))
    sm.append_compaction("S2", two, 200)  # kept range (from "two") contains the compaction S1; no retained tail
    sm.append_message(user("four " * 40))
    messages = context_messages(sm.get_branch())
    assert messages == sm.build_session_context().messages
    assert messages == context_messages(sm.get_branch_view())
    assert [m.summary for m in messages if isinstance(m, CompactionSummaryMessage)] == ["S2"]
    assert len(messages) == 6
    # The tail-only estimate walks the same messages: S1's summary and tail are not counted.
    for path in (sm.get_branch(), sm.get_branch_view()):
        assert estimate_path_tokens(path) == sum(estimate_tokens(m) for m in messages)


async def test_compact_branch_with_a_view_applies_like_the_parsed_branch(tmp_path: Path) -> None:
    file, _ = _long_session(tmp_path)
    results: list[CompactionResult] = []
    for lazy in (True, False):
        sm = SessionManager.open(file)
        path = sm.get_branch_view() if lazy else sm.get_branch()
        recorder = Recorder()
        outcome = await compact_branch(path, faux_with(recorder, 2).model(), SETTINGS)
        assert isinstance(outcome, CompactionResult)
        assert "earlier work" in recorder.prompts[0]
        assert outcome.summary.count("<read-files>") == 1 and "a.py" in outcome.summary
        results.append(outcome)
        sm.close()
    assert results[0].first_kept_entry_id == results[1].first_kept_entry_id
    assert results[0].retained_tail == results[1].retained_tail
    assert results[0].details == results[1].details
    sm = SessionManager.open(file)
    apply_compaction(sm, results[0])
    context = sm.build_session_context().messages
    assert isinstance(context[0], CompactionSummaryMessage) and context[1:] == results[0].retained_tail
    sm.close()


def test_latest_compaction_lookup_reads_types_only(tmp_path: Path) -> None:
    file, _ = _long_session(tmp_path)
    sm = SessionManager.open(file)
    view = sm.get_branch_view()
    parsed = view.parsed_count()
    at = latest_compaction_index(view)
    assert view.type_at(at) == "compaction" and view.parsed_count() == parsed + 1
    assert latest_compaction_index(sm.get_branch_view(view.id_at(at - 1))) == -1
    assert view.parsed_count() == parsed + 1
    assert latest_compaction_index(sm.get_branch()) == at
    sm.close()
