"""Transcript, message, footer and status widgets. Independent of the agent layers: the app feeds them plain values."""

from apex_tui.widgets._block import Block, DetailLevel, RenderContext
from apex_tui.widgets.footer import Footer, FooterState, format_tokens, truncate_markup
from apex_tui.widgets.header import HeaderBlock, HeaderInfo, LoadedResourcesBlock, ResourceItem, ResourceSection
from apex_tui.widgets.hyperlink import LinkStyle, hyperlink_escape, link_url
from apex_tui.widgets.images import ImageRef
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
from apex_tui.widgets.pending import PendingArea, PendingMessage
from apex_tui.widgets.scrollbar import ScrollbarMode
from apex_tui.widgets.search import SearchBox, TranscriptSearch
from apex_tui.widgets.selection import Selection, SelectionPoint
from apex_tui.widgets.status import AlarmScheduler, StatusLine
from apex_tui.widgets.transcript import KeyMatcher, RowDecorator, TranscriptView, TranscriptWalker, VisibleRow

__all__ = [
    "AlarmScheduler",
    "AssistantTextBlock",
    "BashExecutionBlock",
    "Block",
    "CustomMessageBlock",
    "DetailLevel",
    "Footer",
    "FooterState",
    "HeaderBlock",
    "HeaderInfo",
    "ImageRef",
    "KeyMatcher",
    "LinkStyle",
    "LoadedResourcesBlock",
    "MarkdownRenderer",
    "NoticeBlock",
    "PendingArea",
    "PendingMessage",
    "RenderContext",
    "ResourceItem",
    "ResourceSection",
    "RowDecorator",
    "ScrollbarMode",
    "SearchBox",
    "Selection",
    "SelectionPoint",
    "StatusLine",
    "SummaryBlock",
    "ThinkingBlock",
    "ToolCallBlock",
    "TranscriptSearch",
    "TranscriptView",
    "TranscriptWalker",
    "UserMessageBlock",
    "VisibleRow",
    "format_tokens",
    "hyperlink_escape",
    "link_url",
    "split_blocks",
    "truncate_markup",
]
