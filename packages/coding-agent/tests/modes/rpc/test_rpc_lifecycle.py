"""Signals, the extension UI through the server, and deferred shutdown (spec modes.md §7, checks 15-16)."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

from rpc_harness import RpcClient, RpcHarness

from apex_ai.providers.faux import faux_assistant_message
from apex_coding_agent.tools.shell import tracked_process_groups


async def test_sigterm_mid_bash_kills_the_group_and_exits_143(rpc: RpcHarness) -> None:
    client = RpcClient()
    await client.start(await rpc.runtime(), handle_signals=True)
    client.send({"id": "b", "type": "bash", "command": "echo started; sleep 30"})
    await client.until(lambda r: r["type"] == "bash_execution_update")
    assert tracked_process_groups()
    os.kill(os.getpid(), signal.SIGTERM)
    assert await client.finished() == 143
    assert not tracked_process_groups()
    assert [r for r in await client.rest() if r.get("type") == "response"] == []  # silent after the signal


async def test_sighup_exits_129_and_restores_the_handler(rpc: RpcHarness) -> None:
    client = RpcClient()
    await client.start(await rpc.runtime(), handle_signals=True)
    assert (await client.request({"id": "s", "type": "get_state"}))["success"] is True
    os.kill(os.getpid(), signal.SIGHUP)
    assert await client.finished() == 129
    assert signal.getsignal(signal.SIGHUP) in (signal.SIG_DFL, signal.default_int_handler)


async def test_confirm_dialog_round_trip_and_timeout(rpc: RpcHarness) -> None:
    client = RpcClient()
    server = await client.start_server(await rpc.runtime())
    answered = asyncio.ensure_future(server.ui.confirm("Proceed?", "Run the migration", timeout=5000))
    request = await client.recv()
    assert request["type"] == "extension_ui_request" and request["method"] == "confirm"
    assert request["timeout"] == 5000 and len(request["id"]) == 36
    client.send({"type": "extension_ui_response", "id": "not-a-pending-id", "confirmed": False})
    client.send({"type": "extension_ui_response", "id": request["id"], "confirmed": True})
    assert await answered is True
    timed_out = await server.ui.confirm("Again?", "no reply will come", timeout=50)
    assert timed_out is False
    assert (await client.recv())["method"] == "confirm"
    # Neither reply produced a response line: the next record is the answer to this get_state.
    state = await client.request({"id": "s", "type": "get_state"})
    assert client.received[-1] is state
    assert await client.close() == 0


async def test_dialog_waits_do_not_block_commands_and_eof_cancels_them(rpc: RpcHarness) -> None:
    client = RpcClient()
    server = await client.start_server(await rpc.runtime())
    pending = asyncio.ensure_future(server.ui.select("Pick", ["a", "b"]))
    assert (await client.recv())["method"] == "select"
    assert (await client.request({"id": "s", "type": "get_state"}))["success"] is True
    assert await client.close() == 0
    assert await pending is None


async def test_requested_shutdown_waits_for_the_run_to_settle(rpc: RpcHarness) -> None:
    gate = asyncio.Event()

    async def slow(*_: Any) -> Any:
        await gate.wait()
        return faux_assistant_message("done")

    rpc.script(slow)
    client = RpcClient()
    server = await client.start_server(await rpc.runtime())
    client.send({"id": "p", "type": "prompt", "message": "hi"})
    await client.response("p")
    server.request_shutdown()
    await asyncio.sleep(0.01)
    assert client.task is not None and not client.task.done()
    gate.set()
    assert await client.finished() == 0
    assert any(r["type"] == "agent_end" for r in await client.rest())
