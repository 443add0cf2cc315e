"""The `compaction` entry's Apex bookkeeping fields (`trigger`, `tokensAfter`, `model`): written when given, left out
otherwise, so an entry of the original product (which has none of them) loads and writes back byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

from session_test_helpers import assistant, copy_sample, read_lines, user

from apex_coding_agent.messages import CompactionSummaryMessage
from apex_coding_agent.session.entries import CompactionEntry, dump_line, parse_entry
from apex_coding_agent.session.session_manager import SessionManager

# A compaction line as the original product writes it: no trigger, tokensAfter or model.
PI_LINE = (
    b'{"type":"compaction","id":"0000000c","parentId":"0000000b","timestamp":"2025-06-01T10:00:10.000Z",'
    b'"summary":"Listed files.","firstKeptEntryId":"00000005","tokensBefore":1234,'
    b'"details":{"readFiles":[],"modifiedFiles":[]},"fromHook":false}\n'
)


def _compaction_lines(path: Path) -> list[dict[str, object]]:
    return [r for r in read_lines(path) if r.get("type") == "compaction"]


def test_bookkeeping_fields_are_written_camel_case(tmp_path: Path) -> None:
    sm = SessionManager.create(str(tmp_path))
    first = sm.append_message(user("hi"))
    sm.append_message(assistant("hello"))
    entry_id = sm.append_compaction(
        "Summary.", first, 5000, trigger="threshold", tokens_after=812, model="anthropic/claude-sonnet-4-5"
    )
    sm.close()
    assert sm.session_file is not None

    (record,) = _compaction_lines(sm.session_file)
    assert record["id"] == entry_id
    assert (record["trigger"], record["tokensBefore"], record["tokensAfter"], record["model"]) == (
        "threshold",
        5000,
        812,
        "anthropic/claude-sonnet-4-5",
    )
    assert not {"tokens_after", "tokens_before"} & set(record)

    reopened = SessionManager.open(sm.session_file)
    entry = reopened.get_entry(entry_id)
    assert isinstance(entry, CompactionEntry)
    assert (entry.trigger, entry.tokens_before, entry.tokens_after, entry.model) == (
        "threshold",
        5000,
        812,
        "anthropic/claude-sonnet-4-5",
    )


def test_fields_left_out_when_not_given(tmp_path: Path) -> None:
    sm = SessionManager.create(str(tmp_path))
    first = sm.append_message(user("hi"))
    sm.append_message(assistant("hello"))
    sm.append_compaction("Summary.", first, 77)
    sm.close()
    assert sm.session_file is not None
    (record,) = _compaction_lines(sm.session_file)
    assert not {"trigger", "tokensAfter", "model"} & set(record)
    assert record["tokensBefore"] == 77


def test_original_product_entry_round_trips_byte_identically() -> None:
    entry = parse_entry(json.loads(PI_LINE))
    assert isinstance(entry, CompactionEntry)
    assert (entry.trigger, entry.tokens_after, entry.model) == (None, None, None)
    assert entry.tokens_before == 1234
    assert dump_line(entry) == PI_LINE


def test_original_product_file_loads_and_keeps_its_bytes(tmp_path: Path) -> None:
    path = copy_sample("v3.jsonl", tmp_path)
    before = path.read_bytes()
    assert PI_LINE in before  # the sample's compaction is the original product's shape

    sm = SessionManager.open(path)
    (entry,) = [e for e in sm.get_entries() if isinstance(e, CompactionEntry)]
    assert (entry.summary, entry.tokens_before, entry.trigger, entry.model) == ("Listed files.", 1234, None, None)
    sm.branch(entry.id)  # the sample's leaf is on another branch
    summary = sm.build_session_context().messages[0]
    assert isinstance(summary, CompactionSummaryMessage) and summary.tokens_before == 1234

    # Appending after it leaves every existing line as it was.
    sm.append_message(user("more"))
    sm.close()
    after = path.read_bytes()
    assert after.startswith(before) and after != before


def test_foreign_values_of_the_new_names_still_load_as_a_compaction() -> None:
    # Another writer may use these names with its own values; they must not demote the entry to an unknown one.
    line = json.loads(PI_LINE)
    line.update({"trigger": "custom-trigger", "tokensAfter": 10})
    entry = parse_entry(line)
    assert isinstance(entry, CompactionEntry) and entry.trigger == "custom-trigger"
    assert json.loads(dump_line(entry)) == line
