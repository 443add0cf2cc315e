"""The footer: location line, usage/cost/context line with the model, extension statuses.

`FooterState` is a frozen value; `Footer.update(**changes)` swaps it and redraws only the footer. Formatting helpers
are pure functions so the token and percentage rules are testable on their own.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

import urwid
from urwid.str_util import calc_width
from urwid.util import decompose_tagmarkup

from apex_tui.widgets._canvas import Markup, Size, flow_width, plain_text, stack, text_canvas

TokenDisplay = Literal["default", "off", "full"]


def format_tokens(count: int) -> str:
    """< 1000 as is; < 10 k one decimal `k`; < 1 M rounded `k`; < 10 M one decimal `M`; else rounded `M`."""
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}k"
    if count < 1_000_000:
        return f"{round(count / 1000)}k"
    if count < 10_000_000:
        return f"{count / 1_000_000:.1f}M"
    return f"{round(count / 1_000_000)}M"


def home_relative(path: str, home: str) -> str:
    """`path` with a leading `home` shown as `~`."""
    if home and (path == home or path.startswith(home.rstrip("/") + "/")):
        return "~" + path[len(home.rstrip("/")) :]
    return path


@dataclass(frozen=True)
class FooterState:
    """Everything the footer shows. Token counts are session totals; `cache_hit_percent` is the latest response's."""

    cwd: str = ""
    home: str = ""
    git_branch: str | None = None
    session_name: str | None = None
    permission_mode: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_hit_percent: float | None = None
    cost: float = 0.0
    subscription: bool = False
    context_percent: float | None = 0.0
    """None right after compaction (shown as `?`)."""
    context_window: int = 0
    auto_compact: bool = False
    stats_pending: bool = False
    """The usage figures (tokens, cost, context) are not known yet: the usage part shows none of them."""
    provider: str | None = None
    show_provider: bool = False
    model_id: str | None = None
    reasoning: bool = False
    thinking_level: str = "off"
    extension_statuses: tuple[tuple[str, str], ...] = ()
    token_display: TokenDisplay = "default"
    ascii_symbols: bool = False
    color_blind: bool = False


def _count(state: FooterState, count: int) -> str:
    return f"{count:,}" if state.token_display == "full" else format_tokens(count)


def usage_markup(state: FooterState) -> list[Markup]:
    """The left part of line 2."""
    up, down, dot = ("^", "v", "-") if state.ascii_symbols else ("↑", "↓", "•")
    del dot
    parts: list[Markup] = []
    if state.permission_mode:
        parts.append(state.permission_mode)
    if state.stats_pending:
        return parts
    if state.token_display != "off":
        if state.input_tokens:
            parts.append(f"{up}{_count(state, state.input_tokens)}")
        if state.output_tokens:
            parts.append(f"{down}{_count(state, state.output_tokens)}")
        if state.cache_read_tokens:
            parts.append(f"R{_count(state, state.cache_read_tokens)}")
        if state.cache_write_tokens:
            parts.append(f"W{_count(state, state.cache_write_tokens)}")
        if state.cache_hit_percent is not None:
            parts.append(f"CH{state.cache_hit_percent:.0f}%")
        if state.cost > 0 or state.subscription:
            parts.append(f"${state.cost:.3f}" + (" (sub)" if state.subscription else ""))
    window = format_tokens(state.context_window)
    auto = " (auto)" if state.auto_compact else ""
    if state.context_percent is None:
        parts.append(f"?/{window}{auto}")
    else:
        pct = state.context_percent
        if pct > 90:
            style = "accent" if state.color_blind else "error"
            parts.append((style, f"{pct:.1f}%!!/{window}{auto}"))
        elif pct > 70:
            parts.append(("warning", f"{pct:.1f}%!/{window}{auto}"))
        else:
            parts.append(f"{pct:.1f}%/{window}{auto}")
    out: list[Markup] = []
    for index, part in enumerate(parts):
        if index:
            out.append(" ")
        out.append(part)
    return out


def model_text(state: FooterState, *, with_provider: bool) -> str:
    """The right part of line 2."""
    if not state.model_id:
        return "no-model"
    dot = "-" if state.ascii_symbols else "•"
    text = state.model_id
    if state.reasoning:
        level = state.thinking_level
        text += f" {dot} thinking off" if level == "off" else f" {dot} {level}"
    if with_provider and state.provider:
        text = f"({state.provider}) {text}"
    return text


