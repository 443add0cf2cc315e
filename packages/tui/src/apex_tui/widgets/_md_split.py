"""Splitting markdown into top-level chunks, all at once or incrementally while a reply streams.

A chunk ends at a blank line outside fenced code that is followed by a line starting in column one (an indented line
may continue a list item, so it never splits). A chunk is *finished* once that following line has begun: nothing
appended later can change it. `ChunkSplitter` remembers the finished chunks of the text it saw last and, when the
next text extends it, scans only from the start of the open (last) chunk, so a streaming frame costs work
proportional to the open chunk, not to the whole reply.
"""

from __future__ import annotations


def _fence_marker(line: str) -> str | None:
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3:
        return None
    for char in "`~":
        if stripped.startswith(char * 3):
            return char * (len(stripped) - len(stripped.lstrip(char)))
    return None


def _trimmed(chunk: str) -> str | None:
    """`chunk` without its trailing whitespace-only lines; None if nothing else is left."""
    content = chunk.rstrip()
    if not content:
        return None
    line_end = chunk.find("\n", len(content))
    return chunk if line_end < 0 else chunk[:line_end]


def _closes(line: str, fence: str) -> bool:
    marker = _fence_marker(line)
    return marker is not None and marker[0] == fence[0] and len(marker) >= len(fence) and not line.strip(fence[0] + " ")


def _scan(text: str, start: int) -> tuple[list[str], int, str | None, tuple[str, int] | None]:
    """Chunks of `text[start:]`: (finished chunks, offset where the open chunk starts, the open chunk or None, and
    for a fence open at the end its marker and the offset of the open chunk's first line, else None).

    `start` must be a line start outside any fence with no chunk begun (0, or the open-chunk offset of an earlier
    scan of a prefix of `text`). The open offset is `start` while no chunk has been finished in this scan.
    """
    finished: list[str] = []
    lines = text[start:].split("\n")
    first = -1  # index of the current chunk's first line; -1 while only blank lines were seen
    fence: str | None = None
    pending_blank = False
    # Lines are tracked by index, not offset: adding up offsets line by line would cost more than the scan.
    for index, line in enumerate(lines):
        if fence is not None:
            if _closes(line, fence):
                fence = None
        elif not line.strip():
            pending_blank = first >= 0
        else:
            if pending_blank and not line[:1].isspace():
                # A chunk has a non-blank first line, so trimming leaves text.
                finished.append(_trimmed("\n".join(lines[first:index])) or "")
                first = -1
            if first < 0:
                first = index
            pending_blank = False
            fence = _fence_marker(line)
    if first < 0:
        return finished, start, None, None
    open_start = start + len("\n".join(lines[:first])) + 1 if finished else start
    body = "\n".join(lines[first:])
    return finished, open_start, _trimmed(body), None if fence is None else (fence, len(text) - len(body))


def split_blocks(text: str) -> list[str]:
    """Split markdown at blank lines that separate top-level blocks; trailing blank lines of a chunk are dropped.

    Blank lines inside fenced code never split, and neither does a blank line followed by an indented line (it may
    continue a list item), so every chunk parses the way it would inside the whole document in the common cases.
    """
    finished, _, last, _ = _scan(text, 0)
    if last is not None:
        finished.append(last)
    return finished


class ChunkSplitter:
    """The chunks of a growing markdown text, re-scanning only from the start of the open chunk.

    `matches(text)` says whether `text` begins with everything this splitter has finished (it compares the finished
    prefix once, a memory compare); `split(text)` then costs a scan of the open chunk only. A text that does not
    match starts over from the beginning, so any sequence of texts gives exactly `split_blocks(text)`. While the open
    chunk ends in an open fence (a long code block streaming), only its lines from the last one on are checked for
    the closing fence, so such a frame does not re-scan the whole block either.
    """

    def __init__(self) -> None:
        self.finished: list[str] = []
        """Finished chunks, in order; only ever appended to while texts keep matching."""
        self.open_start = 0
        """Offset of the open chunk in the last text (the end of the finished prefix)."""
        # The finished prefix plus the first character of the open chunk: that character decided the last split.
        self._seen = ""
        # Open fence at the end of the last text: its marker, where its chunk starts, the text before the last line.
        self._fence: tuple[str, int] | None = None
        self._fence_prefix = ""

    @property
    def seen(self) -> int:
        """Length of the prefix every matching text shares (0 before any chunk finished)."""
        return len(self._seen)

    def matches(self, text: str) -> bool:
        """Whether `text` extends the finished prefix, so `split(text)` can resume instead of starting over."""
        return text.startswith(self._seen)

    def split(self, text: str) -> tuple[list[str], str | None]:
        """(finished chunks, open chunk or None) of `text`; `finished` is this splitter's own list, do not mutate it.

        The result equals `split_blocks(text)` as `finished + [open]`.
        """
        if not self.matches(text):
            self.finished = []
            self.open_start = 0
            self._seen = ""
            self._fence = None
        if self._fence is not None and text.startswith(self._fence_prefix):
            marker, chunk_start = self._fence
            resume = self._still_open(text, len(self._fence_prefix), marker)
            if resume is not None:
                self._fence_prefix = text[:resume]
                return self.finished, _trimmed(text[chunk_start:])
        finished, open_start, last, fence = _scan(text, self.open_start)
        if finished:
            self.finished.extend(finished)
            self.open_start = open_start
            self._seen = text[: open_start + 1]
        self._fence = fence
        if fence is not None:
            self._fence_prefix = text[: text.rfind("\n") + 1]
        return self.finished, last

    @staticmethod
    def _still_open(text: str, start: int, fence: str) -> int | None:
        """The start of the last line if no line of `text[start:]` closes `fence` (`start` is a line start)."""
        while True:
            end = text.find("\n", start)
            if _closes(text[start:] if end < 0 else text[start:end], fence):
                return None
            if end < 0:
                return start
            start = end + 1
