"""The first transcript items (tui.md §1, §13): the header and the loaded-resources block, from the session.

Resources come from the session: context files from its system-prompt options, skills and prompt templates from its
resource loader, extensions from its extension runner (hidden built-ins left out), themes from the app's catalog
(files only; the built-ins are always there). Theme name collisions are listed as `[Theme conflicts]`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from apex_tui.widgets import HeaderBlock, HeaderInfo, LoadedResourcesBlock, ResourceItem, ResourceSection

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp

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
