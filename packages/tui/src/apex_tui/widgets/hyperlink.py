"""OSC 8 hyperlinks: a link label's style carries its URL, and the screen turns that into escape sequences.

Widgets draw with style names; a `LinkStyle` is such a name (equal to and hashing like its base style, so palette
lookups and canvases treat it as that style) that also knows its URL. The raw screen looks up an escape for every
run it writes (`_attr_to_escape`); a screen that wants hyperlinks appends `hyperlink_escape(attr)` to it, which opens
the link on link runs and closes it on every other run.
"""

from __future__ import annotations

from collections.abc import Hashable

OSC8_CLOSE = "\x1b]8;;\x1b\\"


class LinkStyle(str):
    """A style name that carries a hyperlink target."""

    url: str

    def __new__(cls, style: str, url: str) -> LinkStyle:
        """`style` as drawn, `url` as the link target."""
        instance = super().__new__(cls, style)
        instance.url = url
        return instance


def link_url(attr: Hashable) -> str | None:
    """The URL a run's attribute links to, if any."""
    return attr.url if isinstance(attr, LinkStyle) else None


def osc8_open(url: str) -> str:
    """The escape that starts a hyperlink to `url` (control characters removed so it cannot end early)."""
    safe = "".join(char for char in url if 0x20 <= ord(char) != 0x7F)
    return f"\x1b]8;;{safe}\x1b\\"


def hyperlink_escape(attr: Hashable) -> str:
    """What to write after a run's colour escape: open the run's link, or close any link left open."""
    url = link_url(attr)
    return osc8_open(url) if url else OSC8_CLOSE
