"""`run_process` reading at a consumer's pace (`paced_output`), as the RPC server asks while its client lags."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from apex_ai.abort import AbortController
from apex_coding_agent.tools.shell import paced_output, run_process


class Pacer:
    """Congested until `release()`."""

    def __init__(self) -> None:
        self.free = asyncio.Event()

    def congested(self) -> bool:
        return not self.free.is_set()

    async def drained(self) -> None:
        await self.free.wait()

    def release(self) -> None:
        self.free.set()


async def _exited(marker: Path) -> None:
    while not marker.exists():
        await asyncio.sleep(0.01)


async def test_output_waits_for_the_consumer_and_is_kept_when_the_command_ends(tmp_path: Path) -> None:
    pacer, received = Pacer(), bytearray()
    command = "printf abc; touch done"
    with paced_output(pacer):
        task = asyncio.ensure_future(
            run_process(["/bin/sh", "-c", command], str(tmp_path), os.environ, received.extend)
        )
    await _exited(tmp_path / "done")
    await asyncio.sleep(0.2)  # past the drain's idle time: a congested consumer must not lose the output
    assert received == b"" and not task.done()
    pacer.release()
    outcome = await asyncio.wait_for(task, 10)
    assert outcome.exit_code == 0 and received == b"abc"


async def test_abort_ends_a_drain_that_waits_for_the_consumer(tmp_path: Path) -> None:
    pacer, controller = Pacer(), AbortController()
    with paced_output(pacer):
        task = asyncio.ensure_future(
            run_process(
                ["/bin/sh", "-c", "printf abc; touch done"],
                str(tmp_path),
                os.environ,
                lambda _: None,
                controller.signal,
            )
        )
    await _exited(tmp_path / "done")
    await asyncio.sleep(0.1)
    controller.abort()
    outcome = await asyncio.wait_for(task, 10)
    assert outcome.exit_code == 0
