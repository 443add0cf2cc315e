"""`/rewind` and `/redo`: file checkpoints in the app.

`/rewind` lists the branch's user messages (newest first) with the files each turn changed; then how far to go back
(conversation and files, conversation only, files only). Files someone else changed since the agent wrote them
are asked about: keep theirs, take the checkpoint, or show the diff first. `/redo` undoes the last rewind.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from apex_coding_agent import Checkpoint, RewindMode, RewindResult
from apex_tui.app._modal import show_modal
from apex_tui.widgets import CustomMessageBlock
from apex_tui.widgets.pickers import SelectItem, SelectList

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp

MODES: tuple[tuple[RewindMode, str], ...] = (
    ("all", "Conversation and files"),
    ("conversation", "Conversation only (files stay)"),
    ("files", "Files only (conversation stays)"),
)


def _files_text(point: Checkpoint) -> str:
    if not point.files:
        return "no file changes"
    shown = ", ".join(point.files[:3])
    more = f" +{len(point.files) - 3}" if len(point.files) > 3 else ""
    return f"{len(point.files)} file{'s' if len(point.files) != 1 else ''}: {shown}{more}"


def open_rewind(app: InteractiveApp) -> None:
    if app.session.checkpoints.pending_restore:
        _ask_recover(app)
        return
    points = app.session.checkpoints.get_checkpoints()
    if not points:
        app.notify("No messages to rewind to")
        return
    items = [SelectItem(point.entry_id, " ".join(point.text.split()), _files_text(point)) for point in reversed(points)]
    picker: SelectList[str] = SelectList(
        items, app.keymap, title="Rewind to before message", selected=points[-1].entry_id
    )
    show_modal(app, picker, {"select": lambda entry_id: _choose_mode(app, str(entry_id))})


def _choose_mode(app: InteractiveApp, entry_id: str) -> None:
    items: list[SelectItem[str]] = [SelectItem(mode, label) for mode, label in MODES]
    picker: SelectList[str] = SelectList(items, app.keymap, title="Rewind what?", selected="all")

    def select(value: Any) -> None:
        # Any: the chosen value, one of MODES.
        _check_conflicts(app, entry_id, next(mode for mode, _ in MODES if mode == value))

    show_modal(app, picker, {"select": select})


def _check_conflicts(app: InteractiveApp, entry_id: str, mode: RewindMode) -> None:
    checkpoints = app.session.checkpoints
    conflicts = [] if mode == "conversation" else checkpoints.plan_rewind(entry_id).conflicts
    if not conflicts:
        app.spawn(rewind(app, entry_id, mode))
        return
    paths = [conflict.path for conflict in conflicts]
    items = [
        SelectItem("theirs", "Keep their version", "restore the other files only"),
        SelectItem("checkpoint", "Take the checkpoint", "overwrite: " + ", ".join(paths)),
        SelectItem("diff", "Show the diff", "then choose"),
    ]
    title = f"{len(paths)} file{'s' if len(paths) != 1 else ''} changed since the agent wrote them"
    picker: SelectList[str] = SelectList(items, app.keymap, title=title, selected="theirs")

    def select(choice: Any) -> None:
        # Any: the chosen value.
        if choice == "diff":
            for path in paths:
                try:
                    diff = checkpoints.diff(entry_id, path) or "(no text difference)"
                except (ValueError, OSError) as exc:
                    diff = str(exc)
                app.feed.add(CustomMessageBlock(app.ctx, f"now → checkpoint: {path}", f"```diff\n{diff}\n```"))
            app.redraw()
            _check_conflicts(app, entry_id, mode)
            return
        app.spawn(rewind(app, entry_id, mode, paths if choice == "checkpoint" else ()))

    show_modal(app, picker, {"select": select})


def _report(app: InteractiveApp, what: str, result: RewindResult) -> None:
    parts = [f"{what}: {len(result.restored)} file{'s' if len(result.restored) != 1 else ''} restored"]
    if result.conflicts:
        parts.append("kept (changed by someone else): " + ", ".join(c.path for c in result.conflicts))
    if result.skipped:
        parts.append("not kept, left as they are: " + ", ".join(s.path for s in result.skipped))
    app.notify("; ".join(parts), "warning" if result.conflicts or result.skipped else "status")


async def rewind(app: InteractiveApp, entry_id: str, mode: RewindMode, overwrite: Collection[str] = ()) -> None:
    session = app.session
    if session.is_streaming:
        await session.abort()
    try:
        result = await session.checkpoints.rewind(entry_id, mode, overwrite)
    except (RuntimeError, ValueError, OSError) as exc:
        app.notify(str(exc), "error")
        return
    if mode != "files":
        app.rebind_session()
        app.editor.set_text(result.editor_text or "")
    _report(app, "Rewound", result)


async def redo(app: InteractiveApp) -> None:
    session = app.session
    try:
        result = await session.checkpoints.redo()
    except (RuntimeError, ValueError, OSError) as exc:
        app.notify(str(exc), "error")
        return
    app.rebind_session()
    _report(app, "Redone", result)


def announce_pending_restore(app: InteractiveApp) -> None:
    """When a session opens (start-up, /resume, /new, a fork): a restore of it that was cut short is asked about
    right away, before the files are used or rewound again."""
    if app.session.checkpoints.pending_restore:
        _ask_recover(app)


def _ask_recover(app: InteractiveApp) -> None:
    """A restore of this session was cut short (the process died): finish it or undo it first."""
    items: list[SelectItem[str]] = [
        SelectItem("complete", "Complete it", "write the remaining files"),
        SelectItem("revert", "Revert it", "put back the files it already wrote"),
    ]
    picker: SelectList[str] = SelectList(items, app.keymap, title="A file restore was interrupted", selected="complete")

    def select(choice: Any) -> None:
        # Any: the chosen value.
        written, conflicts = app.session.checkpoints.recover("revert" if choice == "revert" else "complete")
        text = f"Restore {'reverted' if choice == 'revert' else 'completed'}: {len(written)} files written"
        if conflicts:
            text += "; kept (changed by someone else): " + ", ".join(c.path for c in conflicts)
        app.notify(text, "warning" if conflicts else "status")

    show_modal(app, picker, {"select": select})


def offer_file_restore(app: InteractiveApp, left_leaf: str | None) -> None:
    """After `/tree` left a branch whose turns changed files: ask whether to put those files back too."""
    if left_leaf is None:
        return
    files = app.session.checkpoints.left_branch_files(left_leaf)
    if not files:
        return
    more = f" +{len(files) - 3}" if len(files) > 3 else ""
    items: list[SelectItem[str]] = [
        SelectItem("keep", "Keep the files as they are"),
        SelectItem("restore", "Restore the files too", ", ".join(files[:3]) + more),
    ]
    title = f"The branch you left changed {len(files)} file{'s' if len(files) != 1 else ''}"
    picker: SelectList[str] = SelectList(items, app.keymap, title=title, selected="keep")

    async def restore() -> None:
        try:
            result = await app.session.checkpoints.restore_left_branch(left_leaf)
        except (RuntimeError, ValueError, OSError) as exc:
            app.notify(str(exc), "error")
            return
        _report(app, "Files restored", result)

    show_modal(app, picker, {"select": lambda choice: app.spawn(restore()) if choice == "restore" else None})
