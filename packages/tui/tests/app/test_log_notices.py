"""Log records become transcript warnings while the app runs (stderr would draw over the screen)."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import threading
from pathlib import Path

import pytest
from app_helpers import AppHarness, open_app_on_file, write_long_session

from apex_coding_agent.log_lines import record_text as notice_text
from apex_tui.app._log_notices import transcript_logging

SESSION_LOG = logging.getLogger("apex_coding_agent.session.records")


def test_records_before_the_app_wait_and_a_leftover_goes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    with transcript_logging() as handler:
        SESSION_LOG.warning("skipping session line %s", "s.jsonl:3: Invalid JSON")
        logging.getLogger("apex_coding_agent").info("not shown: below WARNING")
        assert handler.pending == ["skipping session line s.jsonl:3: Invalid JSON"]
    assert capsys.readouterr().err == "skipping session line s.jsonl:3: Invalid JSON\n"
    assert handler not in logging.getLogger().handlers


def test_an_exception_is_summed_up_in_one_line() -> None:
    try:
        raise ValueError("bad value")
    except ValueError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "listener failed on %s", ("agent_end",), None)
        record.exc_info = sys.exc_info()
    assert notice_text(record) == "listener failed on agent_end: ValueError: bad value"


async def test_records_reach_the_transcript_from_any_thread(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    with transcript_logging() as handler:
        SESSION_LOG.warning("logged before the app took over")
        handler.attach(app.notify, asyncio.get_running_loop())
        thread = threading.Thread(target=lambda: SESSION_LOG.error("logged from a worker thread"))
        thread.start()
        thread.join()
        await harness.until("logged from a worker thread")
        text = harness.text()
        assert "logged before the app took over" in text
        handler.detach()
        SESSION_LOG.warning("after the loop stopped")
        assert handler.pending == ["after the loop stopped"]
        handler.take_pending()


async def test_a_corrupt_line_read_at_start_up_shows_as_a_warning(tmp_path: Path) -> None:
    path = write_long_session(tmp_path / "s", 30)
    lines = path.read_text().splitlines(keepends=True)
    lines.insert(5, "{not json\n")
    path.write_text("".join(lines))
    with transcript_logging() as handler:
        app = await open_app_on_file(tmp_path, path)  # the file is read here, before any app exists
        assert any("Invalid JSON" in text or "skipping session line" in text for text in handler.pending)
        handler.attach(app.notify, asyncio.get_running_loop())
        for _ in range(100):
            await asyncio.sleep(0)
        rows = "\n".join(row.decode() for row in app.root.render((120, 60), focus=True).text)
        assert "skipping session line" in rows and ":6:" in rows  # file and line number, as a warning line
        assert json.loads(lines[0])["type"] == "session"
        await app.runtime.dispose()
