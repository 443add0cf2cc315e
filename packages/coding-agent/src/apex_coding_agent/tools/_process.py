"""Running a helper binary (rg, fd) to completion with abort support, reading stdout line by line."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from apex_agent.tools import ToolExecutionError
from apex_ai.abort import AbortSignal
from apex_coding_agent.tools._common import ABORTED_MESSAGE

# rg --json puts a whole matched line on one output line; allow long ones.
_LINE_LIMIT = 64 * 1024 * 1024


def locate_helper(names: Sequence[str], agent_dir: str | None) -> str | None:
    """The first of `names` found on PATH, else an executable `<agent_dir>/bin/<names[0]>`, else None."""
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    if agent_dir:
        candidate = os.path.join(agent_dir, "bin", names[0])
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def choose_helper(engine: str, helper_engine: str, locate: Callable[[], str | None], missing: str) -> str | None:
    """The helper binary a search runs, or None for the pure-Python fallback.

    `engine` "python" never uses the helper; `engine == helper_engine` insists on it (`missing` is raised
    when it cannot be found); any other value ("auto") uses it when `locate` finds it.
    """
    helper = None if engine == "python" else locate()
    if helper is None and engine == helper_engine:
        raise ToolExecutionError(missing)
    return helper


@dataclass(frozen=True)
class HelperResult:
    exit_code: int
    stderr: str


async def run_helper(
    argv: list[str], on_line: Callable[[bytes], None], signal: AbortSignal | None, cwd: str | None = None
) -> HelperResult:
    """Run `argv` in `cwd`, feeding each stdout line (without the newline) to `on_line`; abort kills it and raises."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=_LINE_LIMIT,
    )
    assert proc.stdout is not None and proc.stderr is not None  # both are PIPE above
    stdout, stderr_stream = proc.stdout, proc.stderr

    async def pump() -> bytes:
        while True:
            line = await stdout.readline()
            if not line:
                break
            on_line(line.rstrip(b"\n"))
        return await stderr_stream.read()

    work = asyncio.ensure_future(pump())
    aborter = asyncio.ensure_future(signal.wait()) if signal is not None else None
    try:
        # The futures have different result types and are only raced here, hence Any.
        waiters: list[asyncio.Future[Any]] = [work]
        if aborter is not None:
            waiters.append(aborter)
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        if not work.done():
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            work.cancel()
            await proc.wait()
            raise ToolExecutionError(ABORTED_MESSAGE)
        stderr = work.result()
        code = await proc.wait()
    finally:
        if aborter is not None:
            aborter.cancel()
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    return HelperResult(code, stderr.decode("utf-8", "replace").strip())
