"""Transcript, message, footer and status widgets. Independent of the agent layers: the app feeds them plain values."""

from apex_tui.widgets._block import Block, DetailLevel, RenderContext
from apex_tui.widgets.footer import Footer, FooterState, format_tokens
from apex_tui.widgets.markdown import MarkdownRenderer, split_blocks
from apex_tui.widgets.messages import (
    AssistantTextBlock,
    BashExecutionBlock,
    CustomMessageBlock,
    NoticeBlock,
    SummaryBlock,
    ThinkingBlock,
    ToolCallBlock,
    UserMessageBlock,
)
from apex_tui.widgets.status import AlarmScheduler, StatusLine
from apex_tui.widgets.transcript import KeyMatcher, TranscriptView, TranscriptWalker

__all__ = [
    "AlarmScheduler",
    "AssistantTextBlock",
    "BashExecutionBlock",
    "Block",
    "CustomMessageBlock",
    "DetailLevel",
    "Footer",
    "FooterState",
    "KeyMatcher",
    "MarkdownRenderer",
    "NoticeBlock",
    "RenderContext",
    "StatusLine",
    "SummaryBlock",
    "ThinkingBlock",
    "ToolCallBlock",
    "TranscriptView",
    "TranscriptWalker",
    "UserMessageBlock",
    "format_tokens",
    "split_blocks",
]
