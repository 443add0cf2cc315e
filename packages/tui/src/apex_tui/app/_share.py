"""`/share`: upload the session's HTML export as a secret GitHub gist through the `gh` CLI.

Steps: `gh auth status` must succeed; the user confirms; the HTML export is written to a temporary directory as
`session.html` (gh names the gist file after it) and `gh gist create --public=false` uploads it while a dialog
shows progress (Esc there cancels and kills gh); the temporary directory is removed afterwards whatever happened.
The transcript then shows the gist URL, preceded by a viewer URL (`<APEX_CODE_SHARE_VIEWER_URL>#<gist id>`) when
that variable is set. There is no default viewer: without the variable only the gist URL is shown.

gh runs as an asyncio subprocess (the UI loop keeps drawing), with stdin closed so it never prompts on the
terminal urwid owns, in its own process group so a timeout or a cancel ends everything it started. Every failure
is one error line in the transcript; the session itself is never touched.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from apex_coding_agent import ExportError, export_session_html
from apex_tui.app._modal import show_modal
from apex_tui.widgets.pickers import ConfirmDialog

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp

GH: Final = "gh"
VIEWER_ENV: Final = "APEX_CODE_SHARE_VIEWER_URL"
GIST_FILE_NAME: Final = "session.html"
GIST_DESCRIPTION: Final = "Apex Code session"
AUTH_TIMEOUT_SECONDS: Final = 15.0
GIST_TIMEOUT_SECONDS: Final = 120.0
STOP_GRACE_SECONDS: Final = 2.0
"""How long a killed gh may take to exit before its pipes are abandoned."""

GH_MISSING: Final = "The GitHub CLI (gh) was not found on PATH; /share needs it (https://cli.github.com)"
NOT_LOGGED_IN: Final = "The GitHub CLI is not logged in; run `gh auth login`, then /share again"
CANCELLED: Final = "Share cancelled"

_GIST_ID = re.compile(r"[\w-]+")


class ShareError(Exception):
    """A step of `/share` failed; the message is the error line the transcript shows."""


class ShareCancelled(Exception):
    """The user cancelled while gh was running (gh was stopped)."""


@dataclass(frozen=True)
class GhResult:
    """What a finished gh process left: exit code and decoded output."""

    returncode: int
    stdout: str
    stderr: str


def _gh_env() -> dict[str, str]:
    # gh must never wait for an answer on a terminal it does not own, nor add update notices to its output.
    return {**os.environ, "GH_PROMPT_DISABLED": "1", "GH_NO_UPDATE_NOTIFIER": "1"}


async def run_gh(args: Sequence[str], *, timeout: float, cancel: asyncio.Event | None = None) -> GhResult:
    """Run `gh <args>` and collect its output.

    Raises ShareError when gh is not on PATH, cannot be started, or has not finished after `timeout` seconds;
    ShareCancelled when `cancel` is set first. In both cases (and when the caller is cancelled) gh's process group
    is killed before returning.
    """
    executable = shutil.which(GH)
    if executable is None:
        raise ShareError(GH_MISSING)
    try:
        process = await asyncio.create_subprocess_exec(
            executable,
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=_gh_env(),
            start_new_session=os.name == "posix",
        )
    except OSError as exc:
        raise ShareError(f"{GH_MISSING} ({exc})") from exc
    output = asyncio.ensure_future(process.communicate())
    stop = asyncio.ensure_future(cancel.wait()) if cancel is not None else None
    waiting = {output} if stop is None else {output, stop}
    try:
        done, _ = await asyncio.wait(waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        await _stop(process, output)
        raise
    finally:
        if stop is not None:
            stop.cancel()
    if output in done:
        stdout, stderr = output.result()
        return GhResult(
            process.returncode if process.returncode is not None else -1,
            stdout.decode("utf-8", "replace"),
            stderr.decode("utf-8", "replace"),
        )
    await _stop(process, output)
    if stop is not None and stop in done:
        raise ShareCancelled(CANCELLED)
    raise ShareError(f"`gh {' '.join(args[:2])}` did not finish within {timeout:g} s")


async def _stop(process: asyncio.subprocess.Process, output: asyncio.Future[tuple[bytes, bytes]]) -> None:
    """Kill gh (its whole process group on POSIX) and wait briefly for it and its pipes."""
    if process.returncode is None:
        try:
            if os.name == "posix":
                os.killpg(process.pid, signal.SIGKILL)
            else:
                process.kill()
        except ProcessLookupError:
            pass  # it exited meanwhile
    try:
        await asyncio.wait_for(asyncio.shield(output), STOP_GRACE_SECONDS)
    except TimeoutError:
        output.cancel()  # a stray grandchild holds the pipes: give up on them


def _detail(result: GhResult) -> str:
    """The last meaningful line gh printed on stderr, else its exit code."""
    lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
    return lines[-1] if lines else f"gh exited with code {result.returncode}"


async def check_gh_auth() -> None:
    """`gh auth status` must succeed; raises ShareError otherwise (gh missing, logged out, hanging)."""
    result = await run_gh(["auth", "status"], timeout=AUTH_TIMEOUT_SECONDS)
    if result.returncode != 0:
        raise ShareError(NOT_LOGGED_IN)


def parse_gist_url(stdout: str) -> tuple[str, str]:
    """The gist URL gh printed and the gist id (its last path segment); ShareError when there is no such URL."""
    for line in reversed(stdout.splitlines()):
        candidate = line.strip()
        parts = urlsplit(candidate)
        gist_id = parts.path.rstrip("/").rpartition("/")[2]
        if parts.scheme in ("http", "https") and parts.netloc and " " not in candidate and _GIST_ID.fullmatch(gist_id):
            return candidate, gist_id
    shown = stdout.strip()[:200] or "(nothing)"
    raise ShareError(f"gh did not print a gist URL; its output was: {shown}")


def viewer_url(gist_id: str) -> str | None:
    """`<APEX_CODE_SHARE_VIEWER_URL>#<gist id>`, or None when the variable is unset or empty (no default viewer)."""
    base = os.environ.get(VIEWER_ENV, "").strip()
    return f"{base}#{gist_id}" if base else None


async def create_gist(html_path: Path, *, cancel: asyncio.Event | None = None) -> tuple[str, str]:
    """Upload `html_path` as a secret gist; returns its URL and id. ShareError / ShareCancelled as `run_gh`."""
    result = await run_gh(
        ["gist", "create", "--public=false", "--desc", GIST_DESCRIPTION, str(html_path)],
        timeout=GIST_TIMEOUT_SECONDS,
        cancel=cancel,
    )
    if result.returncode != 0:
        raise ShareError(f"Could not create the gist: {_detail(result)}")
    return parse_gist_url(result.stdout)


def start_share(app: InteractiveApp) -> None:
    """`/share`: check gh in the background, then ask; the upload starts only after the user confirms."""
    app.spawn(_check_then_confirm(app))


CHECKING: Final = "Checking the GitHub CLI login..."


async def _check_then_confirm(app: InteractiveApp) -> None:
    app.notify(CHECKING)  # `gh auth status` may take seconds (network): say what is going on meanwhile
    try:
        await check_gh_auth()
    except ShareError as exc:
        app.notify(str(exc), "error")
        return
    dialog = ConfirmDialog(
        "Share session?",
        app.keymap,
        message="Upload this session as a secret GitHub gist? Anyone who has the link can read it.",
        hint="enter share · esc cancel",
    )
    show_modal(
        app,
        dialog,
        {
            "confirm": lambda _: app.spawn(_upload(app)),
            "cancel": lambda _: app.notify(CANCELLED),
            "timeout": lambda _: app.notify(CANCELLED),
        },
    )


async def _upload(app: InteractiveApp) -> None:
    cancel = asyncio.Event()
    with tempfile.TemporaryDirectory(prefix="apex-share-") as directory:
        try:
            html_path = export_session_html(app.session.session_manager, Path(directory) / GIST_FILE_NAME)
        except (ExportError, OSError) as exc:
            app.notify(f"Could not export the session: {exc}", "error")
            return
        loader = ConfirmDialog(
            "Creating gist...",
            app.keymap,
            message="Uploading the session export with gh",
            hint="esc cancel",
        )
        # Only a cancel closes the loader: Enter must not hide it while gh is still running.
        modal = show_modal(app, loader, {"cancel": lambda _: cancel.set()}, closing={"cancel"})
        try:
            gist_url, gist_id = await create_gist(html_path, cancel=cancel)
        except ShareCancelled:
            app.notify(CANCELLED)
            return
        except ShareError as exc:
            app.notify(str(exc), "error")
            return
        finally:
            modal.close()
    preview = viewer_url(gist_id)
    lines = [f"Share URL: {preview}"] if preview is not None else []
    lines.append(f"Gist: {gist_url}")
    app.notify("\n".join(lines), "info")
