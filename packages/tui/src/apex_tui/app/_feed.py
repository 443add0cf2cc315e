"""Session events and stored messages → transcript blocks.

Each assistant message maps its content blocks (thinking, text, tool calls) to one widget each, by content index;
a `message_update` touches only the blocks whose content changed, so only the streaming tail re-renders.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
from collections.abc import Mapping
from typing import Any

from apex_ai.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from apex_coding_agent import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
)
from apex_tui.widgets import (
    AssistantTextBlock,
    BashExecutionBlock,
    Block,
    CustomMessageBlock,
    ImageRef,
    NoticeBlock,
    RenderContext,
    SummaryBlock,
    ThinkingBlock,
    ToolCallBlock,
    TranscriptView,
    UserMessageBlock,
)
from apex_tui.widgets._diff import edits_from_args


def user_text(message: UserMessage) -> str:
    """The text parts of a user message (images are not shown as text)."""
    if isinstance(message.content, str):
        return message.content
    return "".join(part.text for part in message.content if isinstance(part, TextContent))


_SKILL_RE = re.compile(
    r'<skill name="([^"]*)" location="[^"]*">\n(?:References are relative to [^\n]*\n\n)?(.*?)\n</skill>(?:\n\n(.*))?\Z',
    re.S,
)
"""The text `apex_coding_agent.resources.skills.skill_block` puts in place of a `/skill:<name> [args]` input."""


def split_skill_invocation(text: str) -> tuple[str, str, str] | None:
    """`(skill name, skill body, arguments)` of a `/skill:` run's user text; None for any other text."""
    match = _SKILL_RE.match(text)
    if match is None:
        return None
    return match.group(1), match.group(2), (match.group(3) or "").strip()


def result_text(content: object) -> str:
    """Text of a tool result's content list."""
    if isinstance(content, list):
        return "".join(part.text for part in content if isinstance(part, TextContent))
    return ""


def _pixel_size(mime_type: str, data: str) -> tuple[int | None, int | None]:
    """Width and height read from a PNG or GIF header (other formats, or bad data: unknown)."""
    try:
        head = base64.b64decode(data[:64], validate=False)
    except (binascii.Error, ValueError):
        return None, None
    if mime_type == "image/png" and head[:8] == b"\x89PNG\r\n\x1a\n" and len(head) >= 24:
        width, height = struct.unpack(">II", head[16:24])
        return int(width), int(height)
    if mime_type == "image/gif" and head[:4] == b"GIF8" and len(head) >= 10:
        width, height = struct.unpack("<HH", head[6:10])
        return int(width), int(height)
    return None, None


def image_refs(content: object) -> list[ImageRef]:
    """Placeholders for the images of a message's or tool result's content list."""
    if not isinstance(content, list):
        return []
    out: list[ImageRef] = []
    for part in content:
        if isinstance(part, ImageContent):
            width, height = _pixel_size(part.mime_type, part.data)
            out.append(ImageRef(part.mime_type, width, height))
    return out


