"""Drive `run_rpc_mode` in-process through real OS pipes, with a faux provider behind a real runtime."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from apex_ai.models import ModelRegistry
from apex_ai.providers.faux import FauxProvider, FauxStep
from apex_coding_agent.core.auth_storage import AuthStorage
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.modes.rpc.jsonl import JsonlWriter
from apex_coding_agent.modes.rpc.rpc_mode import RpcServer, run_rpc_mode
from apex_coding_agent.resources import ResourceLoader
from apex_coding_agent.runtime import AgentSessionRuntime
from apex_coding_agent.session import SessionManager

# The pi capture's model, served by the faux provider (api "faux" instead of "anthropic-messages").
GOLDEN_MODELS = [
    {"id": "fake-model", "name": "Fake Model", "input": ["text"], "contextWindow": 200000, "maxTokens": 8192}
]


def without_system(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`records` without the events of system messages, for comparisons with pi 0.73.1 captures: pi predates the
    seed's `SystemMessage`, which the coding agent records in the session (and emits) as an addition. Callers
    check where the system message was before dropping it."""

    def is_system(record: dict[str, Any]) -> bool:
        message = record.get("message")
        return isinstance(message, dict) and message.get("role") == "system"

    return [record for record in records if not is_system(record)]


class RpcClient:
    """The client end of the pipes: write command lines, read output records as dicts."""

    def __init__(self) -> None:
        self._in_read, self._in_write = os.pipe()
        self._out_read, self._out_write = os.pipe()
        self.stdin = open(self._in_read, "rb", buffering=0)
        self.stdout = open(self._out_write, "wb", buffering=0)
        self._lines: asyncio.Queue[bytes] = asyncio.Queue()
        self.received: list[dict[str, Any]] = []
        self._writer: asyncio.WriteTransport | None = None
        self.task: asyncio.Task[int] | None = None

    async def start(self, runtime: AgentSessionRuntime, **kwargs: Any) -> None:
        loop = asyncio.get_running_loop()
        # The output is drained by a thread: the server's stdout writes block, as they do in production.
        threading.Thread(target=self._drain, args=(loop,), daemon=True).start()
        writer_file = open(self._in_write, "wb", buffering=0)
        self._writer, _ = await loop.connect_write_pipe(asyncio.Protocol, writer_file)
        kwargs.setdefault("handle_signals", False)
        self.task = loop.create_task(run_rpc_mode(runtime, stdin=self.stdin, stdout=self.stdout, **kwargs))

    async def start_server(self, runtime: AgentSessionRuntime, *, handle_signals: bool = False) -> RpcServer:
        """Like `start`, but with a server object the test can reach (its `ui`, `request_shutdown`)."""
        loop = asyncio.get_running_loop()
        threading.Thread(target=self._drain, args=(loop,), daemon=True).start()
        writer_file = open(self._in_write, "wb", buffering=0)
        self._writer, _ = await loop.connect_write_pipe(asyncio.Protocol, writer_file)
        server = RpcServer(runtime, JsonlWriter(self.stdout))
        self.task = loop.create_task(server.serve(self.stdin, handle_signals=handle_signals))
        return server

    def _drain(self, loop: asyncio.AbstractEventLoop) -> None:
        buffer = b""
        with open(self._out_read, "rb", buffering=0) as out:
            while chunk := out.read(1 << 16):
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    self._deliver(loop, line)
        self._deliver(loop, b"")

    def _deliver(self, loop: asyncio.AbstractEventLoop, line: bytes) -> None:
        try:
            loop.call_soon_threadsafe(self._lines.put_nowait, line)
        except RuntimeError:  # the test ended and its loop is closed: nobody is reading any more
            pass

    def send_raw(self, data: bytes) -> None:
        assert self._writer is not None
        self._writer.write(data)

    def send(self, obj: Any) -> None:
        self.send_raw(json.dumps(obj).encode() + b"\n")

    async def recv(self, timeout: float = 5.0) -> dict[str, Any]:
        line = await asyncio.wait_for(self._lines.get(), timeout)
        if not line:
            raise EOFError("server output closed")
        try:
            record: dict[str, Any] = json.loads(line)
        except RecursionError:
            # A deep session tree nests deeper than the default limit of the recursive C decoder.
            limit = sys.getrecursionlimit()
            sys.setrecursionlimit(20_000)
            try:
                record = json.loads(line)
            finally:
                sys.setrecursionlimit(limit)
        self.received.append(record)
        return record

    async def rest(self, timeout: float = 5.0) -> list[dict[str, Any]]:
        """Every record until the server closes its output."""
        out: list[dict[str, Any]] = []
        while True:
            try:
                out.append(await self.recv(timeout))
            except EOFError:
                return out

    async def until(self, predicate: Any, timeout: float = 5.0) -> list[dict[str, Any]]:
        """Read records up to and including the first one matching `predicate`."""
        out: list[dict[str, Any]] = []
        while True:
            record = await self.recv(timeout)
            out.append(record)
            if predicate(record):
                return out

    async def response(self, id: Any, timeout: float = 5.0) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """(the response with `id`, every record read before it)."""
        records = await self.until(lambda r: r.get("type") == "response" and r.get("id") == id, timeout)
        return records[-1], records[:-1]

    async def request(self, command: dict[str, Any], timeout: float = 5.0) -> dict[str, Any]:
        self.send(command)
        response, _ = await self.response(command["id"], timeout)
        return response

    async def close(self, timeout: float = 5.0) -> int:
        """Close stdin (EOF) and return the exit code."""
        assert self._writer is not None
        self._writer.close()
        return await self.finished(timeout)

    async def finished(self, timeout: float = 5.0) -> int:
        """Wait for the server to return; closes the server's ends of the pipes."""
        assert self.task is not None
        code = await asyncio.wait_for(self.task, timeout)
        self.stdout.close()
        self.stdin.close()
        return code


