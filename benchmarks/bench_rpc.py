"""RPC mode round trip: median µs from writing a `get_state` line to reading its response line.

Client and server share one event loop and talk through real OS pipes, so the figure covers the
framing, parsing/validation, dispatch as a task, the state snapshot, JSON encoding and both pipe
hops (but not process start-up). `parse_line` alone is shown for comparison.
Run with the workspace's python: `uv run python benchmarks/bench_rpc.py`.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from apex_ai.models import ModelRegistry
from apex_ai.providers.faux import FauxProvider
from apex_coding_agent.core.auth_storage import AuthStorage
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.modes.rpc.rpc_mode import run_rpc_mode
from apex_coding_agent.modes.rpc.rpc_types import parse_line
from apex_coding_agent.runtime import AgentSessionRuntime
from apex_coding_agent.session import SessionManager

ROUND_TRIPS = 3000
WARMUP = 200
PARSES = 20000


async def _runtime(root: Path) -> AgentSessionRuntime:
    faux = FauxProvider(models=[{"id": "faux-1"}])
    registry = ModelRegistry(load_catalog=False)
    registry.register_provider("faux", api="faux", base_url="http://localhost:0", models=faux.models)
    cwd = root / "work"
    cwd.mkdir()
    return await AgentSessionRuntime.create(
        cwd=str(cwd),
        agent_dir=str(root / "agent"),
        model=faux.model(),
        session_manager=SessionManager.in_memory(str(cwd)),
        settings_manager=SettingsManager.in_memory({}),
        model_runtime=ModelRuntime(None, AuthStorage.in_memory(), registry=registry),
        permission_gate=PermissionGate(cwd, flag_mode="bypassPermissions"),
    )


async def _round_trips(root: Path) -> list[float]:
    loop = asyncio.get_running_loop()
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    stdin = open(in_read, "rb", buffering=0)
    stdout = open(out_write, "wb", buffering=0)
    server = loop.create_task(run_rpc_mode(await _runtime(root), stdin=stdin, stdout=stdout, handle_signals=False))
    writer, _ = await loop.connect_write_pipe(asyncio.Protocol, open(in_write, "wb", buffering=0))
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), open(out_read, "rb", buffering=0))
    samples: list[float] = []
    for i in range(WARMUP + ROUND_TRIPS):
        line = b'{"id":"%d","type":"get_state"}\n' % i
        start = time.perf_counter()
        writer.write(line)
        response = await reader.readline()
        elapsed = time.perf_counter() - start
        assert response.startswith(b'{"id":"%d","type":"response","command":"get_state","success":true' % i)
        if i >= WARMUP:
            samples.append(elapsed)
    writer.close()
    assert await server == 0
    stdin.close()
    stdout.close()
    return samples


def _parse_cost() -> float:
    line = '{"id":"42","type":"set_model","provider":"faux","modelId":"faux-1"}'
    start = time.perf_counter()
    for _ in range(PARSES):
        parse_line(line)
    return (time.perf_counter() - start) / PARSES


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        samples = asyncio.run(_round_trips(Path(tmp)))
    samples.sort()
    median = statistics.median(samples) * 1e6
    p90 = samples[int(len(samples) * 0.9)] * 1e6
    print(f"get_state round trip over pipes: median {median:.0f} µs, p90 {p90:.0f} µs ({ROUND_TRIPS} requests)")
    print(f"parse_line (set_model, validated): {_parse_cost() * 1e6:.1f} µs per line")


if __name__ == "__main__":
    main()