class TranscriptFeed:
    """Keeps the transcript in step with one session's messages and events."""

    def __init__(self, transcript: TranscriptView, ctx: RenderContext) -> None:
        self.transcript = transcript
        self.ctx = ctx
        self._content_blocks: dict[int, Block] = {}
        self._tools: dict[str, ToolCallBlock] = {}
        self.bash_block: BashExecutionBlock | None = None

    # ----------------------------------------------------------------- helpers

    def add(self, block: Block) -> Block:
        """Append a block."""
        self.transcript.append(block)
        return block

    def notice(self, kind: str, text: str) -> None:
        """A status / warning / error line; a status right after a status replaces it."""
        last = self.transcript.last
        if kind == "status" and isinstance(last, NoticeBlock) and last.kind == "status":
            last.set_text(text)
            return
        # kind is one of the NoticeKind literals; callers pass constants.
        self.add(NoticeBlock(self.ctx, kind, text))  # type: ignore[arg-type]

    # ----------------------------------------------------------------- stored messages

    def add_message(self, message: object) -> None:
        """Render a finished message (session load, or a message the run committed)."""
        if isinstance(message, UserMessage):
            text, images = user_text(message), image_refs(message.content)
            skill = split_skill_invocation(text)
            if skill is not None:
                # A `/skill:` run: the skill as a labelled block, the arguments typed after it as the user's text.
                name, body, text = skill
                self.add(CustomMessageBlock(self.ctx, f"skill: {name}", body))
                if not text and not images:
                    return
            self.add(UserMessageBlock(self.ctx, text, images))
        elif isinstance(message, AssistantMessage):
            self.start_assistant()
            self.end_assistant(message)  # builds the blocks (it syncs first) and marks them final
        elif isinstance(message, ToolResultMessage):
            self.tool_result(
                message.tool_call_id,
                result_text(message.content),
                message.is_error,
                message.details,
                image_refs(message.content),
            )
        elif isinstance(message, BashExecutionMessage):
            block = BashExecutionBlock(
                self.ctx, message.command, exclude_from_context=bool(message.exclude_from_context)
            )
            block.append_output(message.output)
            block.finish(message.exit_code, cancelled=message.cancelled, full_output_path=message.full_output_path)
            self.add(block)
        elif isinstance(message, CompactionSummaryMessage):
            self.add(
                SummaryBlock(self.ctx, "compaction", f"Compacted from {message.tokens_before} tokens", message.summary)
            )
        elif isinstance(message, BranchSummaryMessage):
            self.add(SummaryBlock(self.ctx, "branch", "Branch summary", message.summary))
        elif isinstance(message, CustomMessage) and message.display:
            content = message.content if isinstance(message.content, str) else result_text(message.content)
            self.add(CustomMessageBlock(self.ctx, message.custom_type, content))

    # ----------------------------------------------------------------- streaming assistant

    def start_assistant(self) -> None:
        """A new assistant message begins: its blocks are created as content arrives."""
        self._content_blocks = {}

    def sync_assistant(self, message: AssistantMessage) -> None:
        """Bring the blocks of the current assistant message up to date with its (partial) content."""
        for index, part in enumerate(message.content):
            block = self._content_blocks.get(index)
            if isinstance(part, TextContent):
                if not isinstance(block, AssistantTextBlock) or isinstance(block, ThinkingBlock):
                    block = self._content_blocks[index] = self.add(AssistantTextBlock(self.ctx))
                assert isinstance(block, AssistantTextBlock)
                if block.text != part.text:
                    block.set_text(part.text)
            elif isinstance(part, ThinkingContent):
                if not isinstance(block, ThinkingBlock):
                    block = self._content_blocks[index] = self.add(ThinkingBlock(self.ctx))
                assert isinstance(block, ThinkingBlock)
                if block.text != part.thinking:
                    block.set_text(part.thinking)
            elif isinstance(part, ToolCall):
                if not isinstance(block, ToolCallBlock):
                    block = self._tools.get(part.id) or ToolCallBlock(self.ctx, part.name, part.arguments, part.id)
                    self._content_blocks[index] = self.add(block)
                    self._tools[part.id] = block
                assert isinstance(block, ToolCallBlock)
                block.set_args(part.arguments)

    def end_assistant(self, message: AssistantMessage) -> None:
        """The message is final: lay its text out exactly, show its error or abort."""
        self.sync_assistant(message)
        for block in self._content_blocks.values():
            if isinstance(block, AssistantTextBlock):
                block.finish()
        if message.stop_reason == "aborted":
            self.add(NoticeBlock.aborted(self.ctx))
            for block in self._content_blocks.values():
                if isinstance(block, ToolCallBlock) and block.status == "pending":
                    block.set_result("Operation aborted", is_error=True)
        elif message.stop_reason == "error":
            self.notice("error", message.error_message or "Unknown error")
        self._content_blocks = {}

    # ----------------------------------------------------------------- tools

    def tool_start(self, call_id: str, name: str, args: Mapping[str, Any]) -> None:
        """A tool starts running (its block usually exists from the streamed call)."""
        block = self._tools.get(call_id)
        if block is None:
            block = self._tools[call_id] = ToolCallBlock(self.ctx, name, args, call_id)
            self.add(block)
        else:
            block.set_args(args)

    def tool_preview(self, call_id: str, diff: str | None) -> None:
        """The diff a pending `edit` will make (`edit_preview`)."""
        block = self._tools.get(call_id)
        if block is not None and diff is not None:
            block.set_preview(diff)

    def tool_update(self, call_id: str, partial: object) -> None:
        """Partial output of a running tool."""
        block = self._tools.get(call_id)
        if block is not None:
            block.set_output(result_text(getattr(partial, "content", None)))

    def tool_result(
        self, call_id: str, text: str, is_error: bool, details: object, images: list[ImageRef] | None = None
    ) -> None:
        """The tool finished (`images`: placeholders for the images among its content)."""
        block = self._tools.get(call_id)
        if block is None:
            return
        block.set_result(
            text, is_error=is_error, details=details if isinstance(details, Mapping) else None, images=images or ()
        )

    # ----------------------------------------------------------------- user bash

    def start_bash(self, command: str, *, exclude: bool) -> BashExecutionBlock:
        """A `!cmd` block that streams its output."""
        self.bash_block = BashExecutionBlock(self.ctx, command, exclude_from_context=exclude)
        self.add(self.bash_block)
        return self.bash_block


PREVIEW_MAX_BYTES = 2_000_000
"""Larger files get no preview from the file (the block numbers lines within the replaced text until the result)."""


def edit_preview(cwd: str, args: Mapping[str, Any]) -> str | None:
    """The display diff the `edit` tool will report for `args`, computed as it does from the file as it is now, so
    the pending block (under the permission question) shows the file's line numbers; None when the file cannot be
    read or an edit would not apply (the tool then reports the error)."""
    # Any: tool arguments are JSON values.
    from apex_coding_agent import preview_edit_diff

    path = args.get("path")
    pairs = edits_from_args(args)
    if not isinstance(path, str) or not pairs:
        return None
    return preview_edit_diff(cwd, path, pairs, PREVIEW_MAX_BYTES)
