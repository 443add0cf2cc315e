"""One MCP server: connecting, listing, calling, and restarting a crashed stdio server.

Imports the `mcp` SDK: only loaded once a server is configured. Every connection lives in one task of its own
(the SDK's context managers must be left in the task that entered them); calls from other tasks go through its
`ClientSession`. A stdio server whose process ends is started again after 0.5 s, 1 s, 2 s ... (at most 30 s) and given
up after `MAX_RESTARTS` failures in a row; an HTTP server that cannot be reached is retried the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Collection
from pathlib import Path
from typing import IO, Any, Literal, TypeAlias

import anyio
import httpx2
import mcp_types
from mcp import ClientSession
from mcp.client._transport import TransportStreams
from mcp.client.streamable_http import streamable_http_client

from apex_ai.abort import AbortSignal
from apex_coding_agent.mcp_servers.config import ResolvedServer
from apex_coding_agent.mcp_servers.errors import McpCallError
from apex_coding_agent.mcp_servers.stdio_transport import stdio_transport

Status: TypeAlias = Literal["connecting", "connected", "restarting", "failed", "disabled", "closed"]
ListName: TypeAlias = Literal["tools", "prompts", "resources"]
LISTS: tuple[ListName, ...] = ("tools", "prompts", "resources")
MAX_RESTARTS = 5
FIRST_BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0
CLIENT_INFO = mcp_types.Implementation(name="apex-code", version="0.1.0")


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, anyio.get_cancelled_exc_class())]
        if inner:
            return _describe(inner[0])
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _is_timeout(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return any(_is_timeout(e) for e in exc.exceptions)
    return isinstance(exc, TimeoutError)


class McpConnection:
    def __init__(self, server: ResolvedServer, *, log_dir: Path, on_change: Callable[[McpConnection], None]) -> None:
        self.server = server
        self.name = server.name
        self.status: Status = "connecting"
        self.error: str | None = None
        self.tools: list[mcp_types.Tool] = []
        self.prompts: list[mcp_types.Prompt] = []
        self.resources: list[mcp_types.Resource] = []
        self.instructions: str | None = None
        self.restarts = 0
        self.log_path = log_dir / f"{server.name}.log" if server.config.transport == "stdio" else None
        self._log_dir = log_dir
        self._on_change = on_change
        self._session: ClientSession | None = None
        self._lost = asyncio.Event()
        self._closing = asyncio.Event()
        self._ready = asyncio.Event()
        self._refresh_wanted = asyncio.Event()
        self._stale: set[ListName] = set()
        self._task: asyncio.Task[None] | None = None

    @property
    def timeout_s(self) -> float:
        return self.server.config.timeout_ms / 1000

    @property
    def startup_timeout_s(self) -> float:
        return self.server.config.startup_timeout_ms / 1000

    # ----------------------------------------------------------------- lifecycle

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"mcp:{self.name}")

    async def wait_ready(self) -> None:
        """Until the first connection attempt has succeeded or failed for good."""
        await self._ready.wait()

    async def close(self) -> None:
        self._closing.set()
        task = self._task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout=5)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        self._set("closed", self.error)

    def reconnect(self) -> None:
        """Start over (the app's reconnect): a live connection is dropped, a failed one tried again."""
        if self._task is not None and not self._task.done():
            self._lost.set()
            self.restarts = 0
            return
        self.restarts = 0
        self._ready.clear()
        self._set("connecting", None)
        self.start()

    def _set(self, status: Status, error: str | None) -> None:
        self.status, self.error = status, error
        self._on_change(self)

    @contextlib.asynccontextmanager
    async def _transport(self, exited: anyio.Event) -> AsyncIterator[TransportStreams]:
        config = self.server.config
        if config.transport == "stdio":
            self._log_dir.mkdir(parents=True, exist_ok=True)
            assert self.log_path is not None
            log: IO[bytes]
            with self.log_path.open("ab") as log:
                log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} starting {config.command}\n".encode())
                log.flush()
                async with stdio_transport(config, log, exited) as streams:
                    yield streams
            return
        assert config.url is not None
        client = httpx2.AsyncClient(headers=config.headers, timeout=httpx2.Timeout(30.0, read=300.0))
        async with client, streamable_http_client(config.url, http_client=client) as streams:
            yield streams

    async def _run(self) -> None:
        failures = 0
        if self.status == "connecting":
            self._on_change(self)  # from the task: a host that subscribed after the start still hears it
        while not self._closing.is_set():
            exited = anyio.Event()
            self._lost.clear()
            error: str | None = None
            try:
                async with self._transport(exited) as (read, write):
                    async with ClientSession(
                        read, write, message_handler=self._on_message, client_info=CLIENT_INFO
                    ) as session:
                        with anyio.fail_after(self.startup_timeout_s):
                            result = await session.initialize()
                            await self._list(session)
                        self.instructions = result.instructions
                        self._session = session
                        failures = 0
                        self._set("connected", None)
                        self._ready.set()
                        await self._serve(session, exited)
            except Exception as exc:  # any failure of the server or transport ends this connection only
                error = (
                    f"did not answer initialize within {self.startup_timeout_s:g}s"
                    if _is_timeout(exc)
                    else _describe(exc)
                )
                if not self._ready.is_set() and not self._closing.is_set():
                    # Never connected (no such command, a bad URL, no answer to initialize): restarting would only
                    # fail again; `reconnect` tries anew.
                    self._set("failed", error)
                    self._ready.set()
                    return
            finally:
                self._session = None
            if self._closing.is_set():
                break
            failures += 1
            if error is None:
                error = "the server exited" if self.server.config.transport == "stdio" else "the connection ended"
            if failures > MAX_RESTARTS:
                self._set("failed", f"{error} (gave up after {MAX_RESTARTS} restarts)")
                self._ready.set()
                return
            self.restarts += 1
            self._set("restarting", error)
            delay = min(FIRST_BACKOFF_S * 2 ** (failures - 1), MAX_BACKOFF_S)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), timeout=delay)
        self._ready.set()

    async def _serve(self, session: ClientSession, exited: anyio.Event) -> None:
        """Wait for the end (closing, crash, reconnect), refreshing the lists when the server says they changed."""
        while True:
            waiters = [
                asyncio.ensure_future(self._closing.wait()),
                asyncio.ensure_future(self._lost.wait()),
                asyncio.ensure_future(exited.wait()),
                asyncio.ensure_future(self._refresh_wanted.wait()),
            ]
            try:
                await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiter in waiters:
                    waiter.cancel()
            if self._closing.is_set() or self._lost.is_set() or exited.is_set():
                return
            self._refresh_wanted.clear()
            stale, self._stale = self._stale, set()
            with anyio.fail_after(self.timeout_s):
                await self._list(session, stale)
            self._on_change(self)

    async def _list(self, session: ClientSession, lists: Collection[ListName] = LISTS) -> None:
        """Fetch the named lists again (only what a notification said changed: a new tool is known one round
        trip after `tools/list_changed`)."""
        caps = session.server_capabilities
        if "tools" in lists:
            self.tools = await _all_tools(session) if caps is None or caps.tools is not None else []
        if "prompts" in lists:
            self.prompts = (await session.list_prompts()).prompts if caps is not None and caps.prompts else []
        if "resources" in lists:
            has = caps is not None and caps.resources
            self.resources = (await session.list_resources()).resources if has else []

    async def _on_message(self, message: Any) -> None:  # Any: a server notification or a transport exception
        changed: ListName | None = None
        if isinstance(message, mcp_types.ToolListChangedNotification):
            changed = "tools"
        elif isinstance(message, mcp_types.PromptListChangedNotification):
            changed = "prompts"
        elif isinstance(message, mcp_types.ResourceListChangedNotification):
            changed = "resources"
        if changed is not None:
            self._stale.add(changed)
            self._refresh_wanted.set()

    # ----------------------------------------------------------------- calls

    async def _call(self, what: str, make: Callable[[ClientSession], Any], signal: AbortSignal | None) -> Any:
        session = self._session
        if session is None or self.status != "connected":
            raise McpCallError(f'MCP server "{self.name}" is not connected ({self.status}: {self.error or "-"})')
        call = asyncio.ensure_future(make(session))
        lost = asyncio.ensure_future(self._lost_or_exited())
        waiters: list[asyncio.Future[Any]] = [call, lost]
        if signal is not None:
            waiters.append(asyncio.ensure_future(signal.wait()))
        try:
            done, _ = await asyncio.wait(waiters, timeout=self.timeout_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters[1:]:
                waiter.cancel()
        if call in done:
            try:
                return call.result()
            except Exception as exc:
                raise McpCallError(f'MCP server "{self.name}": {what} failed: {_describe(exc)}') from exc
        call.cancel()
        with contextlib.suppress(BaseException):
            await call
        if signal is not None and signal.aborted:
            raise McpCallError(f"{what} was aborted")
        if not done:
            raise McpCallError(f'MCP server "{self.name}" did not answer {what} within {self.timeout_s:g}s')
        raise McpCallError(f'MCP server "{self.name}" stopped during {what} ({self.error or "it exited"})')

    async def _lost_or_exited(self) -> None:
        while self._session is not None and not self._lost.is_set():
            await asyncio.sleep(0.05)

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], signal: AbortSignal | None = None
    ) -> mcp_types.CallToolResult:
        result = await self._call(f"tools/call {tool}", lambda s: s.call_tool(tool, arguments), signal)
        assert isinstance(result, mcp_types.CallToolResult)
        return result

    async def get_prompt(self, prompt: str, arguments: dict[str, str]) -> mcp_types.GetPromptResult:
        result = await self._call(f"prompts/get {prompt}", lambda s: s.get_prompt(prompt, arguments), None)
        assert isinstance(result, mcp_types.GetPromptResult)
        return result

    async def read_resource(self, uri: str) -> mcp_types.ReadResourceResult:
        result = await self._call(f"resources/read {uri}", lambda s: s.read_resource(uri), None)
        assert isinstance(result, mcp_types.ReadResourceResult)
        return result


async def _all_tools(session: ClientSession) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(100):  # a server paging forever is cut off
        page = await session.list_tools(params=mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


__all__ = ["MAX_RESTARTS", "McpCallError", "McpConnection", "Status"]
