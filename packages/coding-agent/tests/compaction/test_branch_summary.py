"""Branch summarization for tree navigation (compaction.md §9; acceptance 17)."""

from compaction_helpers import Recorder, assistant, call, faux_with, result, user

from apex_ai.providers.faux import FauxProvider, faux_assistant_message
from apex_coding_agent.compaction import (
    BranchSummaryResult,
    SummaryFailure,
    apply_branch_summary,
    collect_entries_for_branch_summary,
    prepare_branch_entries,
    summarize_branch,
)
from apex_coding_agent.messages import BranchSummaryMessage
from apex_coding_agent.session.entries import BranchSummaryEntry
from apex_coding_agent.session.session_manager import SessionManager


def _tree() -> tuple[SessionManager, dict[str, str]]:
    """A - B - C - D (leaf) and A - E."""
    sm = SessionManager.in_memory("/w")
    ids = {"A": sm.append_message(user("start"))}
    c = call("edit", path="lib.py")
    ids["B"] = sm.append_message(assistant("trying", calls=[c]))
    ids["C"] = sm.append_message(result(c, "edited"))
    ids["D"] = sm.append_message(assistant("tried", calls=[call("read", path="doc.md")]))
    sm.branch(ids["A"])
    ids["E"] = sm.append_message(assistant("other way"))
    sm.branch(ids["D"])
    return sm, ids


async def test_abandoned_branch_is_collected_and_summarized_at_the_new_leaf() -> None:
    sm, ids = _tree()
    collection = collect_entries_for_branch_summary(sm, sm.get_leaf_id(), ids["E"])
    assert [e.id for e in collection.entries] == [ids["B"], ids["C"], ids["D"]]
    assert collection.common_ancestor_id == ids["A"]

    recorder = Recorder(lambda prompt: "## Goal\nexplored edits")
    faux = faux_with(recorder)
    outcome = await summarize_branch(collection.entries, faux.model(), custom_instructions="mention lib.py")
    assert isinstance(outcome, BranchSummaryResult)
    prompt = recorder.prompts[0]
    assert "[Tool result]" not in prompt  # tool results are left out of branch summaries
    assert '[Assistant tool calls]: edit(path="lib.py")' in prompt
    assert prompt.endswith("\n\nAdditional focus: mention lib.py")
    assert recorder.options[0].max_tokens == 2048
    assert recorder.options[0].cache_retention == "none"
    assert outcome.summary.startswith(
        "The user explored a different conversation branch before returning here.\n"
        "Summary of that exploration:\n\n## Goal\nexplored edits"
    )
    assert outcome.summary.endswith(
        "<read-files>\ndoc.md\n</read-files>\n\n<modified-files>\nlib.py\n</modified-files>"
    )
    assert outcome.details == {"readFiles": ["doc.md"], "modifiedFiles": ["lib.py"]}

    entry_id = apply_branch_summary(sm, ids["E"], outcome)
    entry = sm.get_entry(entry_id)
    assert isinstance(entry, BranchSummaryEntry)
    assert entry.parent_id == ids["E"] and entry.from_id == ids["E"] and entry.from_hook is False
    assert sm.get_leaf_id() == entry_id
    last = sm.build_session_context().messages[-1]
    assert isinstance(last, BranchSummaryMessage) and last.summary == outcome.summary


def test_no_old_leaf_collects_nothing() -> None:
    sm, ids = _tree()
    assert collect_entries_for_branch_summary(sm, None, ids["E"]).entries == []
    everything = collect_entries_for_branch_summary(sm, ids["D"], None)
    assert [e.id for e in everything.entries] == [ids["A"], ids["B"], ids["C"], ids["D"]]
    assert everything.common_ancestor_id is None


async def test_empty_branch_needs_no_model_call() -> None:
    sm, ids = _tree()
    faux = FauxProvider()
    label = sm.append_label_change(ids["A"], "x")
    entry = sm.get_entry(label)
    assert entry is not None
    outcome = await summarize_branch([entry], faux.model())
    assert outcome == BranchSummaryResult("No content to summarize", {"readFiles": [], "modifiedFiles": []})
    assert faux.state.call_count == 0


async def test_replace_instructions_sends_only_the_custom_text() -> None:
    sm, ids = _tree()
    recorder = Recorder(lambda prompt: "short")
    faux = faux_with(recorder)
    entries = collect_entries_for_branch_summary(sm, ids["D"], ids["E"]).entries
    await summarize_branch(entries, faux.model(), custom_instructions="ONLY THIS", replace_instructions=True)
    assert recorder.prompts[0].endswith("</conversation>\n\nONLY THIS")
    assert "## Goal" not in recorder.prompts[0]


async def test_failed_branch_summary_is_returned_and_nothing_appended() -> None:
    sm, ids = _tree()
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message([], stop_reason="error", error_message="boom")])
    count = len(sm.get_entries())
    outcome = await summarize_branch(collect_entries_for_branch_summary(sm, ids["D"], ids["E"]).entries, faux.model())
    assert outcome == SummaryFailure("error", "Branch summarization failed: boom")
    assert len(sm.get_entries()) == count


def test_budget_keeps_newest_messages_and_summaries_below_ninety_percent() -> None:
    sm = SessionManager.in_memory("/w")
    old = sm.append_message(user("o" * 400))  # 100 tokens
    sm.branch_with_summary(old, "s" * 200, details={"readFiles": ["from_summary.py"]})  # 50 tokens
    sm.append_message(user("n" * 200))  # 50 tokens
    path = sm.get_branch()
    prep = prepare_branch_entries(path, 120)
    # newest user (50) fits; the summary (50) would pass 120? 100 <= 120 fits; the old user (100) does not.
    assert [m.role for m in prep.messages] == ["branchSummary", "user"]
    assert prep.total_tokens == 100
    assert prep.file_ops.details()["readFiles"] == ["from_summary.py"]
    tight = prepare_branch_entries(path, 90)
    # 50 + 50 > 90, but 50 < 81 (90% of the budget): a summary is still taken.
    assert [m.role for m in tight.messages] == ["branchSummary", "user"]
