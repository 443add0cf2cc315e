"""Startup blocks: the header splash and the loaded-resources block, both from plain values.

Header: a small logo mark with the version on the left; name, model and cwd (cut from the head to fit) on the right;
one hint line; with `--verbose` a cheat-sheet of live key bindings. Loaded resources: `[Context]`, `[Skills]`,
`[Prompts]`, `[Extensions]`, `[Themes]` with short names (full paths at detail `all`), and problem sections such as
`[Skill conflicts]` in the warning colour with one message per line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import urwid
from urwid.str_util import calc_width

from apex_tui.widgets._block import Block, DetailLevel, RenderContext
from apex_tui.widgets._canvas import Markup, blank, pad_sides, stack, text_canvas

LOGO = ("  ╱╲  ", " ╱╱╲╲ ", "╱╱──╲╲")
"""The logo mark: a stylised "A" (our own drawing)."""
_LOGO_WIDTH = 8


def head_truncate(text: str, width: int) -> str:
    """`text` cut from the start to fit `width` columns, with a leading `…` when cut."""
    if calc_width(text, 0, len(text)) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    out = ""
    for char in reversed(text):
        if calc_width(char + out, 0, len(out) + 1) > width - 1:
            break
        out = char + out
    return "…" + out


@dataclass(frozen=True)
class HeaderInfo:
    """What the header shows."""

    version: str
    model: str | None = None
    cwd: str = ""
    hint: str = ""
    shortcuts: tuple[tuple[str, str], ...] = ()
    """(keys, what they do) pairs for `--verbose`, built by the app from the live bindings."""
    name: str = "apex-code"


class HeaderBlock(Block):
    """The first transcript item (not shown at all when `quietStartup` is set: the app just does not add it)."""

    def __init__(self, ctx: RenderContext, info: HeaderInfo) -> None:
        super().__init__(ctx)
        self.info = info

    def search_text(self) -> str:
        """Name, version, model, cwd, hint and shortcuts."""
        info = self.info
        keys = [f"{k} {d}" for k, d in info.shortcuts]
        return "\n".join([f"{info.name} v{info.version}", info.model or "", info.cwd, info.hint, *keys])

    def _build(self, width: int) -> urwid.Canvas:
        pad = self.ctx.output_pad if width > 2 * self.ctx.output_pad + 1 else 0
        inner = width - 2 * pad
        parts = [self._splash(inner)]
        if self.info.hint:
            parts.append(text_canvas(("dim", self.info.hint), inner))
        if self.info.shortcuts:
            key_width = min(max(calc_width(k, 0, len(k)) for k, _ in self.info.shortcuts) + 2, inner // 2)
            for keys, what in self.info.shortcuts:
                line: list[Markup] = [("accent", keys.ljust(key_width)), ("muted", what)]
                parts.append(text_canvas(line, inner))
        return pad_sides(stack(parts), pad, pad)

    def _splash(self, width: int) -> urwid.Canvas:
        info = self.info
        logo = width >= _LOGO_WIDTH + 20
        right = width - _LOGO_WIDTH if logo else width
        label = 7  # "model  " / "cwd    "
        lines: list[Markup] = [("header.logo", info.name), " ", ("muted", f"v{info.version}")]
        lines += ["\n", ("muted", "model".ljust(label)), info.model or ("warning", "no model")]
        lines += ["\n", ("muted", "cwd".ljust(label)), head_truncate(info.cwd, max(1, right - label))]
        column = text_canvas(lines, right, wrap="clip")
        if not logo:
            return column
        rows: list[Markup] = []
        for row in LOGO:
            rows.extend([("header.logo", row), "\n"])
        mark = text_canvas(rows[:-1], _LOGO_WIDTH, wrap="clip")
        return urwid.CanvasJoin([(mark, None, False, _LOGO_WIDTH), (column, None, False, right)])


@dataclass(frozen=True)
class ResourceItem:
    """One loaded resource: its short name and where it came from."""

    name: str
    path: str = ""


@dataclass(frozen=True)
class ResourceSection:
    """A labelled list (`Context`, `Skills`, ...); `problem` sections (`Skill conflicts`, ...) list messages."""

    label: str
    items: tuple[ResourceItem, ...] = field(default_factory=tuple)
    problem: bool = False


class LoadedResourcesBlock(Block):
    """Loaded context files, skills, prompts, extensions and themes; empty sections are left out."""

    def __init__(self, ctx: RenderContext, sections: Sequence[ResourceSection]) -> None:
        super().__init__(ctx)
        self.sections = tuple(s for s in sections if s.items)

    def search_text(self) -> str:
        """Labels, names and paths."""
        out: list[str] = []
        for section in self.sections:
            out.append(f"[{section.label}]")
            out.extend(f"{item.name} {item.path}".rstrip() for item in section.items)
        return "\n".join(out)

    def _build(self, width: int) -> urwid.Canvas:
        pad = self.ctx.output_pad if width > 2 * self.ctx.output_pad + 1 else 0
        inner = width - 2 * pad
        full = self.ctx.detail is DetailLevel.ALL
        parts: list[urwid.Canvas] = []
        for section in self.sections:
            label: Markup = ("warning" if section.problem else "accent", f"[{section.label}]")
            if section.problem:
                parts.append(text_canvas(label, inner))
                parts.extend(text_canvas(("warning", f"  {item.name}"), inner) for item in section.items)
            elif full:
                parts.append(text_canvas(label, inner))
                for item in section.items:
                    where: list[Markup] = [("dim", f"  {item.path}")] if item.path else []
                    parts.append(text_canvas(["  ", item.name, *where], inner))
            else:
                names = ", ".join(item.name for item in section.items)
                parts.append(text_canvas([label, " ", ("muted", names)], inner))
        return pad_sides(stack(parts or [blank(inner, 0)]), pad, pad)
