"""`/resume` (and `-r`), session rename/delete from the picker, and `/import`.

The picker starts with the current folder's sessions; its `scope` signal asks for every folder's, loaded here.
Deleting uses the `trash` command when present (recoverable), else removes the file; the active session is never
deleted (the picker refuses it, and so does this module). After a delete the checkpoint blobs no remaining session
refers to are removed, off the event loop; a failure there is logged and leaves the delete done.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from apex_coding_agent import (
    ExportError,
    SessionFileError,
    SessionInfo,
    SessionLockedError,
    SessionManager,
    collect_unreferenced_blobs,
    collector_paused,
    is_default_session_dir,
)
from apex_tui.app._modal import show_modal
from apex_tui.app._tree_flow import navigate
from apex_tui.widgets.pickers import ConfirmDialog, SessionEntry, SessionPicker

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp

_log = logging.getLogger(__name__)


def entry(info: SessionInfo) -> SessionEntry:
    """The picker's record of one session."""
    return SessionEntry(
        path=str(info.path),
        modified=info.modified,
        id=info.id,
        name=info.name,
        first_message=info.first_message,
        message_count=info.message_count,
        cwd=info.cwd,
        parent_session_path=info.parent_session_path,
    )  # no all-messages text: typing filters names and first messages, full-text search (Ctrl+F) the rest


def _session_dir(app: InteractiveApp) -> Path | None:
    return app.session.session_manager.session_dir


def current_sessions(app: InteractiveApp) -> list[SessionEntry]:
    """Sessions of the app's folder, newest first."""
    return [entry(i) for i in SessionManager.list_sessions(app.session.cwd, _session_dir(app))]


def all_sessions(app: InteractiveApp) -> list[SessionEntry]:
    """Sessions of every folder (the sessions root, or the custom session dir)."""
    directory = _session_dir(app)
    default = directory is None or is_default_session_dir(directory, app.session.cwd)
    return [entry(i) for i in SessionManager.list_all(None if default else directory)]


def open_resume(app: InteractiveApp) -> SessionPicker:
    """The resume picker; Enter switches to the chosen session (`Resumed session`)."""
    active = app.session.session_file
    picker = SessionPicker(current_sessions(app), app.keymap, active_path=active)

    def scope(which: Any) -> None:
        # Any: "all" or "current".
        rows = all_sessions(app) if which == "all" else current_sessions(app)
        picker.set_sessions(which, rows)

    def select(chosen: Any) -> None:
        # Any: a SessionEntry.
        if chosen.path == app.session.session_file and chosen.entry_id is None:
            app.notify("Already in this session")
            return
        app.spawn(resume(app, chosen.path, chosen.entry_id))

    def search(payload: Any) -> None:
        # Any: (query, scope).
        query, which = payload
        app.spawn(search_messages(app, picker, str(query), which))

    def rename(payload: Any) -> None:
        # Any: (path, name).
        path, name = payload
        try:
            rename_session(app, str(path), str(name))
        except (OSError, SessionFileError, SessionLockedError, ValueError) as exc:
            app.notify(f"Could not rename session: {exc}", "error")
            scope(picker.scope)

    def delete(path: Any) -> None:
        # Any: the session file path.
        try:
            delete_session(app, str(path))
        except (OSError, ValueError) as exc:
            app.notify(f"Could not delete session: {exc}", "error")
            scope(picker.scope)

    show_modal(app, picker, {"scope": scope, "select": select, "rename": rename, "delete": delete, "search": search})
    return picker


async def search_messages(app: InteractiveApp, picker: SessionPicker, query: str, which: Any) -> None:
    """The picker's full-text search: the best hit of each session, found off the event loop (a first search may
    build the index)."""
    from apex_coding_agent import SearchError, search_sessions  # imported when first used: it brings sqlite3

    directory = _session_dir(app)
    default = directory is None or is_default_session_dir(directory, app.session.cwd)
    custom = None if default else directory
    try:
        if which == "current":
            hits = await asyncio.to_thread(
                search_sessions, query, cwd=app.session.cwd, session_dir=custom, limit=50, per_session=True
            )
        else:
            hits = await asyncio.to_thread(search_sessions, query, session_dir=custom, limit=50, per_session=True)
    except SearchError as exc:
        app.notify(str(exc), "warning")
        hits = []
    rows = [
        SessionEntry(
            path=str(hit.path),
            modified=hit.modified,
            id=hit.session_id,
            name=hit.session_name,
            first_message=hit.first_message,
            cwd=hit.cwd,
            snippet=hit.snippet,
            highlights=hit.highlights,
            entry_id=hit.entry_id,
        )
        for hit in hits
    ]
    picker.set_search_results(query, which, rows)
    app.redraw()


