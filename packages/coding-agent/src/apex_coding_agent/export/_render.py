"""HTML fragments for the entries of a session branch (used by `export.html`).

Every string that comes from the session is passed through `escape` (or the Markdown subset, which escapes first);
images become `data:` URIs only when their MIME type is an image type we allow and their data is plain base64.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from apex_ai.transcript import content_text
from apex_ai.types import (
    AssistantMessage,
    ImageContent,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from apex_coding_agent.export._markdown import escape, render_markdown
from apex_coding_agent.messages import BashExecutionMessage, CustomMessage
from apex_coding_agent.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    EntryBase,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    iso_to_ms,
)

_IMAGE_MIME = re.compile(r"^image/(png|jpeg|jpg|gif|webp|bmp)$")
_BASE64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")
_COLLAPSE_LINES = 12  # tool outputs longer than this start collapsed


def format_ms(ms: int | None) -> str:
    """A message timestamp (Unix ms) as `2024-12-03 14:00:00 UTC`; empty when missing or out of range."""
    if not ms:
        return ""
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return ""


def _time(ms: int | None) -> str:
    text = format_ms(ms)
    return f'<span class="time">{escape(text)}</span>' if text else ""


def image_html(block: ImageContent) -> str:
    """An inline `<img>` with a data URI, or a placeholder for a MIME type or payload we do not embed."""
    mime = block.mime_type.strip().lower()
    data = "".join(block.data.split())
    if not _IMAGE_MIME.match(mime) or not _BASE64.match(data):
        return f'<div class="image-missing">[image not embedded: {escape(block.mime_type)}]</div>'
    return f'<img class="image" alt="{escape(mime)}" src="data:{mime};base64,{data}">'


def _plain(text: str) -> str:
    return f'<div class="plain">{escape(text)}</div>'


def _content_html(content: str | Sequence[object], markdown: bool = False) -> str:
    if isinstance(content, str):
        return render_markdown(content) if markdown else _plain(content)
    parts: list[str] = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append(render_markdown(block.text) if markdown else _plain(block.text))
        elif isinstance(block, ImageContent):
            parts.append(image_html(block))
    return "\n".join(parts)


def _system(message: SystemMessage) -> str:
    """The session's record of the prompt and tools (docs/sessions.md): the prompt collapsed, the tool changes."""
    parts: list[str] = []
    if content_text(message.content):
        summary = "system prompt (replaces the earlier one)" if message.replace else "system prompt"
        parts.append(_details("system", summary, _content_html(message.content)))
    changes = [f"+{tool.name}" for tool in message.tools_added or []]
    changes += [f"−{tool.name}" for tool in message.tools_removed or []]
    if changes:
        parts.append(f'<p class="tools">Tools: {escape(", ".join(changes))}</p>')
    return _section("system", "System", "".join(parts), message.timestamp)


def _section(kind: str, title: str, body: str, ms: int | None = None) -> str:
    return (
        f'<section class="entry {kind}"><div class="entry-head"><span class="role">{title}</span>{_time(ms)}</div>'
        f'<div class="entry-body">{body}</div></section>'
    )


def _details(kind: str, summary: str, body: str, is_open: bool = False) -> str:
    flag = " open" if is_open else ""
    return f'<details class="{kind}"{flag}><summary>{summary}</summary>{body}</details>'


def _pre(text: str, kind: str = "output") -> str:
    return f'<pre class="{kind}">{escape(text)}</pre>'


def diff_html(diff: str) -> str:
    """A display diff (`+`/`-`/space prefixed lines) with added and removed lines coloured."""
    rows: list[str] = []
    for line in diff.split("\n"):
        kind = "diff-add" if line.startswith("+") else "diff-del" if line.startswith("-") else "diff-ctx"
        rows.append(f'<span class="{kind}">{escape(line)}</span>')
    return '<pre class="diff">' + "\n".join(rows) + "</pre>"


def _str_arg(args: dict[str, Any], *names: str) -> str:
    for name in names:
        value = args.get(name)
        if isinstance(value, str):
            return value
    return ""


