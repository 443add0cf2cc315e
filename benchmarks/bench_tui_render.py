"""Transcript frame cost: ms per frame after one character lands on the streaming tail, by transcript size.

The "screen" is the interactive layout's shape (transcript over a status line and the footer, 120×40). A frame is
the root widget's render plus reading every row of the canvas, which is what the terminal screen does with it.
Transcripts of 10, 1,000 and 50,000 items (user prompts, markdown replies, tool calls) each get a streaming
assistant block; the 50k/10 ratio shows whether the cost depends on the transcript size (it should stay near 1).
Streaming: 2,000 deltas of a markdown reply (paragraphs, a list, a code block) frame by frame. Search: typing a
query into the transcript search over the 50,000-item transcript (one search per keystroke, the current match
revealed and the frame drawn with highlights), then stepping to the next match; block builds are counted to show
that matching never lays out blocks that are not shown. Long reply: ms/frame while 4-character deltas stream into a
reply that already holds 1,000 and 100,000 characters (the 100k/1k ratio should stay near 1: a frame re-splits and
re-renders only the open chunk), and the chunk-split cost alone per frame (whole text vs incremental). Code block:
one reply streams a 2,000-line fenced Python block in 20-character deltas; the ms per frame of the first and of the
last frames should be close (a frame highlights and lays out the new lines only, not the whole block).
Pass case names (`frame streaming long search code`) to run only those.
Run with the workspace's python: `uv run python benchmarks/bench_tui_render.py`.
"""

from __future__ import annotations

import statistics
import sys
import time

import urwid

from apex_tui.widgets import (
    AssistantTextBlock,
    Block,
    Footer,
    FooterState,
    RenderContext,
    StatusLine,
    ToolCallBlock,
    TranscriptSearch,
    TranscriptView,
    UserMessageBlock,
    split_blocks,
)
from apex_tui.widgets._md_split import ChunkSplitter

SIZE = (120, 40)
FRAMES = 300
REPEATS = 5
DELTAS = 2000

REPLY = (
    "Here is what I found in **the parser**: the tokenizer keeps `state` between calls.\n\n"
    "- first, the lexer reads a line\n- then it emits tokens\n- finally the parser folds them\n\n"
    "```python\ndef parse(text: str) -> list[str]:\n    # split on whitespace\n    return text.split()\n```\n\n"
)


def _items(ctx: RenderContext, count: int) -> list[Block]:
    items: list[Block] = []
    for index in range(count):
        kind = index % 3
        if kind == 0:
            items.append(UserMessageBlock(ctx, f"question {index}: why does the parser drop tokens?"))
        elif kind == 1:
            items.append(AssistantTextBlock(ctx, REPLY))
        else:
            tool = ToolCallBlock(ctx, "bash", {"command": "pytest -q"})
            tool.set_result("\n".join(f"test_{n} PASSED" for n in range(12)))
            items.append(tool)
    return items


class Screen:
    """The root layout and the last drawn canvas (a real screen keeps it, which keeps urwid's canvas cache warm)."""

    def __init__(self, count: int) -> None:
        self.ctx = RenderContext()
        self.view = TranscriptView(self.ctx, items=_items(self.ctx, count))
        self.tail = AssistantTextBlock(self.ctx, "Streaming reply")
        self.view.append(self.tail)
        self.status = StatusLine()
        self.status.start("Working...")
        footer = Footer(FooterState(cwd="/home/u/proj", model_id="model-x", context_window=200_000))
        self.root = urwid.Pile([("weight", 1, self.view), ("pack", self.status), ("pack", footer)])
        self.canvas: urwid.Canvas | None = None

    def frame(self) -> None:
        self.canvas = self.root.render(SIZE, focus=True)
        for _row in self.canvas.content():
            pass


def _ms_per_frame(count: int) -> float:
    screen = Screen(count)
    screen.frame()
    runs = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(FRAMES):
            screen.tail.append("x")
            screen.frame()
        runs.append((time.perf_counter() - start) * 1000 / FRAMES)
    return statistics.median(runs)


def _streaming() -> tuple[float, float, int]:
    screen = Screen(1000)
    screen.frame()
    # Every section differs, so no partial chunk repeats an earlier one and hits the chunk cache by accident.
    sections = [REPLY.replace("parser", f"parser #{n}").replace("line", f"line {n}") for n in range(100)]
    text = "".join(sections)[: DELTAS * 4]
    deltas = [text[i : i + 4] for i in range(0, len(text), 4)][:DELTAS]
    parses = screen.ctx.markdown.parses
    start = time.perf_counter()
    for delta in deltas:
        screen.tail.append(delta)
        screen.frame()
    total = (time.perf_counter() - start) * 1000
    return total, total / len(deltas), screen.ctx.markdown.parses - parses


def _long_reply(size: int) -> str:
    sections: list[str] = []
    length = 0
    while length < size:
        section = REPLY.replace("parser", f"parser #{len(sections)}").replace("line", f"line {len(sections)}")
        sections.append(section)
        length += len(section)
    return "".join(sections)


LONG_FRAMES = 200


def _long_streaming(start: int, text: str) -> float:
    """ms per frame while 4-character deltas land on a streaming reply that already holds `start` characters."""
    screen = Screen(1000)
    screen.tail.set_text(text[:start])
    screen.frame()
    runs = []
    pos = start
    for _ in range(REPEATS):
        begin = time.perf_counter()
        for _ in range(LONG_FRAMES):
            screen.tail.append(text[pos : pos + 4])
            pos += 4
            screen.frame()
        runs.append((time.perf_counter() - begin) * 1000 / LONG_FRAMES)
    return statistics.median(runs)


