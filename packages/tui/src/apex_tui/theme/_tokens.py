"""Colour tokens of a theme file and the display styles (urwid attribute names) widgets draw with.

A theme JSON names colours by token. Widgets never name colours: they name a style, and every
style is one palette entry. Each token is itself a style (its colour as foreground, background inherited), the
`*Bg` tokens are background styles, and a few derived styles add text settings (bold, italics, underline).
"""

from __future__ import annotations

from typing import Final

REQUIRED_TOKENS: Final[tuple[str, ...]] = (
    # core UI
    "accent",
    "border",
    "borderAccent",
    "borderMuted",
    "success",
    "error",
    "warning",
    "muted",
    "dim",
    "text",
    "thinkingText",
    # backgrounds and content
    "selectedBg",
    "userMessageBg",
    "userMessageText",
    "customMessageBg",
    "customMessageText",
    "customMessageLabel",
    "toolPendingBg",
    "toolSuccessBg",
    "toolErrorBg",
    "toolTitle",
    "toolOutput",
    # markdown
    "mdHeading",
    "mdLink",
    "mdLinkUrl",
    "mdCode",
    "mdCodeBlock",
    "mdCodeBlockBorder",
    "mdQuote",
    "mdQuoteBorder",
    "mdHr",
    "mdListBullet",
    # diffs
    "toolDiffAdded",
    "toolDiffRemoved",
    "toolDiffContext",
    # syntax highlighting
    "syntaxComment",
    "syntaxKeyword",
    "syntaxFunction",
    "syntaxVariable",
    "syntaxString",
    "syntaxNumber",
    "syntaxType",
    "syntaxOperator",
    "syntaxPunctuation",
    # thinking level rule colours
    "thinkingOff",
    "thinkingMinimal",
    "thinkingLow",
    "thinkingMedium",
    "thinkingHigh",
    "thinkingXhigh",
    "bashMode",
)
"""The 51 tokens every theme must define; a theme missing one is invalid."""

OPTIONAL_TOKENS: Final[dict[str, str]] = {"scrollbarThumb": "selectedBg", "thinkingMax": "thinkingXhigh"}
"""Optional tokens and the token whose colour each one takes when absent."""

ALL_TOKENS: Final[tuple[str, ...]] = (*REQUIRED_TOKENS, *OPTIONAL_TOKENS)

BACKGROUND_TOKENS: Final[frozenset[str]] = frozenset(
    {"selectedBg", "userMessageBg", "customMessageBg", "toolPendingBg", "toolSuccessBg", "toolErrorBg"}
)
"""Tokens whose colour is a background; their style keeps the theme's `text` colour as foreground."""

DERIVED_STYLES: Final[dict[str, tuple[str | None, str]]] = {
    # style name: (foreground token or None to inherit, comma-separated urwid settings)
    "md.heading": ("mdHeading", "bold"),
    "md.heading1": ("mdHeading", "bold,underline"),
    "md.strong": (None, "bold"),
    "md.emph": (None, "italics"),
    "md.strike": (None, "strikethrough"),
    "md.link": ("mdLink", "underline"),
    "thinking": ("thinkingText", "italics"),
    "tool.title": ("toolTitle", "bold"),
    "custom.label": ("customMessageLabel", "bold"),
    # fullscreen transcript extras: the current search match and the mouse selection draw in reverse video
    "search.current": ("accent", "standout,bold"),
    "selection": (None, "standout"),
    "scrollbar.track": ("borderMuted", ""),
    "header.logo": ("accent", "bold"),
}
"""Styles built from a token plus text settings."""

BACKGROUND_STYLES: Final[dict[str, tuple[str, str]]] = {
    # style name: (background token, foreground token)
    "user": ("userMessageBg", "userMessageText"),
    "custom": ("customMessageBg", "customMessageText"),
    "tool.pending": ("toolPendingBg", "text"),
    "tool.success": ("toolSuccessBg", "text"),
    "tool.error": ("toolErrorBg", "text"),
    "selected": ("selectedBg", "text"),
    "search.match": ("selectedBg", "text"),
    "scrollbar.thumb": ("scrollbarThumb", "accent"),
}
"""Block backgrounds: text inside takes the foreground token unless its own style names one."""

REQUIRED_STYLES: Final[tuple[str, ...]] = (*ALL_TOKENS, *DERIVED_STYLES, *BACKGROUND_STYLES)
"""Every style name a widget may use; `Theme.palette()` has an entry for each."""