def _call_summary(call: ToolCall) -> str:
    args = call.arguments
    if call.name == "bash":
        return ""  # the command itself is shown right below
    if call.name in ("grep", "find"):
        pattern, path = _str_arg(args, "pattern"), _str_arg(args, "path")
        return f"{pattern} in {path}" if path else pattern
    return _str_arg(args, "path", "file_path")


def _call_args_html(call: ToolCall) -> str:
    args = call.arguments
    if call.name == "bash" and set(args) <= {"command", "timeout"}:
        return _pre("$ " + _str_arg(args, "command"), "command")
    if call.name == "write" and isinstance(args.get("content"), str):
        body = _pre(args["content"], "file-content")
        lines = _line_count(args["content"])
        return _details("tool-args", f"content ({lines} lines)", body)
    if call.name == "read" and set(args) <= {"path", "offset", "limit"}:
        extra = [f"{key}={args[key]}" for key in ("offset", "limit") if key in args]
        return f'<div class="args-line">{escape(" ".join(extra))}</div>' if extra else ""
    dumped = json.dumps(args, indent=2, ensure_ascii=False)
    # An edit's result carries the diff, which says more than its raw arguments.
    return _details("tool-args", "arguments", _pre(dumped, "args"), is_open=call.name != "edit" and len(dumped) < 400)


def _line_count(text: str) -> int:
    """Lines as a reader counts them: a final line break ends the last line rather than starting another."""
    return text.count("\n") + (0 if text.endswith("\n") else 1) if text else 0


def _lines_label(text: str) -> str:
    count = _line_count(text)
    return f"output ({count} line{'' if count == 1 else 's'})" if count else "output"


def _result_html(result: ToolResultMessage) -> str:
    text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
    details = result.details
    diff = details.get("diff") if isinstance(details, dict) else None
    body: list[str] = []
    if isinstance(diff, str) and diff:
        body.append(diff_html(diff))
    if text:
        body.append(_pre(text, "error" if result.is_error else "output"))
    body.extend(image_html(block) for block in result.content if isinstance(block, ImageContent))
    if not body:
        body.append('<div class="empty">(no output)</div>')
    # Errors and diffs are the point of a result, so they start open; long plain outputs start folded.
    is_open = result.is_error or bool(diff) or text.count("\n") < _COLLAPSE_LINES
    label = "error" if result.is_error else _lines_label(text)
    return _details("tool-output", escape(label), "\n".join(body), is_open)


def tool_html(call: ToolCall | None, result: ToolResultMessage | None) -> str:
    """A tool call with its arguments and (if found on the branch) its result; either side may be missing."""
    name = call.name if call is not None else result.tool_name if result is not None else "tool"
    summary = _call_summary(call) if call is not None else ""
    status = ""
    if result is None:
        status = '<span class="status pending">no result</span>'
    elif result.is_error:
        status = '<span class="status failed">error</span>'
    head = f'<div class="tool-head"><span class="tool-name">{escape(name)}</span> '
    head += f'<span class="tool-summary">{escape(summary)}</span>{status}</div>'
    parts = [head]
    if call is not None:
        parts.append(_call_args_html(call))
    if result is not None:
        parts.append(_result_html(result))
    error = " tool-error" if result is not None and result.is_error else ""
    return f'<div class="tool{error}">' + "".join(parts) + "</div>"