def _truncate(text: str, width: int) -> str:
    if calc_width(text, 0, len(text)) <= width:
        return text
    out = ""
    for char in text:
        if calc_width(out + char + "…", 0, len(out) + 2) > width:
            break
        out += char
    return out + "…" if width > 0 else ""


def truncate_markup(markup: Markup, width: int) -> list[Markup]:
    """`markup` cut to `width` columns like `_truncate`, keeping each kept character's style (the `…` is unstyled)."""
    raw, runs = decompose_tagmarkup(markup)
    text = raw if isinstance(raw, str) else raw.decode()
    cut = _truncate(text, width)
    if cut == text:
        return [markup]
    keep = len(cut) - 1 if cut.endswith("…") else len(cut)
    out: list[Markup] = []
    position = 0
    for attr, length in runs:
        piece = text[position : min(position + length, keep)]
        if piece:
            out.append((attr, piece) if attr is not None else piece)
        position += length
        if position >= keep:
            break
    if position < keep:  # text past the last attribute run has no style
        out.append(text[position:keep])
    if cut.endswith("…"):
        out.append("…")
    return out


class Footer(urwid.Widget):
    """The footer: 2 lines, a 3rd when extensions set statuses. Dim, truncated to width."""

    _sizing = frozenset([urwid.Sizing.FLOW])
    _selectable = False
    ignore_focus = True

    def __init__(self, state: FooterState | None = None) -> None:
        super().__init__()
        self._state = state or FooterState()
        self._cached: tuple[int, FooterState, urwid.CompositeCanvas] | None = None

    @property
    def state(self) -> FooterState:
        """The current values."""
        return self._state

    def update(self, **changes: object) -> None:
        """Change some fields (names of `FooterState`); redraws the footer only when something changed."""
        # dataclasses.replace checks the field names and types at runtime; object is what **changes carries.
        state = dataclasses.replace(self._state, **changes)  # type: ignore[arg-type]
        if state != self._state:
            self._state = state
            self._invalidate()

    def rows(self, size: tuple[int], focus: bool = False) -> int:
        """2, or 3 with extension statuses."""
        return self._canvas(size[0]).rows()

    def render(self, size: Size, focus: bool = False) -> urwid.CompositeCanvas:
        """The footer lines at this width."""
        return urwid.CompositeCanvas(self._canvas(flow_width(size)))

    def _canvas(self, width: int) -> urwid.CompositeCanvas:
        if self._cached is not None and self._cached[0] == width and self._cached[1] is self._state:
            return self._cached[2]
        state = self._state
        location = home_relative(state.cwd, state.home)
        if state.git_branch:
            location += f" ({state.git_branch})"
        if state.session_name:
            location += f" {'-' if state.ascii_symbols else '•'} {state.session_name}"
        lines: list[urwid.Canvas] = [text_canvas(("dim", _truncate(location, width)), width, wrap="clip")]
        lines.append(self._usage_line(state, width))
        if state.extension_statuses:
            statuses = " ".join(text for _, text in sorted(state.extension_statuses))
            lines.append(text_canvas(("dim", _truncate(statuses, width)), width, wrap="clip"))
        canvas = stack(lines)
        self._cached = (width, state, canvas)
        return canvas

    def _usage_line(self, state: FooterState, width: int) -> urwid.Canvas:
        left = usage_markup(state)
        left_text = plain_text(left)
        left_width = calc_width(left_text, 0, len(left_text))
        right = model_text(state, with_provider=False)
        if state.show_provider and state.provider:
            with_provider = model_text(state, with_provider=True)
            if left_width + 2 + calc_width(with_provider, 0, len(with_provider)) <= width:
                right = with_provider
        right_width = calc_width(right, 0, len(right))
        if left_width + 2 + right_width <= width:
            gap = width - left_width - right_width
            return text_canvas(("dim", [*left, " " * gap, right]), width, wrap="clip")
        room = width - right_width - 2
        if room >= 10:
            # Keep the model visible; the usage part gives way but keeps its warning / error colours.
            return text_canvas(("dim", [*truncate_markup(left, room), "  ", right]), width, wrap="clip")
        return text_canvas(("dim", truncate_markup([*left, "  ", right], width)), width, wrap="clip")
