"""Start-up speed of a print run: process spawn -> first request at the model server, per API.

Runs the real `apex-code --permission-mode default -p hi` against an in-process `ScriptedModelServer`
(one temp agent dir per API with a models.json pointing at it) and prints, per API, the medians of
spawn -> request (the server's wall-clock request timestamp minus the spawn time), spawn -> exit, and
the child's CPU time (user + system: steadier than wall time on a busy machine) and peak RSS (both from
`os.wait4`), with the ratios to pi 0.73.1 on this box (~1150 ms, 177 MB).
Goals: openai-completions <= 0.5x, anthropic-messages <= 1.0x.

Run with `uv run nox -s bench` (a venv with compiled bytecode) or directly with the workspace's python;
`--runs N` sets the number of measured runs per API (default 7); `--compare-preload` interleaves runs of
`apex-code` with `preload_api` called first thing in the process.

Each API also gets a `sdk floor` row: a bare script that imports only the SDK and sends the same streaming request
with its async client (no settings, session, tools or prompt). Any design that sends the first request through the
SDK (spec ai.md §7: one SDK client per request) starts at least this late, so `apex-code - floor` is the start-up
cost that is ours to cut. The import is CPU work under the GIL: a preload thread overlaps it with waiting, not with
the rest of start-up, so on a busy core the two add up. One unmeasured warm-up run per API
comes first: it lets the interpreter write bytecode for the workspace's own (editable) sources, which
`uv sync --compile-bytecode` does not compile, so the figures match an installed wheel.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from apex_ai.testing.scripted_server import ScriptedModelServer

PI_FIRST_REQUEST_MS = 1150.0
PI_PEAK_RSS_MB = 177.0
GOALS = {"openai-completions": 0.5, "anthropic-messages": 1.0}
APIS = ("openai-completions", "anthropic-messages")
SDK_OF = {"openai-completions": "openai", "anthropic-messages": "anthropic"}


@dataclass(frozen=True)
class Run:
    first_request_ms: float
    total_ms: float
    cpu_ms: float
    peak_rss_mb: float


def _command() -> list[str]:
    script = Path(sys.executable).parent / "apex-code"
    if script.exists():
        return [str(script)]
    found = shutil.which("apex-code")
    return [found] if found else [sys.executable, "-m", "apex_coding_agent.cli"]


def _child_env(agent_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("APEX_CODE_")}
    # Bytecode must be written and used: without it every start recompiles the workspace's sources.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["APEX_CODE_CODING_AGENT_DIR"] = str(agent_dir)
    env["APEX_CODE_OFFLINE"] = "1"
    return env


def _write_models(agent_dir: Path, server: ScriptedModelServer, api: str) -> None:
    base = server.anthropic_base_url if api == "anthropic-messages" else server.openai_base_url
    agent_dir.mkdir(parents=True, exist_ok=True)
    provider = {"baseUrl": base, "api": api, "apiKey": "bench-key", "models": [{"id": "bench-model"}]}
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"bench": provider}}))


def _run_once(cmd: list[str], env: dict[str, str], cwd: Path, server: ScriptedModelServer) -> Run:
    seen = len(server.requests)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        spawned = time.time()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        # wait4 instead of proc.wait(): it also returns the child's resource usage (peak RSS).
        _, status, usage = os.wait4(proc.pid, 0)
        ended = time.time()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"{cmd} exited {proc.returncode}: {err.read().decode(errors='replace')[-2000:]}")
    requests = server.requests[seen:]
    if not requests:
        raise RuntimeError("the run finished without a request to the model server")
    # ru_maxrss is in KiB on Linux.
    cpu_ms = (usage.ru_utime + usage.ru_stime) * 1000
    return Run((requests[0]["ts"] - spawned) * 1000, (ended - spawned) * 1000, cpu_ms, usage.ru_maxrss / 1024)


SDK_FLOOR = {
    "openai-completions": (
        "import asyncio, sys\n"
        "import openai\n"
        "async def main():\n"
        "    client = openai.AsyncOpenAI(api_key='bench-key', base_url=sys.argv[1], max_retries=0)\n"
        "    stream = await client.chat.completions.create(\n"
        "        model='bench-model', messages=[{'role': 'user', 'content': 'hi'}], stream=True)\n"
        "    async for _ in stream:\n"
        "        pass\n"
        "asyncio.run(main())\n"
    ),
    "anthropic-messages": (
        "import asyncio, sys\n"
        "import anthropic\n"
        "async def main():\n"
        "    client = anthropic.AsyncAnthropic(api_key='bench-key', base_url=sys.argv[1], max_retries=0)\n"
        "    stream = await client.messages.create(\n"
        "        model='bench-model', max_tokens=64, messages=[{'role': 'user', 'content': 'hi'}], stream=True)\n"
        "    async for _ in stream:\n"
        "        pass\n"
        "asyncio.run(main())\n"
    ),
}
"""The least any process can do before its first request through the SDK: import it, build a client, send."""

PRELOAD_AT_START = (
    "import sys\n"
    "from apex_ai.api_registry import preload_api\n"
    "preload_api(sys.argv[1])\n"
    "from apex_coding_agent.cli import main\n"
    "sys.exit(main(sys.argv[2:]))\n"
)
"""`apex-code` with `preload_api` called first thing: the most overlap a preload in the CLI could get."""


def _sdk_import_ms(sdk: str, runs: int) -> float:
    """In-process import time of `sdk` alone (no interpreter start or teardown), median of `runs`."""
    probe = f"import time\nt = time.perf_counter()\nimport {sdk}\nprint((time.perf_counter() - t) * 1000)"
    return statistics.median(
        float(subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout)
        for _ in range(runs)
    )


def bench_api(
    api: str, runs: int, server: ScriptedModelServer, root: Path, variants: list[str]
) -> dict[str, list[Run]]:
    """`runs` measured runs of each variant, interleaved so that load drift on the machine hits all alike."""
    agent_dir = root / api / "agent"
    cwd = root / api / "project"
    cwd.mkdir(parents=True)
    _write_models(agent_dir, server, api)
    env = _child_env(agent_dir)
    flags = ["--permission-mode", "default", "-p", "hi"]
    base = server.anthropic_base_url if api == "anthropic-messages" else server.openai_base_url
    commands = {
        "apex-code": [*_command(), *flags],
        "preload@start": [sys.executable, "-c", PRELOAD_AT_START, api, *flags],
        "sdk floor": [sys.executable, "-c", SDK_FLOOR[api], base],
    }
    for variant in variants:
        _run_once(commands[variant], env, cwd, server)  # warm-up: bytecode, page cache
    results: dict[str, list[Run]] = {variant: [] for variant in variants}
    for _ in range(runs):
        for variant in variants:
            results[variant].append(_run_once(commands[variant], env, cwd, server))
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--compare-preload", action="store_true", help="also run apex-code with preload_api called at process start"
    )
    args, _ = parser.parse_known_args(argv)
    runs: int = args.runs
    variants = ["apex-code", "preload@start", "sdk floor"] if args.compare_preload else ["apex-code", "sdk floor"]
    print(f"apex-code -p hi, spawn -> first request at the model server (median of {runs}; pi: ~1150 ms, 177 MB)")
    with ScriptedModelServer([{"text": "Hello!", "usage": {"input": 5, "output": 2}, "repeat": True}]) as server:
        with tempfile.TemporaryDirectory(prefix="apex-bench-cli-") as tmp:
            for api in APIS:
                by_variant = bench_api(api, runs, server, Path(tmp), variants)
                sdk = SDK_OF[api]
                print(f"  {api} (import {sdk} alone, in-process: {_sdk_import_ms(sdk, 3):.0f} ms)")
                for variant, results in by_variant.items():
                    first = statistics.median(r.first_request_ms for r in results)
                    total = statistics.median(r.total_ms for r in results)
                    cpu = statistics.median(r.cpu_ms for r in results)
                    rss = statistics.median(r.peak_rss_mb for r in results)
                    ratio = first / PI_FIRST_REQUEST_MS
                    goal = GOALS[api]
                    verdict = "meets" if ratio <= goal else "misses"
                    print(
                        f"    {variant:<13} first request {first:6.0f} ms = {ratio:.2f}x pi ({verdict} goal <= {goal:.1f}x)"
                        f" | exit {total:6.0f} ms | CPU {cpu:6.0f} ms | peak RSS {rss:5.1f} MB = {rss / PI_PEAK_RSS_MB:.2f}x pi"
                    )
                ours = statistics.median(r.first_request_ms for r in by_variant["apex-code"])
                floor = statistics.median(r.first_request_ms for r in by_variant["sdk floor"])
                print(
                    f"    apex-code - sdk floor = {ours - floor:.0f} ms of our own start-up work; the floor alone is"
                    f" {floor / PI_FIRST_REQUEST_MS:.2f}x pi"
                )


if __name__ == "__main__":
    main()