class BranchRenderer:
    """Renders the entries of one branch in order; tool results are shown with the call that asked for them."""

    def __init__(self, entries: Sequence[EntryBase]) -> None:
        self._entries = entries
        self._results: dict[str, ToolResultMessage] = {}
        for entry in entries:
            if isinstance(entry, MessageEntry) and isinstance(entry.message, ToolResultMessage):
                self._results.setdefault(entry.message.tool_call_id, entry.message)
        self._shown: set[int] = set()

    def render(self) -> Iterable[str]:
        for entry in self._entries:
            fragment = self._entry(entry)
            if fragment:
                yield fragment

    def _entry(self, entry: EntryBase) -> str:
        if isinstance(entry, MessageEntry):
            return self._message(entry.message)
        if isinstance(entry, ModelChangeEntry):
            return _event(f"Model: {entry.provider}/{entry.model_id}")
        if isinstance(entry, ThinkingLevelChangeEntry):
            return _event(f"Thinking level: {entry.thinking_level}")
        if isinstance(entry, SessionInfoEntry):
            return _event(f"Session name: {entry.name}" if entry.name else "Session name cleared")
        if isinstance(entry, LabelEntry):
            return _event(f"Label {entry.label!r} on {entry.target_id}" if entry.label else "Label cleared")
        if isinstance(entry, CompactionEntry):
            title = f"Compaction · {entry.tokens_before:,} tokens summarized"
            return _section(
                "compaction",
                escape(title),
                _details("summary", "summary", render_markdown(entry.summary), is_open=True),
            )
        if isinstance(entry, BranchSummaryEntry):
            if not entry.summary:
                return ""
            body = _details("summary", "summary", render_markdown(entry.summary), is_open=True)
            return _section("branch-summary", "Branch summary", body, iso_to_ms(entry.timestamp))
        if isinstance(entry, CustomMessageEntry):
            return _custom(entry.custom_type, entry.content, entry.display, iso_to_ms(entry.timestamp))
        return ""  # custom state, labels of other kinds, evidence, unknown: not part of the conversation

    def _message(self, message: object) -> str:
        if isinstance(message, UserMessage):
            return _section("user", "User", _content_html(message.content), message.timestamp)
        if isinstance(message, AssistantMessage):
            return self._assistant(message)
        if isinstance(message, ToolResultMessage):
            if id(message) in self._shown:
                return ""
            return _section("tool-result", "Tool result", tool_html(None, message), message.timestamp)
        if isinstance(message, BashExecutionMessage):
            return _bash(message)
        if isinstance(message, CustomMessage):
            return _custom(message.custom_type, message.content, message.display, message.timestamp)
        if isinstance(message, SystemMessage):
            return _system(message)
        if isinstance(message, BaseModel):
            data = message.model_dump(mode="json", by_alias=True)
            role = str(data.get("role", "message"))
            body = _details("unknown", "raw message", _pre(json.dumps(data, indent=2, ensure_ascii=False), "args"))
            return _section("unknown", escape(role), body)
        return ""

    def _assistant(self, message: AssistantMessage) -> str:
        parts: list[str] = []
        for block in message.content:
            if isinstance(block, TextContent):
                if block.text.strip():
                    parts.append(f'<div class="markdown">{render_markdown(block.text)}</div>')
            elif isinstance(block, ThinkingContent):
                summary = "Thinking (redacted)" if block.redacted else "Thinking"
                parts.append(_details("thinking", summary, _pre(block.thinking, "thinking-text")))
            elif isinstance(block, ToolCall):
                result = self._results.get(block.id)
                if result is not None:
                    self._shown.add(id(result))
                parts.append(tool_html(block, result))
        if message.stop_reason in ("error", "aborted"):
            text = message.error_message or ("Aborted" if message.stop_reason == "aborted" else "Error")
            parts.append(f'<div class="error">{escape(text)}</div>')
        title = f"Assistant · {message.provider}/{message.model}"
        return _section("assistant", escape(title), "\n".join(parts), message.timestamp)


def _event(text: str) -> str:
    return f'<div class="event">{escape(text)}</div>'


def _bash(message: BashExecutionMessage) -> str:
    notes: list[str] = []
    if message.cancelled:
        notes.append("cancelled")
    elif message.exit_code not in (None, 0):
        notes.append(f"exit code {message.exit_code}")
    if message.truncated:
        notes.append(f"truncated, full output: {message.full_output_path}" if message.full_output_path else "truncated")
    if message.exclude_from_context:
        notes.append("not sent to the model")
    output = _pre(message.output) if message.output else '<div class="empty">(no output)</div>'
    body = _pre("$ " + message.command, "command")
    is_open = message.output.count("\n") < _COLLAPSE_LINES
    body += _details("tool-output", escape(_lines_label(message.output)), output, is_open)
    if notes:
        body += f'<div class="note">{escape("; ".join(notes))}</div>'
    return _section("bash", "Bash", body, message.timestamp)


def _custom(custom_type: str, content: str | Sequence[object], display: bool, ms: int | None) -> str:
    if not display:
        return ""  # hidden from the transcript by its extension
    return _section("custom", escape(f"[{custom_type}]"), _content_html(content, markdown=True), ms)


__all__ = ["BranchRenderer", "diff_html", "format_ms", "image_html", "tool_html"]
