"""Benchmark the `grep` tool over a generated 10,000-file tree, with ripgrep (when installed) and without.

Usage: `uv run python benchmarks/bench_tools.py [--files N] [--repeat R]`. Prints one line per backend with the best
and median wall time of a full search (the tool's own limit of 100 shown matches; the total is still counted).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path

from apex_coding_agent.tools.find import FindTool, find_fd
from apex_coding_agent.tools.grep import GrepTool, find_ripgrep

WORDS = ["alpha", "beta", "gamma", "delta", "import", "return", "value", "config", "render", "parse"]


def build_tree(root: Path, files: int, seed: int = 7) -> None:
    """`files` source files of ~40 lines each in nested directories, plus an ignored build dir."""
    rng = random.Random(seed)
    (root / ".git").mkdir()
    (root / ".gitignore").write_text("build/\n")
    for index in range(files):
        directory = root / f"pkg{index % 20}" / f"mod{index % 7}"
        directory.mkdir(parents=True, exist_ok=True)
        lines = [" ".join(rng.choice(WORDS) for _ in range(8)) for _ in range(40)]
        if index % 50 == 0:
            lines[rng.randrange(40)] += " needle_marker"
        (directory / f"file{index}.py").write_text("\n".join(lines) + "\n")
    build = root / "build"
    build.mkdir()
    for index in range(200):
        (build / f"gen{index}.py").write_text("needle_marker generated\n")


async def time_tool(tool: GrepTool | FindTool, params: dict[str, object], repeat: int) -> tuple[list[float], str]:
    timings: list[float] = []
    first_line = ""
    for _ in range(repeat):
        started = time.perf_counter()
        result = await tool.execute("bench", params, None, None)
        timings.append(time.perf_counter() - started)
        text = result.content[0].text  # type: ignore[union-attr]
        first_line = text.rsplit("\n", 1)[-1] if "[" in text else f"{len(text.splitlines())} lines"
    return timings, first_line


def report(label: str, timings: list[float], note: str) -> None:
    print(
        f"{label:<28} best {min(timings) * 1000:8.1f} ms   median {statistics.median(timings) * 1000:8.1f} ms   {note}"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="apex-bench-tools-") as temp:
        root = Path(temp)
        started = time.perf_counter()
        build_tree(root, args.files)
        print(f"generated {args.files} files in {time.perf_counter() - started:.2f} s under {root}")
        grep_params: dict[str, object] = {"pattern": "needle_marker"}
        engines: list[str] = (["ripgrep"] if find_ripgrep() else []) + ["python"]
        if not find_ripgrep():
            print("ripgrep: not installed (only the Python fallback is measured)")
        for engine in engines:
            timings, note = await time_tool(GrepTool(str(root), engine), grep_params, args.repeat)  # type: ignore[arg-type]
            report(f"grep [{engine}]", timings, note)
        find_engines: list[str] = (["fd"] if find_fd() else []) + ["python"]
        for engine in find_engines:
            timings, note = await time_tool(FindTool(str(root), engine), {"pattern": "*.py"}, args.repeat)  # type: ignore[arg-type]
            report(f"find *.py [{engine}]", timings, note)


if __name__ == "__main__":
    asyncio.run(main())