class RpcHarness:
    """A faux provider, a private model registry and runtimes over tmp dirs."""

    def __init__(self, root: Path, models: list[dict[str, Any]] | None = None, provider: str = "faux") -> None:
        self.root = root
        self.cwd = root / "work"
        self.cwd.mkdir(exist_ok=True)
        self.agent_dir = root / "agent"
        self.sessions_dir = root / "sessions"
        self.faux = FauxProvider(
            provider=provider,
            models=models or [{"id": "faux-1"}, {"id": "faux-think", "reasoning": True}],
            token_size=(2, 4),
        )
        registry = ModelRegistry(load_catalog=False)
        registry.register_provider(provider, api="faux", base_url="http://localhost:0", models=self.faux.models)
        self.model_runtime = ModelRuntime(None, AuthStorage.in_memory(), registry=registry)
        self.settings = SettingsManager.in_memory({})

    def script(self, *steps: FauxStep) -> None:
        self.faux.set_responses(steps)

    async def runtime(self, *, persisted: bool = False, model_id: str | None = None) -> AgentSessionRuntime:
        manager = (
            SessionManager.create(str(self.cwd), self.sessions_dir)
            if persisted
            else SessionManager.in_memory(str(self.cwd))
        )
        return await AgentSessionRuntime.create(
            cwd=str(self.cwd),
            agent_dir=str(self.agent_dir),
            model=self.faux.model(model_id),
            session_manager=manager,
            settings_manager=self.settings,
            model_runtime=self.model_runtime,
            permission_gate=PermissionGate(self.cwd, flag_mode="bypassPermissions"),
        )

    def resource_loader(self) -> ResourceLoader:
        return ResourceLoader(self.cwd, self.agent_dir, self.settings, project_trusted=True, home=self.root / "home")

    async def client(self, **kwargs: Any) -> RpcClient:
        persisted = kwargs.pop("persisted", False)
        client = RpcClient()
        await client.start(await self.runtime(persisted=persisted), **kwargs)
        return client
