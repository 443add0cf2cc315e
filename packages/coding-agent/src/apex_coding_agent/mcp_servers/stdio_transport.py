"""The stdio transport: the server runs in a process group of its own that we track and kill.

The SDK's own stdio client keeps its process to itself; ours registers the group with the tool layer's
`kill_tracked_process_groups` (so SIGTERM/SIGHUP of the agent takes the servers down too), writes the server's
stderr to a log file instead of the screen, and sets `exited` when the server's stdout ends, which is how a crash
between calls is noticed.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncIterator
from typing import IO

import anyio
import mcp_types
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

from apex_coding_agent.mcp_servers.config import McpServerConfig
from apex_coding_agent.tools.shell import track_process_group, untrack_process_group

STOP_GRACE_S = 1.0
# A server's environment: these of ours, then its `env` (the SDK's rule: no secrets by accident).
INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR")


def server_environment(config: McpServerConfig) -> dict[str, str]:
    env = {key: os.environ[key] for key in INHERITED_ENV if key in os.environ}
    env.update(config.env)
    return env


def _kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


@contextlib.asynccontextmanager
async def stdio_transport(
    config: McpServerConfig, errlog: IO[bytes], exited: anyio.Event
) -> AsyncIterator[TransportStreams]:
    """Start the server and yield the SDK's stream pair; on exit close stdin, then SIGTERM and SIGKILL the group."""
    assert config.command is not None
    process = await anyio.open_process(
        [config.command, *config.args],
        env=server_environment(config),
        cwd=config.cwd,
        stderr=errlog,
        start_new_session=True,
    )
    pgid = process.pid
    track_process_group(pgid)
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](0)

    async def reader() -> None:
        buffer = b""
        try:
            async with read_send:
                async for chunk in stdout:
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                    for line in lines:
                        if not line.strip():
                            continue
                        item: SessionMessage | Exception
                        try:
                            item = SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
                        except ValueError as exc:
                            item = exc
                        await read_send.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
            pass
        finally:
            exited.set()

    async def writer() -> None:
        try:
            async with write_receive:
                async for message in write_receive:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await stdin.send(data.encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            exited.set()
            await read_send.aclose()

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(reader)
            group.start_soon(writer)
            try:
                yield read_receive, write_send
            finally:
                with anyio.CancelScope(shield=True):
                    with contextlib.suppress(Exception):
                        await stdin.aclose()
                    with anyio.move_on_after(STOP_GRACE_S):
                        await process.wait()
                    if process.returncode is None:
                        _kill_group(pgid, signal.SIGTERM)
                        with anyio.move_on_after(STOP_GRACE_S):
                            await process.wait()
                    _kill_group(pgid, signal.SIGKILL)  # whatever the server left behind in its group
                    with anyio.move_on_after(STOP_GRACE_S):
                        await process.wait()
                group.cancel_scope.cancel()
    finally:
        untrack_process_group(pgid)
        for stream in (read_receive, write_send):
            await stream.aclose()


__all__ = ["server_environment", "stdio_transport"]
