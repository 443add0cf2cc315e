"""The first transcript items: the header, the loaded-resources block, the `Model scope: …` line
and "what's new". The app adds them in that order, then the session's messages (`InteractiveApp._startup`).

Resources come from the session: context files from its system-prompt options, skills and prompt templates from its
resource loader, extensions from its extension runner (hidden built-ins left out), themes from the app's catalog
(files only; the built-ins are always there). Theme name collisions are listed as `[Theme conflicts]`.

The scope line lists the scoped models (`--models` / `enabledModels`) as `id` or `id:thinking`, comma-separated, then
the key that cycles them, all dim.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import urwid

from apex_tui.app._changelog import Changelog, installed_changelogs
from apex_tui.app._whats_new import WhatsNew, check_whats_new
from apex_tui.widgets import (
    Block,
    CustomMessageBlock,
    HeaderBlock,
    HeaderInfo,
    LoadedResourcesBlock,
    NoticeBlock,
    ResourceItem,
    ResourceSection,
)
from apex_tui.widgets._canvas import Markup, pad_sides, text_canvas

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp

WHATS_NEW_LABEL = "What's New"

SHORTCUT_IDS: tuple[tuple[str, str], ...] = (
    ("app.interrupt", "interrupt"),
    ("app.clear", "clear / twice to exit"),
    ("app.exit", "exit (empty editor)"),
    ("app.model.select", "choose model"),
    ("app.thinking.cycle", "cycle thinking level"),
    ("app.tools.expand", "conversation detail"),
    ("app.editor.external", "external editor"),
    ("app.message.followUp", "queue follow-up"),
)
"""Bindings in the `--verbose` cheat-sheet."""


def _short(path: str | Path, cwd: str) -> str:
    text = str(path)
    home = str(Path.home())
    if text.startswith(cwd.rstrip("/") + "/"):
        return os.path.relpath(text, cwd)
    if text.startswith(home + "/"):
        return "~" + text[len(home) :]
    return text


def header_block(app: InteractiveApp, *, verbose: bool = False) -> HeaderBlock:
    """The splash: version, model, cwd, one hint line, and with `verbose` the key cheat-sheet."""
    model = app.session.model
    keymap = app.keymap
    hint = f"/ commands · ! bash · {keymap.display('app.exit') or 'ctrl+d'} on an empty editor exits"
    shortcuts = (
        tuple((keymap.display(id_), what) for id_, what in SHORTCUT_IDS if keymap.display(id_)) if verbose else ()
    )
    info = HeaderInfo(
        version=app.version or "dev",
        model=f"{model.provider}/{model.id}" if model is not None else None,
        cwd=app.cwd,
        hint=hint,
        shortcuts=shortcuts,
    )
    return HeaderBlock(app.ctx, info)


def resource_sections(app: InteractiveApp) -> list[ResourceSection]:
    """`[Context]`, `[Skills]`, `[Prompts]`, `[Extensions]`, `[Themes]` and `[Theme conflicts]`."""
    session = app.session
    cwd = app.cwd
    context = [
        ResourceItem(_short(str(f.get("path", "")), cwd), str(f.get("path", "")))
        for f in session.system_prompt_options.context_files
    ]
    loader = session.resource_loader
    skills = [ResourceItem(s.name, str(s.file_path)) for s in loader.skills] if loader is not None else []
    prompts = [ResourceItem(f"/{t.name}", str(t.file_path)) for t in loader.prompt_templates] if loader else []
    runner = session.extension_runner
    extensions = (
        [ResourceItem(Path(e.path).name or e.path, e.path) for e in runner.extensions if not e.hidden]
        if runner is not None
        else []
    )
    themes = [ResourceItem(t.name, str(t.path)) for t in app.themes.sources() if t.path is not None]
    conflicts = [ResourceItem(str(d)) for d in app.themes.result.diagnostics if d.type == "collision"]
    return [
        ResourceSection("Context", tuple(context)),
        ResourceSection("Skills", tuple(skills)),
        ResourceSection("Prompts", tuple(prompts)),
        ResourceSection("Extensions", tuple(extensions)),
        ResourceSection("Themes", tuple(themes)),
        ResourceSection("Theme conflicts", tuple(conflicts), problem=True),
    ]


def resources_block(app: InteractiveApp) -> LoadedResourcesBlock | None:
    """The loaded-resources block, or None when nothing was loaded."""
    sections = resource_sections(app)
    if not any(section.items for section in sections):
        return None
    return LoadedResourcesBlock(app.ctx, sections)


def whats_new_block(app: InteractiveApp, news: WhatsNew, *, condensed: bool) -> Block:
    """The new changelog entries as a labelled markdown block, or (`condensed`) one info line naming the version."""
    if condensed:
        return NoticeBlock(app.ctx, "info", news.condensed)
    return CustomMessageBlock(app.ctx, WHATS_NEW_LABEL, news.markdown)


class ModelScopeBlock(Block):
    """The dim `Model scope: a, b:high (ctrl+p to cycle)` start-up line.

    Its own block type, not a status `NoticeBlock`: a status right after a status replaces it, and the first
    `Switched to …` must not wipe this line out.
    """

    gap = 0

    def __init__(self, app: InteractiveApp, models: Sequence[str], cycle_key: str | None) -> None:
        super().__init__(app.ctx)
        self.text = f"Model scope: {', '.join(models)}" + (f" ({cycle_key} to cycle)" if cycle_key else "")

    def search_text(self) -> str:
        """The line as shown."""
        return self.text

    def _build(self, width: int) -> urwid.Canvas:
        pad = self.ctx.output_pad if width > 2 * self.ctx.output_pad + 1 else 0
        markup: Markup = ("dim", self.text)
        return pad_sides(text_canvas(markup, width - 2 * pad), pad, pad)


def model_scope_block(app: InteractiveApp) -> ModelScopeBlock | None:
    """The scope line for the session's scoped models, or None when the session has none."""
    scoped = app.session.scoped_models
    if not scoped:
        return None
    names = [f"{s.model.id}:{s.thinking_level}" if s.thinking_level else s.model.id for s in scoped]
    return ModelScopeBlock(app, names, app.keymap.display("app.model.cycleForward") or None)


def whats_new_startup(
    app: InteractiveApp,
    *,
    quiet: bool = False,
    changelogs: Callable[[], Sequence[Changelog]] = installed_changelogs,
) -> tuple[WhatsNew | None, Block | None]:
    """Check `lastChangelogVersion` against the app's version (updating it); what is new and its block, if any.

    Condensed to one line when `collapseChangelog` is on, and with a quiet start-up (which has no header to put a
    long block under).
    """
    settings = app.session.settings_manager
    news = check_whats_new(settings, app.version, changelogs)
    if news is None:
        return None, None
    condensed = quiet or settings.get_bool("collapseChangelog", False)
    return news, whats_new_block(app, news, condensed=condensed)
