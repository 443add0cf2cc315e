"""The first transcript items (tui.md §1, §13): the header, the loaded-resources block and "what's new".

Resources come from the session: context files from its system-prompt options, skills and prompt templates from its
resource loader, extensions from its extension runner (hidden built-ins left out), themes from the app's catalog
(files only; the built-ins are always there). Theme name collisions are listed as `[Theme conflicts]`.

"What's new" (`show_whats_new`) goes right after those blocks, above the session's messages: the app builds the
header, resources and messages when it is created, so the block is spliced in at the position where the history
starts (`LazyHistory.head`), and that position moves down by one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

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


def insert_before_history(app: InteractiveApp, block: Block) -> None:
    """Put `block` after the start-up blocks and above the session's messages (see the module docstring)."""
    view = app.transcript
    head = min(app.history.head, len(view))
    blocks = list(view.walker)
    # `clear` + `extend` is the view's way to insert; at start-up the view follows the end, as `clear` leaves it.
    view.clear()
    view.extend([*blocks[:head], block, *blocks[head:]])
    app.history.head = head + 1


def show_whats_new(
    app: InteractiveApp,
    *,
    quiet: bool = False,
    changelogs: Callable[[], Sequence[Changelog]] = installed_changelogs,
) -> WhatsNew | None:
    """Check `lastChangelogVersion` against the app's version (updating it) and show what is new, if anything.

    Condensed to one line when `collapseChangelog` is on, and with a quiet start-up (which has no header to put a
    long block under). Returns what was shown.
    """
    settings = app.session.settings_manager
    news = check_whats_new(settings, app.version, changelogs)
    if news is None:
        return None
    condensed = quiet or settings.get_bool("collapseChangelog", False)
    insert_before_history(app, whats_new_block(app, news, condensed=condensed))
    return news
