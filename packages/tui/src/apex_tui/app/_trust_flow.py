"""`/trust`: save this project's trust decision to `trust.json`; it applies at the next start.

The running session keeps the trust it started with: project settings, extensions and resources were loaded
(or skipped) at startup, and changing that mid-session would leave half of them loaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from apex_coding_agent import TrustFileError, TrustStore, canonical_project_path
from apex_tui.app._modal import show_modal
from apex_tui.app._picker import Choice, Picker

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp

TRUST_FILE = "trust.json"


def trust_command_choices(cwd: Path) -> list[Choice]:
    """The three saved decisions; the session-only ones of the startup prompt make no sense after startup."""
    return [
        Choice("Trust", "trust", "load this folder's .apex-code configuration"),
        Choice(f"Trust parent folder ({cwd.parent})", "trust_parent", "every project below it"),
        Choice("Do not trust", "deny", "ignore this folder's configuration"),
    ]


def save_trust(store: TrustStore, cwd: Path, choice: str) -> str:
    """Write `choice` for `cwd` the way the startup prompt does; returns the confirmation line."""
    if choice == "trust":
        store.save({cwd: True})
        return f"Project trusted: {cwd} (applies next start)"
    if choice == "trust_parent":
        # The folder's own entry is cleared so the parent's decision is the one found from here.
        store.save({cwd.parent: True, cwd: None})
        return f"Parent folder trusted: {cwd.parent} (applies next start)"
    store.save({cwd: False})
    return f"Project not trusted: {cwd} (applies next start)"


def _current(store: TrustStore, cwd: Path) -> tuple[str, str | None]:
    """The saved decision as a title line, and the choice to preselect."""
    found = store.lookup(cwd)
    if found is None:
        return "Saved decision: none", None
    trusted, where = found
    word = "trusted" if trusted else "not trusted"
    if where == cwd:
        return f"Saved decision: {word}", "trust" if trusted else "deny"
    return f"Saved decision: {word} (from {where})", "trust_parent" if trusted and where == cwd.parent else None


def open_trust(app: InteractiveApp) -> None:
    """The trust picker over the editor; Enter saves, Esc leaves `trust.json` alone."""
    cwd = canonical_project_path(app.cwd)
    store = TrustStore(app.agent_dir / TRUST_FILE)
    try:
        current, preselect = _current(store, cwd)
    except TrustFileError as exc:
        app.notify(str(exc), "error")
        return
    choices = trust_command_choices(cwd)
    selected = next((i for i, c in enumerate(choices) if c.value == preselect), 0)
    title = f"Trust project folder?\n{cwd}\n{current}"
    picker = Picker(app.keymap, title, choices, filterable=False, selected=selected, hint="applies at the next start")

    def chosen(choice: object) -> None:
        try:
            app.notify(save_trust(store, cwd, str(choice)))
        except (TrustFileError, OSError) as exc:
            app.notify(f"Could not save trust: {exc}", "error")

    show_modal(app, picker, {"select": chosen})
