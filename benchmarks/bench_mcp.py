"""MCP: what a configured stdio server costs, and what an unconfigured one costs (nothing, by design).

Usage: `uv run python benchmarks/bench_mcp.py [--repeat R] [--calls N]`. Prints, as medians over R runs:
- the CPU time of importing the CLI's start-up module (which names the MCP extension) in a fresh interpreter, and
  whether that import loaded anything of the `mcp` SDK (it must not);
- the wall time from starting a stdio server written with the SDK (`tests/mcp_servers/demo_server.py`) to its tools
  being known, and the round trip of one `tools/call` (median over N calls per run);
- the wall time from calling the demo's `grow` tool (which adds a tool and sends `tools/list_changed`) to the new
  tool being known to the client: what a tool that appears mid-run waits before it can join the next turn.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "packages" / "coding-agent" / "tests" / "mcp_servers" / "demo_server.py"
IMPORT_PROBE = (
    "import sys, apex_coding_agent.cli.startup;"
    "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))"
)


def startup_import_cpu() -> tuple[float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, "-c", IMPORT_PROBE], capture_output=True, text=True, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu * 1000, out.strip()


async def connect_and_call(calls: int) -> tuple[float, float, float]:
    from apex_coding_agent.mcp_servers.config import McpServerConfig, McpServerEntry
    from apex_coding_agent.mcp_servers.connection import McpConnection

    entry = McpServerEntry("demo", McpServerConfig(command=sys.executable, args=[str(DEMO)]), "bench", "sdk")
    grown = asyncio.Event()

    def on_change(connection: McpConnection) -> None:
        if any(tool.name == "extra" for tool in connection.tools):
            grown.set()

    with tempfile.TemporaryDirectory() as logs:
        connection = McpConnection(entry.resolve(), log_dir=Path(logs), on_change=on_change)
        started = time.perf_counter()
        connection.start()
        await connection.wait_ready()
        ready = time.perf_counter() - started
        assert connection.status == "connected", connection.error
        rounds = []
        for index in range(calls):
            begin = time.perf_counter()
            await connection.call_tool("echo", {"text": str(index)})
            rounds.append(time.perf_counter() - begin)
        begin = time.perf_counter()
        grow = asyncio.ensure_future(connection.call_tool("grow", {}))
        await grown.wait()
        known = time.perf_counter() - begin
        await grow
        await connection.close()
    return ready * 1000, statistics.median(rounds) * 1000, known * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    imports = [startup_import_cpu() for _ in range(args.repeat)]
    loaded = {found for _, found in imports}
    print(
        f"start-up module import: {statistics.median(c for c, _ in imports):.0f} ms CPU; mcp modules loaded: {loaded}"
    )
    runs = [asyncio.run(connect_and_call(args.calls)) for _ in range(args.repeat)]
    print(f"stdio server start to tools known: {statistics.median(r for r, _, _ in runs):.0f} ms")
    print(f"tools/call round trip: {statistics.median(c for _, c, _ in runs):.2f} ms")
    print(f"tools/list_changed to the new tool known: {statistics.median(k for _, _, k in runs):.2f} ms")


if __name__ == "__main__":
    main()
