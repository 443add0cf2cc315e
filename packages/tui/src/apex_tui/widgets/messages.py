"""One widget per transcript item: user and assistant text, thinking, tool calls, `!` commands, notices.

Every block caches its canvas per (width, detail level and other context, theme); a content setter drops only that
block's canvases, so while a reply streams only the streaming tail re-renders. What one block renders is capped
(`MAX_OUTPUT_LINES`) so a huge tool output never costs a full layout per frame.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

import urwid

from apex_tui.widgets._block import Block, DetailLevel, RenderContext
from apex_tui.widgets._canvas import Markup, blank, filled, pad_sides, plain_text, stack, text_canvas
from apex_tui.widgets._diff import diff_counts, diff_from_edits, diff_markup, edits_from_args
from apex_tui.widgets.images import ImageRef, image_canvases, image_lines

MAX_OUTPUT_LINES = 2000
"""Lines of tool or command output one block renders at detail `all`; earlier lines are summarised."""

PREVIEW_LINES: dict[str, int] = {"read": 0, "write": 10, "grep": 15, "find": 20, "ls": 20}
"""Output lines a collapsed tool block shows; other tools show `DEFAULT_PREVIEW_LINES`."""
DEFAULT_PREVIEW_LINES = 10
BASH_PREVIEW_ROWS = 5
COMMAND_PREVIEW_LINES = 20

ToolStatus = Literal["pending", "success", "error"]


def _markdown_or_blank(ctx: RenderContext, text: str, width: int, *, final: bool = False) -> urwid.Canvas:
    return ctx.markdown.render(text, width, final=final) or blank(width)


def _tail_lines(text: str, count: int) -> tuple[str, int]:
    """The last `count` lines of `text` and how many lines come before them."""
    text = text.removesuffix("\n")
    total = text.count("\n") + 1
    if total <= count:
        return text, 0
    start = len(text)
    for _ in range(count):
        start = text.rindex("\n", 0, start)
    return text[start + 1 :], total - count


def _head_lines(text: str, count: int) -> tuple[str, int]:
    """The first `count` lines of `text` and how many lines follow them."""
    text = text.removesuffix("\n")
    lines = text.split("\n", count)
    if len(lines) <= count:
        return text, 0
    rest = lines[count]
    return "\n".join(lines[:count]), rest.count("\n") + 1


class UserMessageBlock(Block):
    """A user prompt: markdown on the `user` background, padded by `output_pad`."""

    is_prompt = True

    def __init__(self, ctx: RenderContext, text: str, images: Sequence[ImageRef] = ()) -> None:
        super().__init__(ctx)
        self._text = text
        self.images = tuple(images)

    @property
    def text(self) -> str:
        """The prompt text."""
        return self._text

    def search_text(self) -> str:
        """The prompt text and its image placeholders."""
        return "\n".join([self._text, *image_lines(self.images)])

    def _build(self, width: int) -> urwid.Canvas:
        pad = self.ctx.output_pad if width > 2 * self.ctx.output_pad + 1 else 0
        inner = width - 2 * pad
        parts: list[urwid.Canvas] = []
        if self._text.strip() or not self.images:
            parts.append(_markdown_or_blank(self.ctx, self._text, inner))
        parts.extend(image_canvases(self.images, inner))
        body = pad_sides(stack(parts), pad, pad)
        return filled(stack([blank(width), body, blank(width)]), "user")


class AssistantTextBlock(Block):
    """Assistant reply text as markdown; `append` streams deltas into it."""

    is_prompt = True

    def __init__(self, ctx: RenderContext, text: str = "", *, final: bool = False) -> None:
        super().__init__(ctx)
        self._text = text
        self._final = final
        """Whether the text is complete (`finish`); until then it may be streaming, and a code block left open
        at its end is laid out with the streaming shortcuts."""

    @property
    def text(self) -> str:
        """The text so far."""
        return self._text

    def finish(self) -> None:
        """The message is complete: later renders lay the text out exactly, with no streaming shortcuts."""
        if not self._final:
            self._final = True
            if self._canvases:  # laid out while streaming: lay it out again; never drawn: nothing to redo
                self._changed()

    def search_text(self) -> str:
        """The markdown source."""
        return self._text

    def append(self, delta: str) -> None:
        """Add a streamed delta; only this block re-renders."""
        if delta:
            self._text += delta
            self._final = False
            self._changed()

    def set_text(self, text: str) -> None:
        """Replace the whole text (a streaming message's text so far); `finish` once it is complete."""
        if text != self._text:
            self._text = text
            self._final = False
            self._changed()

    def _build(self, width: int) -> urwid.Canvas:
        pad = self.ctx.output_pad if width > 2 * self.ctx.output_pad + 1 else 0
        return pad_sides(_markdown_or_blank(self.ctx, self._text, width - 2 * pad, final=self._final), pad, pad)


class ThinkingBlock(AssistantTextBlock):
    """Thinking text: italic `thinkingText` markdown when visible, else one dim `Thinking...` line."""

    is_prompt = False

    def _build(self, width: int) -> urwid.Canvas:
        pad = self.ctx.output_pad if width > 2 * self.ctx.output_pad + 1 else 0
        if not self.ctx.thinking_visible():
            return pad_sides(text_canvas(("dim", self.ctx.thinking_label), width - 2 * pad), pad, pad)
        body = _markdown_or_blank(self.ctx, self._text, width - 2 * pad, final=self._final)
        return pad_sides(filled(body, "thinking"), pad, pad)


def _key_argument(name: str, args: Mapping[str, Any]) -> str:
    for key in ("command", "pattern", "path", "file_path", "query", "url"):
        value = args.get(key)
        if isinstance(value, str) and value:
            if key == "pattern" and isinstance(args.get("path"), str):
                return f"{value} in {args['path']}"
            return value.split("\n", 1)[0]
    return ""


class ToolCallBlock(Block):
    """A tool call box: title (tool name + key argument) and a body that depends on the tool and detail level.

    Call `set_args` while arguments stream, `set_output` / `append_output` while the tool runs (partial results),
    and `set_result` when it ends. The background shows pending / success / error.
    """

    def __init__(self, ctx: RenderContext, name: str, args: Mapping[str, Any] | None = None, call_id: str = "") -> None:
        super().__init__(ctx)
        self.name = name
        self.call_id = call_id
        self._args: dict[str, Any] = dict(args or {})
        self._output = ""
        self._status: ToolStatus = "pending"
        self._details: Mapping[str, Any] | None = None
        self._images: tuple[ImageRef, ...] = ()
        self._preview: str | None = None

    def search_text(self) -> str:
        """Title, output (or streamed `write` content) and image placeholders."""
        content = self._args.get("content") if self.name == "write" else None
        body = self._output or (content if isinstance(content, str) else "")
        return "\n".join([plain_text(self._title()), body, *image_lines(self._images)])

    @property
    def images(self) -> tuple[ImageRef, ...]:
        """Images of the result (shown as placeholders)."""
        return self._images

    @property
    def status(self) -> ToolStatus:
        """`pending` until `set_result`."""
        return self._status

    @property
    def output(self) -> str:
        """The output text so far."""
        return self._output

    def set_args(self, args: Mapping[str, Any]) -> None:
        """Replace the (possibly partial) arguments."""
        self._args = dict(args)
        self._changed()

    def set_preview(self, diff: str | None) -> None:
        """The display diff an `edit` will make, computed from the file (until the result's own diff arrives)."""
        self._preview = diff
        self._changed()

    def set_output(self, text: str) -> None:
        """Replace the partial output."""
        if text != self._output:
            self._output = text
            self._changed()

    def append_output(self, delta: str) -> None:
        """Add streamed output."""
        if delta:
            self._output += delta
            self._changed()

    def set_result(
        self,
        text: str,
        *,
        is_error: bool = False,
        details: Mapping[str, Any] | None = None,
        images: Sequence[ImageRef] = (),
    ) -> None:
        """The final result: its text, whether it is an error, the tool's `details` (e.g. `edit`'s `diff`) and the
        images among its content blocks (drawn as placeholders)."""
        self._output = text
        self._status = "error" if is_error else "success"
        self._details = details
        self._images = tuple(images)
        self._changed()

    def _title(self) -> Markup:
        if self.name == "bash":
            command = self._args.get("command")
            first = command.split("\n", 1)[0] if isinstance(command, str) else "..."
            return ("tool.title", f"$ {first}")
        argument = _key_argument(self.name, self._args)
        return [("tool.title", self.name), " ", ("accent", argument)] if argument else ("tool.title", self.name)

    def _build(self, width: int) -> urwid.Canvas:
        pad = 1 if width > 3 else 0
        inner = width - 2 * pad
        parts: list[urwid.Canvas] = [blank(inner), text_canvas(self._title(), inner)]
        parts.extend(self._body(inner))
        parts.extend(image_canvases(self._images, inner))
        parts.append(blank(inner))
        style = {"pending": "tool.pending", "success": "tool.success", "error": "tool.error"}[self._status]
        return filled(pad_sides(stack(parts), pad, pad), style)

    def _hint(self, count: int, where: Literal["earlier", "more"], width: int) -> urwid.Canvas:
        return text_canvas(("muted", f"... ({count} {where} lines, {self.ctx.expand_hint} to expand)"), width)

    def _body(self, width: int) -> list[urwid.Canvas]:
        level = self.ctx.detail
        if self._status == "error":
            text, hidden = _head_lines(self._output, MAX_OUTPUT_LINES)
            out: list[urwid.Canvas] = []
            if text:
                out.append(text_canvas(("error", text), width))
            if hidden:
                out.append(text_canvas(("muted", f"... ({hidden} more lines)"), width))
            return out
        if self.name == "edit":
            return self._edit_body(width, level)
        if self.name == "bash":
            return self._bash_body(width, level)
        source = self._output
        if self.name == "write" and self._status == "pending" and isinstance(self._args.get("content"), str):
            source = self._args["content"]
        if not source:
            return []
        if level is DetailLevel.ALL:
            text, hidden = _tail_lines(source, MAX_OUTPUT_LINES)
            out = []
            if hidden:
                out.append(text_canvas(("muted", f"... ({hidden} earlier lines not shown)"), width))
            out.append(text_canvas(("toolOutput", text), width))
            return out
        limit = PREVIEW_LINES.get(self.name, DEFAULT_PREVIEW_LINES)
        text, more = _head_lines(source, limit) if limit else ("", source.removesuffix("\n").count("\n") + 1)
        out = [text_canvas(("toolOutput", text), width)] if text else []
        if more:
            out.append(self._hint(more, "more", width))
        return out

    def _diff(self) -> str | None:
        if self._details is not None and isinstance(self._details.get("diff"), str):
            return str(self._details["diff"])
        if self._preview is not None:
            return self._preview
        pairs = edits_from_args(self._args)
        return diff_from_edits(pairs) if pairs else None

    def _edit_body(self, width: int, level: DetailLevel) -> list[urwid.Canvas]:
        diff = self._diff()
        if diff is None:
            return []
        if level is DetailLevel.OVERVIEW:
            added, removed = diff_counts(diff)
            return [text_canvas([("toolDiffAdded", f"+{added}"), " ", ("toolDiffRemoved", f"-{removed}")], width)]
        markup, hidden = diff_markup(diff, MAX_OUTPUT_LINES)
        out: list[urwid.Canvas] = [text_canvas(markup, width)]
        if hidden:
            out.append(text_canvas(("muted", f"... ({hidden} more lines)"), width))
        return out

    def _bash_body(self, width: int, level: DetailLevel) -> list[urwid.Canvas]:
        if not self._output:
            return []
        if level is DetailLevel.ALL:
            text, hidden = _tail_lines(self._output, MAX_OUTPUT_LINES)
            out: list[urwid.Canvas] = []
            if hidden:
                out.append(text_canvas(("muted", f"... ({hidden} earlier lines not shown)"), width))
            out.append(text_canvas(("toolOutput", text), width))
            return out
        # Each logical line takes at least one row, so the last rows come from the last few lines only.
        text, earlier = _tail_lines(self._output, BASH_PREVIEW_ROWS)
        tail = text_canvas(("toolOutput", text), width)
        extra_rows = tail.rows() - BASH_PREVIEW_ROWS
        if extra_rows > 0:
            tail.trim(extra_rows)
            earlier += extra_rows
        return [self._hint(earlier, "earlier", width), tail] if earlier else [tail]


class BashExecutionBlock(Block):
    """A user `!cmd` / `!!cmd` run: command, streaming output, exit status, truncation notice."""

    def __init__(self, ctx: RenderContext, command: str, *, exclude_from_context: bool = False) -> None:
        super().__init__(ctx)
        self.command = command
        self.exclude_from_context = exclude_from_context
        self._output = ""
        self._exit_code: int | None = None
        self._cancelled = False
        self._full_output_path: str | None = None

    @property
    def output(self) -> str:
        """The output so far."""
        return self._output

    def append_output(self, delta: str) -> None:
        """Add streamed output."""
        if delta:
            self._output += delta
            self._changed()

    def search_text(self) -> str:
        """The command line and its output."""
        return f"$ {self.command}\n{self._output}"

    def finish(self, exit_code: int | None, *, cancelled: bool = False, full_output_path: str | None = None) -> None:
        """Record how the command ended, and where its full output went when it was truncated."""
        self._exit_code = exit_code
        self._cancelled = cancelled
        self._full_output_path = full_output_path
        self._changed()

    def _build(self, width: int) -> urwid.Canvas:
        rule = text_canvas(("bashMode", "─" * width), width, wrap="clip")
        title: list[Markup] = [("bashMode", f"$ {self.command}")]
        if self.exclude_from_context:
            title.append(("muted", " (not sent to the model)"))
        parts: list[urwid.Canvas] = [rule, text_canvas(title, width)]
        if self._output:
            collapsed = self.ctx.detail is not DetailLevel.ALL
            text, earlier = _tail_lines(self._output, COMMAND_PREVIEW_LINES if collapsed else MAX_OUTPUT_LINES)
            if earlier:
                hint = (
                    f"... ({earlier} earlier lines, {self.ctx.expand_hint} to expand)"
                    if collapsed
                    else (f"... ({earlier} earlier lines not shown)")
                )
                parts.append(text_canvas(("muted", hint), width))
            parts.append(text_canvas(("toolOutput", text), width))
        if self._cancelled:
            parts.append(text_canvas(("warning", "cancelled"), width))
        elif self._exit_code is not None:
            style = "muted" if self._exit_code == 0 else "error"
            parts.append(text_canvas((style, f"exit {self._exit_code}"), width))
        if self._full_output_path:
            parts.append(text_canvas(("warning", f"Output truncated; full output: {self._full_output_path}"), width))
        parts.append(rule)
        return stack(parts)


NoticeKind = Literal["error", "warning", "aborted", "status", "info", "success"]

_NOTICE_STYLE: dict[NoticeKind, str | None] = {
    "error": "error",
    "warning": "warning",
    "aborted": "error",
    "status": "dim",
    "info": None,
    "success": "success",
}
_NOTICE_PREFIX: dict[NoticeKind, str] = {"error": "Error: ", "warning": "Warning: "}


class NoticeBlock(Block):
    """A one-line (wrapping) notice: `Error: …`, `Warning: …`, `Operation aborted`, or a dim status line."""

    gap = 0

    def __init__(self, ctx: RenderContext, kind: NoticeKind, text: str) -> None:
        super().__init__(ctx)
        self.kind = kind
        self._text = text

    @classmethod
    def aborted(cls, ctx: RenderContext, retry_attempts: int = 0) -> NoticeBlock:
        """`Operation aborted`, or `Aborted after N retry attempt(s)` when retries happened."""
        if retry_attempts:
            plural = "attempt" if retry_attempts == 1 else "attempts"
            return cls(ctx, "aborted", f"Aborted after {retry_attempts} retry {plural}")
        return cls(ctx, "aborted", "Operation aborted")

    @property
    def text(self) -> str:
        """The notice text as shown (with its prefix)."""
        return _NOTICE_PREFIX.get(self.kind, "") + self._text

    def set_text(self, text: str) -> None:
        """Replace the text (a status that replaces the previous one)."""
        self._text = text
        self._changed()

    def search_text(self) -> str:
        """The notice as shown."""
        return self.text

    def _build(self, width: int) -> urwid.Canvas:
        pad = self.ctx.output_pad if width > 2 * self.ctx.output_pad + 1 else 0
        style = _NOTICE_STYLE[self.kind]
        markup: Markup = (style, self.text) if style else self.text
        return pad_sides(text_canvas(markup, width - 2 * pad), pad, pad)


class CustomMessageBlock(Block):
    """A labelled block on the `custom` background: extension messages with `display: true`, skill runs, notices."""

    def __init__(self, ctx: RenderContext, label: str, content: str) -> None:
        super().__init__(ctx)
        self.label = label
        self._content = content

    def set_content(self, content: str) -> None:
        """Replace the markdown content."""
        self._content = content
        self._changed()

    def search_text(self) -> str:
        """The label and the markdown content."""
        return f"[{self.label}]\n{self._content}"

    def _build(self, width: int) -> urwid.Canvas:
        pad = 1 if width > 3 else 0
        inner = width - 2 * pad
        parts: list[urwid.Canvas] = [blank(inner), text_canvas(("custom.label", f"[{self.label}]"), inner)]
        if self._content:
            parts.append(_markdown_or_blank(self.ctx, self._content, inner))
        parts.append(blank(inner))
        return filled(pad_sides(stack(parts), pad, pad), "custom")


class SummaryBlock(Block):
    """Compaction / branch summary: one collapsed line, the summary markdown at detail `all`."""

    def __init__(self, ctx: RenderContext, label: str, collapsed: str, summary: str) -> None:
        super().__init__(ctx)
        self.label = label
        self.collapsed = collapsed
        self.summary = summary

    _SHOWN_AT: ClassVar[frozenset[DetailLevel]] = frozenset({DetailLevel.ALL})

    def search_text(self) -> str:
        """The label, the collapsed line and the summary."""
        return f"[{self.label}] {self.collapsed}\n{self.summary}"

    def _build(self, width: int) -> urwid.Canvas:
        pad = 1 if width > 3 else 0
        inner = width - 2 * pad
        head = text_canvas([("custom.label", f"[{self.label}]"), " ", ("muted", self.collapsed)], inner)
        parts: list[urwid.Canvas] = [head]
        if self.ctx.detail in self._SHOWN_AT and self.summary:
            parts.append(_markdown_or_blank(self.ctx, self.summary, inner))
        return filled(pad_sides(stack(parts), pad, pad), "custom")