def show_progress(app: InteractiveApp, text: str) -> None:
    """A status line, drawn at once rather than at the next throttled redraw.

    Reading a long session (50k entries) keeps the event loop busy for seconds before the new transcript can be
    drawn; without this frame the picker's Enter would seem to do nothing until then.
    """
    app.notify(text)
    if app.main_loop is not None and not app.exiting:
        app.main_loop.draw_screen()


async def resume(app: InteractiveApp, path: str, entry_id: str | None = None) -> None:
    """Switch the runtime to the session file at `path`; the new transcript opens showing its newest messages
    (blocks for older ones are made as the view scrolls up to them, see `_history`). With `entry_id` (a full-text
    hit), the session then moves to that entry as `/tree` does."""
    session = app.session
    if entry_id is not None and path == session.session_file:
        await navigate(app, entry_id, summarize=False)
        return
    if session.is_streaming:
        await session.abort()
    show_progress(app, "Opening session…")
    with collector_paused(freeze=True):
        try:
            await app.runtime.switch_session(path)
        except (OSError, SessionFileError, SessionLockedError) as exc:
            app.notify(f"Could not resume session: {exc}", "error")
            return
        if app.runtime.last_change_cancelled:
            app.notify("Session switch cancelled")
            return
        app.rebind_session()
    if entry_id is not None:
        await navigate(app, entry_id, summarize=False)
        return
    app.notify("Resumed session")


def rename_session(app: InteractiveApp, path: str, name: str) -> None:
    """Name a session: the active one through the session, another by appending to its file."""
    if path == app.session.session_file:
        app.session.set_session_name(name)
        app.update_footer()
        app.update_title()
    else:
        manager = SessionManager.open(path)
        try:
            manager.append_session_info(name)
        finally:
            manager.close()
    app.notify(f"Session name set: {name}" if name else "Session name cleared")


def delete_session(app: InteractiveApp, path: str) -> None:
    """Move a (non-active) session file to the trash, or remove it."""
    if path == app.session.session_file:
        raise ValueError("Cannot delete the active session")
    trash = shutil.which("trash")
    if trash is not None and subprocess.run([trash, path], capture_output=True, check=False).returncode == 0:
        app.notify("Session moved to trash")
    else:
        os.remove(path)
        app.notify("Session deleted")
    app.spawn(collect_checkpoint_blobs(app, Path(path).parent))


async def collect_checkpoint_blobs(app: InteractiveApp, deleted_from: Path) -> None:
    """Remove the checkpoint blobs no session under the sessions folder, this session's folder or the deleted
    session's folder refers to. Blobs younger than the grace period stay: another session may be writing them."""
    folders = [deleted_from] + [d for d in (_session_dir(app),) if d is not None]
    try:
        await asyncio.to_thread(collect_unreferenced_blobs, app.agent_dir, folders)
    except Exception:  # gc is housekeeping: the delete is done whatever happens here
        _log.warning("Could not remove unused checkpoint blobs after deleting a session", exc_info=True)


def confirm_import(app: InteractiveApp, path: str) -> None:
    """`/import <file.jsonl>`: confirm, then replace the current session with an imported copy."""
    if not path:
        app.notify("Usage: /import <file.jsonl>", "warning")
        return
    source = Path(path).expanduser()
    if not source.is_absolute():
        source = Path(app.cwd) / source
    dialog = ConfirmDialog(
        "Import session?",
        app.keymap,
        message=f"Replace the current session with {source}?",
        hint="enter import · esc cancel",
    )
    show_modal(app, dialog, {"confirm": lambda _: app.spawn(import_session(app, source))})


async def import_session(app: InteractiveApp, source: Path) -> None:
    """Copy `source` into the session dir and switch to it."""
    if app.session.is_streaming:
        await app.session.abort()
    show_progress(app, "Importing session…")
    with collector_paused(freeze=True):
        try:
            await app.runtime.import_from_jsonl(source)
        except (ExportError, OSError, SessionFileError, SessionLockedError) as exc:
            app.notify(f"Could not import session: {exc}", "error")
            return
        app.rebind_session()
    app.notify(f"Imported session from {source}")
