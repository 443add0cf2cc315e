"""`/share` through the real app with a fake `gh` on PATH (tui.md §8): auth check, confirm, secret gist, URLs."""

import asyncio
import os
import stat
from pathlib import Path

import pytest
from app_helpers import AppHarness

from apex_ai.providers.faux import faux_assistant_message
from apex_tui.app._commands import command_names
from apex_tui.app._share import ShareCancelled, ShareError, parse_gist_url, run_gh
from apex_tui.widgets.pickers import ConfirmDialog

GIST_URL = "https://gist.github.com/tester/0123abcdef"
LOGGED_IN = 'echo "github.com: Logged in to github.com account tester" >&2; exit 0'
LOGGED_OUT = 'echo "You are not logged into any GitHub hosts. To log in, run: gh auth login" >&2; exit 1'
CREATED = f'echo "- Creating gist session.html" >&2; echo "Created secret gist session.html" >&2; echo "{GIST_URL}"'

# The fake records each call (arguments separated by a unit separator) and keeps a copy of the uploaded file.
FAKE_GH = """#!/bin/sh
here=$(dirname "$0")
for a; do printf '%s\\037' "$a"; done >> "$here/calls.log"
echo >> "$here/calls.log"
case "$1 $2" in
  "auth status") {auth} ;;
  "gist create") for a; do last=$a; done; echo "$last" > "$here/uploaded.path"; cp "$last" "$here/uploaded.html"; {gist} ;;
  *) echo "unknown command $1 $2" >&2; exit 1 ;;
esac
"""


