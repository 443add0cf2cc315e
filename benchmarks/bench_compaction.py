"""Compaction preparation figure: cut point + serialization for a 50k-entry session (goal <= 200 ms).

Builds an in-memory session whose main branch has 50k entries (user / assistant with a tool call / tool result of
~1 KB, a model change every 500 entries) and times, over several runs: `get_branch()`, `prepare_compaction`
(previous-compaction lookup, context estimate, cut point, summarized range, file lists, kept tail) and
`serialize_conversation` + prompt assembly of the summarized range with the input budget `compact()` uses for a
200k-window model (the newest part of the span that fits the summarizer). Entries are already parsed, as they are in
a running session. Also printed, outside the goal: serializing the whole span without a budget, and with
`--from-file`, the "reopen then prepare" figures: the session gets a compaction that keeps its last ~600 entries and
300 more entries, is closed and reopened, and the first preparation is timed on the lazy `get_branch_view()` (parses
from the previous compaction's kept range on; goal <= 200 ms) and on the eager `get_branch()` (parses every entry).
Run: `uv run python benchmarks/bench_compaction.py [--entries N] [--runs R] [--from-file]`.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from apex_ai.types import AssistantMessage, Model, TextContent, ToolCall, ToolResultMessage, Usage, UserMessage
from apex_coding_agent.compaction import CompactionSettings, prepare_compaction, serialize_conversation
from apex_coding_agent.compaction.prompts import compaction_prompt
from apex_coding_agent.compaction.summarize import input_char_budget
from apex_coding_agent.session.session_manager import SessionManager

GOAL_MS = 200.0
MODEL = Model(id="bench", api="anthropic-messages", provider="anthropic", context_window=200_000, max_tokens=64_000)
MAX_TOKENS = 13107  # floor(0.8 * reserveTokens) with the default reserve


def _fill(sm: SessionManager, entries: int) -> None:
    i = 0
    while i < entries:
        kind = i % 3
        if i % 500 == 499:
            sm.append_model_change("anthropic", "claude-x")
        elif kind == 0:
            sm.append_message(UserMessage(content=[TextContent(text=f"question {i} " + "w" * 200)], timestamp=i))
        elif kind == 1:
            call = ToolCall(id=f"c{i}", name="read" if i % 2 else "edit", arguments={"path": f"src/f{i % 97}.py"})
            sm.append_message(
                AssistantMessage(
                    content=[TextContent(text=f"answer {i} " + "a" * 300), call],
                    api="anthropic-messages",
                    provider="anthropic",
                    model="claude-x",
                    usage=Usage(input=1000, output=50, total_tokens=1050),
                    stop_reason="toolUse",
                    timestamp=i,
                )
            )
        else:
            sm.append_message(
                ToolResultMessage(
                    tool_call_id=f"c{i - 1}",
                    tool_name="read",
                    content=[TextContent(text="r" * 1000)],
                    timestamp=i,
                )
            )
        i += 1


def _time_prepare(sm: SessionManager, settings: CompactionSettings) -> tuple[float, float, float, int, int]:
    t0 = time.perf_counter()
    path = sm.get_branch()
    t1 = time.perf_counter()
    prep = prepare_compaction(path, settings)
    t2 = time.perf_counter()
    assert prep is not None
    budget = input_char_budget(MODEL, MAX_TOKENS, prep.previous_summary or "")
    prompt = compaction_prompt(serialize_conversation(prep.messages_to_summarize, budget), prep.previous_summary, None)
    t3 = time.perf_counter()
    return (t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000, len(prep.messages_to_summarize), len(prompt)


def _reopen_then_prepare(session_file: Path, settings: CompactionSettings, lazy: bool) -> tuple[float, float, int]:
    """(open ms, branch + prepare ms, entries parsed) for a fresh open of `session_file`."""
    t0 = time.perf_counter()
    reopened = SessionManager.open(session_file)
    t1 = time.perf_counter()
    path = reopened.get_branch_view() if lazy else reopened.get_branch()
    prep = prepare_compaction(path, settings)
    t2 = time.perf_counter()
    assert prep is not None and prep.previous_summary is not None
    parsed = sum(1 for record in reopened.iter_records() if record.is_parsed)
    reopened.close()
    return (t1 - t0) * 1000, (t2 - t1) * 1000, parsed


def _add_compaction(sm: SessionManager, kept: int, after: int) -> None:
    branch = sm.get_branch_records()
    sm.append_compaction(
        "Earlier work. " * 100, branch[-kept].id, 150_000, details={"readFiles": [], "modifiedFiles": []}
    )
    _fill(sm, after)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--from-file", action="store_true")
    args = parser.parse_args()
    settings = CompactionSettings()

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        sm = SessionManager.create("/bench", session_dir=tmp) if args.from_file else SessionManager.in_memory("/b")
        _fill(sm, args.entries)
        print(f"built {args.entries} entries in {time.perf_counter() - started:.1f} s")

        runs = [_time_prepare(sm, settings) for _ in range(args.runs)]
        branch = statistics.median(r[0] for r in runs)
        prepare = statistics.median(r[1] for r in runs)
        serialize = statistics.median(r[2] for r in runs)
        total = statistics.median(r[0] + r[1] + r[2] for r in runs)
        print(f"summarized messages: {runs[0][3]}, prompt chars: {runs[0][4]}")
        print(f"get_branch:          {branch:8.1f} ms")
        print(f"prepare_compaction:  {prepare:8.1f} ms")
        print(f"serialize + prompt:  {serialize:8.1f} ms")
        verdict = "ok" if total <= GOAL_MS else "OVER GOAL"
        print(f"total (median of {args.runs}): {total:8.1f} ms  (goal <= {GOAL_MS:.0f} ms: {verdict})")

        prep = prepare_compaction(sm.get_branch(), settings)
        assert prep is not None
        t0 = time.perf_counter()
        full = serialize_conversation(prep.messages_to_summarize)
        print(
            f"(unbudgeted serialization of the whole span: {(time.perf_counter() - t0) * 1000:.1f} ms, {len(full)} chars)"
        )

        if args.from_file:
            session_file = sm.session_file
            assert session_file is not None
            _add_compaction(sm, kept=600, after=300)
            entries = sum(1 for _ in sm.iter_records())
            sm.close()
            print(f"reopen then prepare ({entries} entries, previous compaction keeps the last ~900):")
            for lazy in (True, False):
                figures = [_reopen_then_prepare(Path(session_file), settings, lazy) for _ in range(args.runs)]
                opened = statistics.median(f[0] for f in figures)
                first = statistics.median(f[1] for f in figures)
                name = "get_branch_view()" if lazy else "get_branch()     "
                goal = f"  (goal <= {GOAL_MS:.0f} ms: {'ok' if first <= GOAL_MS else 'OVER GOAL'})" if lazy else ""
                print(
                    f"  {name} open {opened:7.1f} ms, first prepare {first:8.1f} ms, "
                    f"{figures[0][2]} entries parsed{goal}"
                )


if __name__ == "__main__":
    main()