def _split_cost(text: str) -> tuple[float, float]:
    """ms per frame to split a 100k reply into chunks: the whole text each frame vs resuming at the open chunk."""
    frames = 100
    start = 100_000
    begin = time.perf_counter()
    for n in range(frames):
        split_blocks(text[: start + 4 * n])
    whole = (time.perf_counter() - begin) * 1000 / frames
    splitter = ChunkSplitter()
    splitter.split(text[:start])
    begin = time.perf_counter()
    for n in range(frames):
        splitter.split(text[: start + 4 * n])
    return whole, (time.perf_counter() - begin) * 1000 / frames


def _search(count: int = 50_000, query: str = "question 4999") -> tuple[float, float, int, int, str]:
    """(ms per keystroke, ms per next-match step, blocks built while searching, block count, final label)."""
    screen = Screen(count)
    screen.frame()
    search = TranscriptSearch(screen.view)
    search.attach()
    builds = sum(block.builds for block in screen.view.walker)
    start = time.perf_counter()
    for end in range(1, len(query) + 1):
        search.set_query(query[:end])
        screen.frame()
    per_key = (time.perf_counter() - start) * 1000 / len(query)
    steps = 50
    start = time.perf_counter()
    for _ in range(steps):
        search.next()
        screen.frame()
    per_step = (time.perf_counter() - start) * 1000 / steps
    built = sum(block.builds for block in screen.view.walker) - builds
    return per_key, per_step, built, count, search.label


CODE_LINES = 2000
CODE_DELTA = 20
CODE_WINDOW = 100


def _python_source(lines: int) -> str:
    """`lines` lines of varied Python: functions, comments, docstrings spanning lines, strings, numbers."""
    out: list[str] = []
    n = 0
    while len(out) < lines:
        out += [
            f"def handler_{n}(request: Request, limit: int = {n * 7}) -> dict[str, object]:",
            '    """Answer one request.',
            "",
            f"    The limit defaults to {n * 7}; larger values are clamped.",
            '    """',
            f"    # clamp the limit (case {n})",
            f"    value = min(limit, {n * 3 + 1}) * 2.5",
            f'    return {{"id": {n}, "name": f"item-{{value}}", "ok": value > {n}}}',
            "",
        ]
        n += 1
    return "\n".join(out[:lines])


def _code_block() -> tuple[float, float, float, float, int]:
    """Streaming a code block: (total ms, median ms/frame of the first and of the last `CODE_WINDOW` frames, slowest
    frame in ms, frames). The slowest is the frame that closes the fence: the complete block is highlighted in full.
    """
    screen = Screen(10)
    screen.tail.set_text("")
    screen.frame()
    text = "Here is the module:\n\n```python\n" + _python_source(CODE_LINES) + "\n```\n"
    times: list[float] = []
    for pos in range(0, len(text), CODE_DELTA):
        start = time.perf_counter()
        screen.tail.append(text[pos : pos + CODE_DELTA])
        screen.frame()
        times.append((time.perf_counter() - start) * 1000)
    first = statistics.median(times[:CODE_WINDOW])
    last = statistics.median(times[-CODE_WINDOW:])
    return sum(times), first, last, max(times), len(times)


def main() -> None:
    cases = set(sys.argv[1:]) or {"frame", "streaming", "long", "search", "code"}
    if "code" in cases:
        total, first, last, slowest, frames = _code_block()
        print(f"streaming a {CODE_LINES:,}-line python code block in {CODE_DELTA}-char deltas ({frames} frames):")
        print(f"  {total:.0f} ms total; median of the first {CODE_WINDOW} frames {first:.3f} ms/frame, of the last")
        print(f"  {CODE_WINDOW} {last:.3f} ms/frame; slowest frame {slowest:.1f} ms (the fence closes: full highlight)")
    if "frame" in cases:
        _frames()
    if "streaming" in cases:
        total, per_delta, parses = _streaming()
        print(f"streaming {DELTAS} deltas (4 chars) into a markdown reply, 1,000-item transcript:")
        print(f"  {total:.0f} ms total, {per_delta:.3f} ms/delta, {parses} chunk parses")
    if "long" in cases:
        _long()
    if "search" in cases:
        per_key, per_step, built, count, label = _search()
        print(f"search over {count:,} items (query typed key by key, then 50 next-match steps):")
        print(f"  {per_key:.1f} ms/keystroke, {per_step:.2f} ms/step, {built} blocks built, ended at {label}")


def _frames() -> None:
    print(f"frame = render {SIZE[0]}x{SIZE[1]} root + read canvas, after one char appended to the streaming tail")
    figures: dict[int, float] = {}
    for count in (10, 1_000, 50_000):
        figures[count] = _ms_per_frame(count)
        print(f"  {count:>6} items: {figures[count]:.3f} ms/frame (median of {REPEATS}x{FRAMES} frames)")
    print(f"  ratio 50k/10: {figures[50_000] / figures[10]:.2f}")


def _long() -> None:
    text = _long_reply(110_000)
    short, long = _long_streaming(1_000, text), _long_streaming(100_000, text)
    print(f"streaming into one long reply (4-char deltas, {LONG_FRAMES}x{REPEATS} frames, 1,000-item transcript):")
    print(f"  at 1k chars: {short:.3f} ms/frame, at 100k chars: {long:.3f} ms/frame, ratio 100k/1k: {long / short:.2f}")
    whole, incremental = _split_cost(text)
    print(f"  chunk split alone at 100k chars: whole text {whole:.3f} ms/frame, incremental {incremental:.4f} ms/frame")


if __name__ == "__main__":
    main()