class FakeGh:
    """A `gh` script in its own directory, put first on PATH (the system dirs stay for sh's own tools)."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch, *, auth: str = LOGGED_IN, gist: str = CREATED):
        self.dir = root / "fakebin"
        self.dir.mkdir()
        script = self.dir / "gh"
        script.write_text(FAKE_GH.format(auth=auth, gist=gist))
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
        monkeypatch.setenv("PATH", os.pathsep.join([str(self.dir), "/usr/bin", "/bin"]))

    def calls(self) -> list[list[str]]:
        log = self.dir / "calls.log"
        if not log.exists():
            return []
        return [line.split("\x1f")[:-1] for line in log.read_text().splitlines()]

    @property
    def uploaded(self) -> Path:
        return self.dir / "uploaded.html"

    def uploaded_from(self) -> Path:
        return Path((self.dir / "uploaded.path").read_text().strip())


async def _session_with_reply(tmp_path: Path) -> AppHarness:
    harness = AppHarness(tmp_path)
    harness.script(faux_assistant_message("a reply worth sharing"))
    await harness.start()
    harness.type("hello there")
    harness.press("enter")
    await harness.settle()
    return harness


def _flat(harness: AppHarness) -> str:
    return harness.text().replace("\n", "")


async def test_share_is_offered_by_autocomplete(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    assert "share" in command_names()
    harness.type("/sha")
    assert "/share" in [s.label for s in app.editor.suggestions]


async def test_confirmed_share_uploads_the_html_export_and_prints_the_gist_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("APEX_CODE_SHARE_VIEWER_URL", raising=False)
    gh = FakeGh(tmp_path, monkeypatch)
    harness = await _session_with_reply(tmp_path)
    app = harness.running
    harness.type("/share")
    harness.press("enter")
    assert app.editor.text == ""
    await harness.until("Share session?")
    assert "Checking the GitHub CLI login" in harness.text()  # said while gh auth status ran
    assert isinstance(app.slot.original_widget, ConfirmDialog)
    assert gh.calls() == [["auth", "status"]]
    harness.press("enter")
    await harness.until("Gist:")
    await harness.settle()
    assert f"Gist: {GIST_URL}" in _flat(harness)
    assert "Share URL" not in harness.text()
    assert "Error" not in harness.text()
    assert app.slot.original_widget is app.editor
    create = gh.calls()[1]
    assert create[:3] == ["gist", "create", "--public=false"]
    assert "--public" not in create and "-p" not in create
    html = gh.uploaded.read_text()
    assert html.lstrip().lower().startswith("<!doctype html")
    assert "a reply worth sharing" in html and "hello there" in html
    assert gh.uploaded_from().name == "session.html"
    assert not gh.uploaded_from().parent.exists()  # the temporary export is gone


async def test_viewer_url_comes_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APEX_CODE_SHARE_VIEWER_URL", "https://viewer.example/s/")
    FakeGh(tmp_path, monkeypatch)
    harness = await _session_with_reply(tmp_path)
    harness.type("/share")
    harness.press("enter")
    await harness.until("Share session?")
    harness.press("enter")
    await harness.until("Gist:")
    text = _flat(harness)
    assert "Share URL: https://viewer.example/s/#0123abcdef" in text
    assert f"Gist: {GIST_URL}" in text


async def test_declining_the_confirm_runs_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gh = FakeGh(tmp_path, monkeypatch)
    harness = await _session_with_reply(tmp_path)
    harness.type("/share")
    harness.press("enter")
    await harness.until("Share session?")
    harness.press("esc")
    await harness.settle()
    assert "Share cancelled" in harness.text()
    assert gh.calls() == [["auth", "status"]]
    assert not gh.uploaded.exists()
    assert harness.running.slot.original_widget is harness.running.editor


async def test_not_logged_in_is_an_error_and_nothing_is_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gh = FakeGh(tmp_path, monkeypatch, auth=LOGGED_OUT)
    harness = await _session_with_reply(tmp_path)
    harness.type("/share")
    harness.press("enter")
    await harness.until("not logged in")
    await harness.settle()
    assert "Error: The GitHub CLI is not logged in; run `gh auth login`" in _flat(harness)
    assert "Share session?" not in harness.text()
    assert gh.calls() == [["auth", "status"]]
    assert "a reply worth sharing" in harness.text()  # the transcript is intact


async def test_gh_missing_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "nobin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    harness = await _session_with_reply(tmp_path)
    harness.type("/share")
    harness.press("enter")
    await harness.until("not found on PATH")
    assert "Error: The GitHub CLI (gh) was not found on PATH" in _flat(harness)
    assert "Share session?" not in harness.text()


async def test_failed_gist_create_shows_gh_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gh = FakeGh(
        tmp_path, monkeypatch, gist='echo "- Creating gist" >&2; echo "HTTP 422: Validation Failed" >&2; exit 1'
    )
    harness = await _session_with_reply(tmp_path)
    harness.type("/share")
    harness.press("enter")
    await harness.until("Share session?")
    harness.press("enter")
    await harness.until("Validation Failed")
    assert "Error: Could not create the gist: HTTP 422: Validation Failed" in _flat(harness)
    assert not gh.uploaded_from().parent.exists()
    assert harness.running.slot.original_widget is harness.running.editor


async def test_output_without_a_url_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    FakeGh(tmp_path, monkeypatch, gist='echo "gist created somewhere"')
    harness = await _session_with_reply(tmp_path)
    harness.type("/share")
    harness.press("enter")
    await harness.until("Share session?")
    harness.press("enter")
    await harness.until("did not print a gist URL")
    assert "Error: gh did not print a gist URL; its output was: gist created somewhere" in _flat(harness)
    assert "Gist:" not in harness.text()


async def test_escape_while_uploading_stops_gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gh = FakeGh(tmp_path, monkeypatch, gist=f"exec sleep 30; echo {GIST_URL}")
    harness = await _session_with_reply(tmp_path)
    app = harness.running
    harness.type("/share")
    harness.press("enter")
    await harness.until("Share session?")
    harness.press("enter")
    await harness.until("Creating gist...")
    await harness.until_true(gh.uploaded.exists)
    harness.press("enter")  # Enter does not hide the progress dialog
    assert "Creating gist..." in harness.text()
    harness.press("esc")
    await harness.until("Share cancelled")
    await harness.settle()
    assert "Gist:" not in harness.text()
    assert app.slot.original_widget is app.editor
    assert not gh.uploaded_from().parent.exists()


async def test_run_gh_times_out_and_kills_the_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    FakeGh(tmp_path, monkeypatch, auth="exec sleep 30")
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(ShareError, match="did not finish within 0.05 s"):
        await run_gh(["auth", "status"], timeout=0.05)
    assert loop.time() - started < 2


async def test_run_gh_stops_when_cancelled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    FakeGh(tmp_path, monkeypatch, auth="exec sleep 30")
    cancel = asyncio.Event()
    asyncio.get_running_loop().call_later(0.02, cancel.set)
    with pytest.raises(ShareCancelled):
        await run_gh(["auth", "status"], timeout=10, cancel=cancel)


def test_parse_gist_url_takes_the_url_line() -> None:
    assert parse_gist_url(f"some notice\n{GIST_URL}\n") == (GIST_URL, "0123abcdef")
    assert parse_gist_url("https://ghe.example/gist/abc-1/\n") == ("https://ghe.example/gist/abc-1/", "abc-1")
    for bad in ("", "not a url", "ftp://host/abc", "https://gist.github.com/"):
        with pytest.raises(ShareError):
            parse_gist_url(bad)
