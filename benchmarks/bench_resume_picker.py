"""The resume picker side by side with the original product: launch -> first session row on screen (ms).

Both programs get the same 3,000 sessions (~7.6 MB, written by `bench_session_index.make_listing_corpus`, the JSONL
format both read) in their own agent dir (`APEX_CODE_CODING_AGENT_DIR`, `PI_CODING_AGENT_DIR`), and a folder holding
one session (the floor: start-up alone). Each picker starts in a detached tmux session (`apex-code -r`,
`pi --resume`) and the screen is polled every 5 ms until the picker's title and its selected row (`› `) show; the
programs alternate within each round so both see the same machine load. Ours is measured with the index warm (it
is built by the first, unmeasured run, as it is by a user's first listing) and without it (every file read).

The original product (`@mariozechner/pi-coding-agent`, pinned below) is installed once with npm into a cache dir
(`$APEX_BENCH_CACHE`, default `~/.cache/apex-code-bench`); without npm, or when the install fails (no network), the
comparison is left out with one line saying why and only our own figures print. It runs offline with a dummy key:
it needs one to start, and never sends a request here.

Goal (issue 16): ours <= 0.5x the original's time with 3,000 sessions. Run:
`uv run python benchmarks/bench_resume_picker.py [--rounds N] [--sessions N]`.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench_session_index import LIST_SESSIONS, Vocabulary, make_listing_corpus
from bench_tui_startup import TmuxError, TmuxServer, app_command, app_env, write_agent_dir

from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_coding_agent.paths import encode_cwd

PI_PACKAGE = "@mariozechner/pi-coding-agent"
PI_VERSION = "0.73.1"
GOAL_RATIO = 0.5
FIRST_ROW = ("Resume Session", "› ")
"""What both pickers show once a session row is on screen: the title and the selection marker of the first row."""


def install_pi() -> tuple[Path | None, str]:
    """The `pi` executable from the cache dir (installed there with npm on first use), or None and why not."""
    cache = Path(os.environ.get("APEX_BENCH_CACHE", Path.home() / ".cache" / "apex-code-bench"))
    prefix = cache / f"pi-coding-agent-{PI_VERSION}"
    binary = prefix / "node_modules" / ".bin" / "pi"
    if binary.exists():
        return binary, f"{PI_PACKAGE} {PI_VERSION} from {prefix}"
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        return None, "node/npm are not installed, so the original product cannot be run here"
    prefix.mkdir(parents=True, exist_ok=True)
    command = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", f"{PI_PACKAGE}@{PI_VERSION}"]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    except subprocess.TimeoutExpired:
        return None, f"`npm install {PI_PACKAGE}@{PI_VERSION}` did not finish in 10 minutes"
    if result.returncode != 0 or not binary.exists():
        last = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
        return None, f"`npm install {PI_PACKAGE}@{PI_VERSION}` failed: {last}"
    return binary, f"{PI_PACKAGE} {PI_VERSION}, installed into {prefix}"


def pi_env(agent_dir: Path) -> dict[str, str]:
    """The original's environment: its own agent dir, offline, no version check, a dummy key to start with."""
    env = {k: v for k, v in app_env(agent_dir).items() if not k.startswith("APEX_CODE_")}
    env.update(
        PI_CODING_AGENT_DIR=str(agent_dir),
        PI_OFFLINE="1",
        PI_SKIP_VERSION_CHECK="1",
        PI_TELEMETRY="0",
        ANTHROPIC_API_KEY="bench-dummy-key",
    )
    return env


def write_sessions(base: Path, sessions: int) -> tuple[Path, Path, list[Path]]:
    """The corpus for both agent dirs: (the 3,000-session folder, the one-session folder, the agent dirs)."""
    many, one = base / "work", base / "one-session"
    many.mkdir()
    one.mkdir()
    agents = [base / "apex-agent", base / "pi-agent"]
    source = agents[0] / "sessions" / encode_cwd(str(many))
    size = make_listing_corpus(source, str(many), Vocabulary(random.Random(1)), random.Random(2), sessions)
    first = min(source.iterdir())
    for agent in agents:
        target = agent / "sessions" / encode_cwd(str(many))
        if target != source:
            shutil.copytree(source, target)
        single = agent / "sessions" / encode_cwd(str(one))
        single.mkdir(parents=True)
        (single / first.name).write_text(first.read_text().replace(f'"cwd":"{many}"', f'"cwd":"{one}"'))
    print(f"{sessions} sessions, {size / 1e6:.1f} MB in one project folder, the same files for both programs")
    return many, one, agents


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=LIST_SESSIONS)
    args, _ = parser.parse_known_args()  # `nox -s bench -- ...` passes the same arguments to every benchmark
    print("resume picker: launch -> first session row on screen (tmux), ours and the original product")
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (figures scale with it)")
    pi, how = install_pi()
    print(f"original product: {how}" if pi is not None else f"original product: not compared ({how})")
    base = Path(tempfile.mkdtemp(prefix="bench-resume-picker-"))
    try:
        many, one, (apex_agent, pi_agent) = write_sessions(base, args.sessions)
        with ScriptedModelServer([{"text": "unused", "repeat": True}]) as server, TmuxServer() as tmux:
            write_agent_dir(apex_agent, server)
            ours, ours_scan = app_env(apex_agent), {**app_env(apex_agent), "APEX_CODE_SESSION_INDEX": "off"}
            runs: dict[str, tuple[str, dict[str, str], Path]] = {
                "ours, index": (app_command("-r"), ours, many),
                "ours, no index": (app_command("-r"), ours_scan, many),
                "ours, 1 session": (app_command("-r"), ours, one),
            }
            if pi is not None:
                command = "exec " + subprocess.list2cmdline([str(pi), "--resume"])
                runs["original"] = (command, pi_env(pi_agent), many)
                runs["original, 1 session"] = (command, pi_env(pi_agent), one)

            def first_row(label: str) -> float:
                command, env, where = runs[label]
                started = time.perf_counter()
                name = tmux.start(command, env, where)
                try:
                    return (tmux.wait_for(name, FIRST_ROW) - started) * 1000
                finally:
                    tmux.kill(name)

            for label in runs:  # warm-up: bytecode, page cache, our index
                first_row(label)
            times: dict[str, list[float]] = {label: [] for label in runs}
            for round_ in range(args.rounds):
                order = list(runs) if round_ % 2 == 0 else list(reversed(runs))
                for label in order:
                    times[label].append(first_row(label))
    except TmuxError as exc:
        print(f"  not measured ({exc})")
        return
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"  {'':<22} {'median':>8} {'min':>8}  ms, {args.rounds} alternated rounds")
    for label, values in times.items():
        print(f"  {label:<22} {statistics.median(values):>8.0f} {min(values):>8.0f}")
    if "original" in times:
        ratio = statistics.median(times["ours, index"]) / statistics.median(times["original"])
        verdict = "met" if ratio <= GOAL_RATIO else "NOT met"
        print(f"  ours / original with {args.sessions} sessions: {ratio:.2f}x (goal <= {GOAL_RATIO}x: {verdict})")


if __name__ == "__main__":
    main()
