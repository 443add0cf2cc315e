"""Docs and `/hotkeys` tables generated from the registry."""

import re
import subprocess
import sys
from pathlib import Path

from apex_tui.keybindings import KEYBINDING_IDS, KeybindingManager, render_hotkeys, render_keybindings_reference

REPO_ROOT = Path(__file__).resolve().parents[4]


def test_reference_lists_every_id_once_in_canonical_order() -> None:
    text = render_keybindings_reference()
    ids = re.findall(r"^\| `([^`]+)` \|", text, flags=re.MULTILINE)
    assert ids == list(KEYBINDING_IDS)


def test_reference_rows_show_defaults_and_variants() -> None:
    lines = render_keybindings_reference().splitlines()

    def row(id_: str) -> str:
        return next(line for line in lines if line.startswith(f"| `{id_}` |"))

    assert row("tui.editor.undo") == (
        "| `tui.editor.undo` | `ctrl+-` (`ctrl+z` on Windows; `alt+z` on WSL) | Undo last edit |"
    )
    assert row("app.suspend") == "| `app.suspend` | `ctrl+z` (None on Windows) | Suspend to background |"
    assert row("tui.editor.historyPrevious").split(" | ")[1] == "None"
    assert row("app.model.cycleBackward").split(" | ")[1] == "`shift+ctrl+p` (`alt+p` on Windows and WSL)"
    assert "### Cursor movement" in lines
    assert "### Scoped models" in lines


def test_hotkeys_reflect_the_live_manager() -> None:
    manager = KeybindingManager("linux", {"app.tools.expand": ["ctrl+o"], "app.clear": []})
    text = render_hotkeys(manager)
    assert "| `Ctrl+O` | Cycle conversation detail: overview, details, all |" in text
    assert "Clear editor" not in text
    assert "Select the previous prompt history entry" not in text  # unbound by default
    assert "| `Ctrl+Shift+P` | Cycle to previous model (may need extended keys) |" in text
    assert text.index("**Navigation**") < text.index("**Editing**") < text.index("**Other**")


def test_hotkeys_on_macos_show_option() -> None:
    text = render_hotkeys(KeybindingManager("darwin"))
    assert "| `Option+Enter` | Queue follow-up message |" in text


def test_script_prints_the_reference() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "gen_keybindings_doc.py")],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    assert result.stdout == render_keybindings_reference()


def test_keybindings_package_does_not_import_the_coding_agent() -> None:
    code = "import sys, apex_tui.keybindings; print(any(m.startswith('apex_coding_agent') for m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30)
    assert result.stdout.strip() == "False"
