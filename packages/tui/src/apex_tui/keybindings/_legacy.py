"""Pre-namespaced keybinding ids: the mapping and the one-time file rewrite."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

from apex_tui.keybindings._registry import KEYBINDING_IDS

_EDITOR_NAMES = (
    "cursorUp",
    "cursorDown",
    "cursorLeft",
    "cursorRight",
    "cursorWordLeft",
    "cursorWordRight",
    "cursorLineStart",
    "cursorLineEnd",
    "jumpForward",
    "jumpBackward",
    "pageUp",
    "pageDown",
    "deleteCharBackward",
    "deleteCharForward",
    "deleteWordBackward",
    "deleteWordForward",
    "deleteToLineStart",
    "deleteToLineEnd",
    "yank",
    "yankPop",
    "undo",
)

#: Legacy id -> namespaced id (59 entries).
LEGACY_IDS: dict[str, str] = {
    **{name: f"tui.editor.{name}" for name in _EDITOR_NAMES},
    **{name: f"tui.input.{name}" for name in ("newLine", "submit", "tab", "copy")},
    "selectUp": "tui.select.up",
    "selectDown": "tui.select.down",
    "selectPageUp": "tui.select.pageUp",
    "selectPageDown": "tui.select.pageDown",
    "selectConfirm": "tui.select.confirm",
    "selectCancel": "tui.select.cancel",
    "interrupt": "app.interrupt",
    "clear": "app.clear",
    "exit": "app.exit",
    "suspend": "app.suspend",
    "cycleThinkingLevel": "app.thinking.cycle",
    "toggleThinking": "app.thinking.toggle",
    "cycleModelForward": "app.model.cycleForward",
    "cycleModelBackward": "app.model.cycleBackward",
    "selectModel": "app.model.select",
    "expandTools": "app.tools.expand",
    "externalEditor": "app.editor.external",
    "pasteImage": "app.clipboard.pasteImage",
    "followUp": "app.message.followUp",
    "dequeue": "app.message.dequeue",
    "newSession": "app.session.new",
    "tree": "app.session.tree",
    "fork": "app.session.fork",
    "resume": "app.session.resume",
    "toggleSessionPath": "app.session.togglePath",
    "toggleSessionSort": "app.session.toggleSort",
    "toggleSessionNamedFilter": "app.session.toggleNamedFilter",
    "renameSession": "app.session.rename",
    "deleteSession": "app.session.delete",
    "deleteSessionNoninvasive": "app.session.deleteNoninvasive",
    "treeFoldOrUp": "app.tree.foldOrUp",
    "treeUnfoldOrDown": "app.tree.unfoldOrDown",
    "treeEditLabel": "app.tree.editLabel",
    "treeToggleLabelTimestamp": "app.tree.toggleLabelTimestamp",
}

_CANONICAL_INDEX = {id_: i for i, id_ in enumerate(KEYBINDING_IDS)}


def has_legacy_ids(config: Mapping[str, object]) -> bool:
    """True when any key of the parsed file is a legacy id."""
    return any(key in LEGACY_IDS for key in config)


def migrate_legacy_ids(config: Mapping[str, object]) -> dict[str, object]:
    """Rename legacy ids; when both a legacy id and its new id are present the new one wins.

    The result is ordered canonically: known ids in definition order, then unknown keys alphabetically.
    Values are kept as they are (validation is the loader's job).
    """
    migrated: dict[str, object] = {key: value for key, value in config.items() if key not in LEGACY_IDS}
    for key, value in config.items():
        new_id = LEGACY_IDS.get(key)
        if new_id is not None and new_id not in migrated:
            migrated[new_id] = value
    known = sorted((k for k in migrated if k in _CANONICAL_INDEX), key=_CANONICAL_INDEX.__getitem__)
    unknown = sorted(k for k in migrated if k not in _CANONICAL_INDEX)
    return {k: migrated[k] for k in [*known, *unknown]}


def dump_keybindings(config: Mapping[str, object]) -> str:
    """File form: 2-space indented JSON and a trailing newline."""
    return json.dumps(config, indent=2, ensure_ascii=False) + "\n"


def migrate_keybindings_file(path: Path) -> bool:
    """Rewrite `path` in place when it is a JSON object holding any legacy id; return whether it was rewritten.

    A missing, unreadable or non-object file is left untouched (the loader reports it). The write goes
    through a temporary file and `os.replace`, so a crash never leaves half a file.
    """
    try:
        parsed: object = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: nested too deeply
        return False
    if not isinstance(parsed, dict) or not has_legacy_ids(parsed):
        return False
    text = dump_keybindings(migrate_legacy_ids(parsed))
    mode = stat.S_IMODE(path.stat().st_mode)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return True
