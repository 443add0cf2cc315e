"""Session load figures: open + build context of 50k-entry session files.

Two sessions are generated in a temp dir, both a long main branch of user/assistant/toolResult messages with an
abandoned side branch every 100 entries:

- `compacted` (~100 MB, tool outputs of a few KB) has a compaction near the end, so the context is its tail;
- `uncompacted` (~30 MB, short tool outputs) has none, so the context is every message of the branch: what resuming
  a long session that was never compacted costs (the runtime builds the context once when a session opens).

A fresh interpreter per figure set measures: reading the bytes, `SessionManager.open` + `build_session_context`,
their ratio, peak RSS (goal for both: <= 1 s and <= 200 MB), then the first full garbage collection after it (a
cost the parsed heap leaves for later unless the app freezes it), the first compaction preparation on the lazy
branch view (with how many entries it parsed) and the latency of appending entries. Each session is measured with
the cyclic collector on (as a library caller or `/resume` in a running app meets it) and paused (as the terminal
app's start-up runs). Run: `uv run python benchmarks/bench_session_load.py [--entries N]`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

GOAL_S = 1.0
GOAL_RSS_MB = 200.0
OUTPUT_BYTES = 4300  # tool output size: with the other entries this makes ~2 KB per entry on average
UNCOMPACTED_OUTPUT_BYTES = 640  # ~600 bytes per entry on average, as a chat-heavy session


def _line(data: dict[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n"


def _ts(i: int) -> str:
    seconds = 1_700_000_000 + i
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + ".000Z"


def _message(i: int, kind: int, rng: random.Random, output_bytes: int) -> dict[str, Any]:
    ms = (1_700_000_000 + i) * 1000
    if kind == 0:
        return {"role": "user", "content": [{"type": "text", "text": f"question {i} " + "w" * 200}], "timestamp": ms}
    if kind == 1:
        return {
            "role": "assistant",
            "content": [
                {"type": "text", "text": f"answer {i} " + "a" * 300},
                {"type": "toolCall", "id": f"call_{i}", "name": "bash", "arguments": {"command": f"cat f{i}.py"}},
            ],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-x",
            "usage": {
                "input": 1000,
                "output": 50,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 1050,
                "cost": {"input": 0.003, "output": 0.00075, "cacheRead": 0, "cacheWrite": 0, "total": 0.00375},
            },
            "stopReason": "toolUse",
            "timestamp": ms,
        }
    output = "".join(rng.choice("abcdefgh \n") for _ in range(64)) * (output_bytes // 64)
    return {
        "role": "toolResult",
        "toolCallId": f"call_{i - 1}",
        "toolName": "bash",
        "content": [{"type": "text", "text": output}],
        "isError": False,
        "timestamp": ms,
    }


def generate(path: Path, entries: int, compacted: bool = True) -> None:
    """Write a benchmark session: main chain, an abandoned 10-entry branch every 100 entries and, when `compacted`,
    one compaction near the end (with short tool outputs when not)."""
    rng = random.Random(7)
    chain: list[str] = []
    count = 0
    compaction_at = entries - 300 if compacted else -1
    output_bytes = OUTPUT_BYTES if compacted else UNCOMPACTED_OUTPUT_BYTES
    with path.open("w", encoding="utf-8") as out:
        out.write(_line({"type": "session", "version": 3, "id": "bench", "timestamp": _ts(0), "cwd": str(path.parent)}))

        def emit(parent: str | None, body: dict[str, Any]) -> str:
            nonlocal count
            entry_id = f"{count:08x}"
            out.write(
                _line({"type": body.pop("type"), "id": entry_id, "parentId": parent, "timestamp": _ts(count), **body})
            )
            count += 1
            return entry_id

        chain.append(emit(None, {"type": "model_change", "provider": "anthropic", "modelId": "claude-x"}))
        chain.append(emit(chain[-1], {"type": "thinking_level_change", "thinkingLevel": "medium"}))
        while count < entries:
            if count % 100 == 50 and len(chain) > 20:
                parent = chain[-10]
                for k in range(10):  # an abandoned side branch
                    parent = emit(parent, {"type": "message", "message": _message(count, k % 3, rng, output_bytes)})
                continue
            if compaction_at <= count < compaction_at + 1:
                body = {
                    "type": "compaction",
                    "summary": "Everything so far. " * 50,
                    "firstKeptEntryId": chain[-60],
                    "tokensBefore": 150_000,
                    "details": {"readFiles": [], "modifiedFiles": []},
                    "fromHook": False,
                }
                chain.append(emit(chain[-1], body))
                continue
            message = _message(count, len(chain) % 3, rng, output_bytes)
            chain.append(emit(chain[-1], {"type": "message", "message": message}))


def _peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(path: Path, appends: int, paused: bool) -> dict[str, float]:
    """Time read / open+context / appends in this (fresh) process, with the cyclic collector `paused` for the
    open + context (then resumed, as the app resumes it)."""
    from apex_coding_agent.compaction import prepare_compaction
    from apex_coding_agent.session.session_manager import SessionManager

    with path.open("rb") as handle:  # warm the page cache in 1 MB chunks so no run pays for the disk
        while handle.read(1 << 20):
            pass
    rss_before = _peak_rss_mb()

    gc.collect()
    if paused:
        gc.disable()
    start = time.perf_counter()
    manager = SessionManager.open(path)
    opened_s = time.perf_counter() - start
    context = manager.build_session_context()
    total_s = time.perf_counter() - start
    gc.enable()
    peak_rss = _peak_rss_mb()  # before the plain read below, which holds another copy of the bytes
    start = time.perf_counter()
    gc.collect()
    full_gc_s = time.perf_counter() - start

    start = time.perf_counter()
    preparation = prepare_compaction(manager.get_branch_view())
    prepare_s = time.perf_counter() - start
    assert preparation is not None
    parsed = sum(1 for record in manager.iter_records() if record.is_parsed)
    prepare_rss = _peak_rss_mb()

    read_times = []
    for _ in range(3):
        start = time.perf_counter()
        size = len(path.read_bytes())
        read_times.append(time.perf_counter() - start)
    read_s = min(read_times)

    latencies: list[float] = []
    for i in range(appends):
        begin = time.perf_counter()
        manager.append_custom_entry("bench", {"i": i})
        latencies.append(time.perf_counter() - begin)
    manager.close()
    latencies.sort()
    return {
        "size_mb": size / 1e6,
        "entries": float(sum(1 for _ in manager.iter_records()) - appends),
        "context_messages": float(len(context.messages)),
        "read_s": read_s,
        "open_s": opened_s,
        "open_context_s": total_s,
        "ratio": total_s / read_s if read_s else float("inf"),
        "peak_rss_mb": peak_rss,
        "full_gc_s": full_gc_s,
        "rss_before_open_mb": rss_before,
        "prepare_s": prepare_s,
        "parsed_entries": float(parsed),
        "prepare_peak_rss_mb": prepare_rss,
        "append_mean_us": statistics.mean(latencies) * 1e6,
        "append_p99_us": latencies[int(len(latencies) * 0.99) - 1] * 1e6,
    }


def _measure_in_child(path: Path, appends: int, env: dict[str, str], paused: bool = False) -> dict[str, float]:
    """Run `measure` in a fresh interpreter (so its RSS and imports are its own) and return its figures."""
    result = subprocess.run(
        [sys.executable, __file__, "--measure", str(path), "--appends", str(appends)]
        + (["--gc-paused"] if paused else []),
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    figures: dict[str, float] = json.loads(result.stdout)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=50_000)
    parser.add_argument("--appends", type=int, default=1000)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--gc-paused", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure is not None:
        print(json.dumps(measure(args.measure, args.appends, args.gc_paused)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        # The measuring process must import from cached bytecode, as an installed Apex Code does: with
        # PYTHONDONTWRITEBYTECODE set (as the test sessions set it) no cache is ever written and the modules that
        # `open` imports lazily would be compiled inside the timed region. A small warm-up run writes the caches.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        warmup = Path(tmp) / "warmup.jsonl"
        generate(warmup, 400)
        _measure_in_child(warmup, 10, env)
        for compacted in (True, False):
            name = "compacted" if compacted else "uncompacted"
            path = Path(tmp) / f"{name}.jsonl"
            start = time.perf_counter()
            generate(path, args.entries, compacted)
            print(f"{name}: generated {path.stat().st_size / 1e6:.1f} MB in {time.perf_counter() - start:.1f} s")
            for paused in (False, True):
                copy = Path(tmp) / "measured.jsonl"  # a fresh copy each time: a measurement appends to its file
                shutil.copyfile(path, copy)
                report(_measure_in_child(copy, args.appends, env, paused), paused)
                copy.unlink()
            path.unlink()


def report(figures: dict[str, float], paused: bool) -> None:
    """Print one figure set."""
    print(f"  collector {'paused' if paused else 'on'} during open + context")
    print(f"    entries             {figures['entries']:.0f} ({figures['size_mb']:.1f} MB)")
    print(f"    context messages    {figures['context_messages']:.0f}")
    print(f"    read bytes          {figures['read_s'] * 1000:8.1f} ms")
    print(f"    open                {figures['open_s'] * 1000:8.1f} ms")
    print(
        f"    open + context      {figures['open_context_s'] * 1000:8.1f} ms"
        f"  ({figures['ratio']:.1f}x reading the bytes)"
    )
    print(
        f"    peak RSS            {figures['peak_rss_mb']:8.1f} MB  (before open: {figures['rss_before_open_mb']:.1f} MB)"
    )
    ok = figures["open_context_s"] <= GOAL_S and figures["peak_rss_mb"] <= GOAL_RSS_MB
    print(f"    goal                <= {GOAL_S:.0f} s and <= {GOAL_RSS_MB:.0f} MB: {'ok' if ok else 'MISSED'}")
    print(f"    next full gc        {figures['full_gc_s'] * 1000:8.1f} ms  (walks the parsed heap unless frozen)")
    print(
        f"    first prepare       {figures['prepare_s'] * 1000:8.1f} ms  (lazy branch view; "
        f"{figures['parsed_entries']:.0f} entries parsed in all, peak RSS {figures['prepare_peak_rss_mb']:.1f} MB)"
    )
    print(f"    append latency      {figures['append_mean_us']:8.1f} us mean, {figures['append_p99_us']:.1f} us p99")


if __name__ == "__main__":
    main()
