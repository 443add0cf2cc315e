"""`emit_update`: cancelling the waiting caller never cancels the update the agent is delivering."""

import asyncio

from apex_agent.tools import AgentToolResult
from apex_ai.types import TextContent
from apex_coding_agent.tools._common import emit_update


async def test_cancelled_caller_leaves_the_update_running() -> None:
    release = asyncio.Event()
    delivered: list[str] = []
    tasks: list[asyncio.Task[None]] = []

    async def deliver(result: AgentToolResult) -> None:
        await release.wait()
        block = result.content[0]
        assert isinstance(block, TextContent)
        delivered.append(block.text)

    def on_update(result: AgentToolResult) -> asyncio.Task[None]:
        task = asyncio.ensure_future(deliver(result))
        tasks.append(task)
        return task

    pump = asyncio.ensure_future(emit_update(on_update, AgentToolResult(content=[TextContent(text="tail")])))
    while not tasks:
        await asyncio.sleep(0)
    pump.cancel()
    await asyncio.gather(pump, return_exceptions=True)
    assert pump.cancelled()
    assert not tasks[0].cancelled()
    release.set()
    await tasks[0]
    assert delivered == ["tail"]


async def test_sync_and_missing_callbacks() -> None:
    seen: list[AgentToolResult] = []
    result = AgentToolResult(content=[TextContent(text="x")])
    await emit_update(seen.append, result)
    await emit_update(None, result)
    assert seen == [result]
