"""Startup figures: `apex-code --version` against `python -c pass`, and what `import apex_ai` loads.

Run with `uv run nox -s bench` (a venv with compiled bytecode) or directly with the workspace's python.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time

RUNS = 15


def _median_ms(cmd: list[str]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _import_time(module: str) -> tuple[float, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"], check=True, capture_output=True, text=True
    )
    total_us = 0
    loaded = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        parts = line.split(":", 1)[1].split("|")
        if parts[0].strip().isdigit():
            name = parts[2].rstrip()
            loaded.append(name.strip())
            if name.strip() == module:  # its cumulative time covers everything it pulled in
                total_us = int(parts[1])
    return total_us / 1000, loaded


def main() -> None:
    baseline = _median_ms([sys.executable, "-c", "pass"])
    script = shutil.which("apex-code")
    version_cmd = [script, "--version"] if script else [sys.executable, "-m", "apex_coding_agent.cli", "--version"]
    version = _median_ms(version_cmd)
    print(f"python -c pass:        {baseline:7.1f} ms (median of {RUNS})")
    print(f"apex-code --version:   {version:7.1f} ms  ratio {version / baseline:.2f}x (goal <= 3x)")
    total_ms, loaded = _import_time("apex_ai")
    sdks = sorted({name for name in loaded if name.split(".")[0] in {"anthropic", "openai"}})
    print(f"import apex_ai:        {total_ms:7.1f} ms cumulative; SDK modules loaded: {sdks or 'none'}")


if __name__ == "__main__":
    main()
