"""File checkpoints: the cost the issue sets limits on.

* capture per `write`/`edit` of a file under 1 MB (keep the old content, hash the new): limit 5 ms;
* change detection around a `bash` command in a 10,000-file project (scan before, change 3 files, scan after),
  once the first scan has seen the project: limit 50 ms in a git repository, 150 ms in a plain folder;
* rewind of a turn that changed 100 files (plan with conflict checks, journal, atomic writes): limit 500 ms;
* and, without a limit, the first `bash` scan of a session in a plain folder, which keeps a copy (or a reflink
  clone) of every file.

Run with the workspace's python: `uv run python benchmarks/bench_checkpoints.py [--files N] [--repeat N]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from apex_coding_agent.checkpoints.blobs import BlobStore, content_hash
from apex_coding_agent.checkpoints.capture import TurnCapture
from apex_coding_agent.checkpoints.restore import Journal, RestoreOp, apply_restore, plan_restore
from apex_coding_agent.checkpoints.scan import ProjectScanner

MB = 1024 * 1024


def report(label: str, timings: list[float], limit_ms: float) -> None:
    ordered = sorted(timings)
    best, median = ordered[0] * 1000, statistics.median(ordered) * 1000
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))] * 1000
    verdict = "ok" if median <= limit_ms else "OVER"
    limit = f"limit {limit_ms:.0f} ms)  {verdict}" if limit_ms != float("inf") else "no limit)"
    print(f"{label:<44} best {best:7.2f}  median {median:7.2f}  p90 {p90:7.2f} ms  (n={len(timings)}, {limit}")


def timed(repeat: int, setup: Callable[[int], None], work: Callable[[int], None]) -> list[float]:
    out: list[float] = []
    for round_ in range(repeat):
        setup(round_)
        started = time.perf_counter()
        work(round_)
        out.append(time.perf_counter() - started)
    return out


def bench_capture(root: Path, store: BlobStore, repeat: int) -> None:
    for size in (10_000, 500_000, MB - 1):
        target = root / f"file_{size}.txt"
        capture = TurnCapture(str(root), store, 5 * MB, 100 * MB)

        def setup(round_: int, target: Path = target, size: int = size) -> None:
            target.write_bytes(bytes([65 + round_ % 26]) * size)  # new content each round: a new blob

        def work(round_: int, target: Path = target, capture: TurnCapture = capture) -> None:
            capture.start(f"turn{round_}")
            rel = capture.before_file(str(target), "write")
            assert rel is not None
            capture.after_file(rel)

        report(f"capture write/edit, {size / 1000:.0f} kB", timed(repeat, setup, work), 5)


def build_project(root: Path, files: int) -> list[Path]:
    paths: list[Path] = []
    for index in range(files):
        folder = root / f"pkg{index % 50}" / f"mod{index % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"f{index}.py"
        path.write_text(f"# file {index}\nVALUE = {index}\n" + "x = 1\n" * 20)
        paths.append(path)
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "index.js").write_text("module.exports = 1\n")
    return paths


def bench_scan(root: Path, store: BlobStore, paths: list[Path], repeat: int, label: str, limit: float) -> None:
    scanner = ProjectScanner(str(root), store, 5 * MB)
    scanner.after(scanner.before())  # the first scan of a session hashes what it has not seen
    found: list[int] = []

    def work(round_: int) -> None:
        state = scanner.before()
        for path in paths[round_ * 3 : round_ * 3 + 3]:  # what the "command" does
            path.write_text(path.read_text() + f"# changed {round_}\n")
        found.append(len(scanner.after(state)))

    cpu_started = _cpu_seconds()
    report(f"bash change detection, {len(paths)} files, {label}", timed(repeat, lambda _: None, work), limit)
    # Wall time follows the machine's load; the CPU spent (ours and git's) per round does much less.
    print(f"{'':<44} cpu per round (this process + git) {(_cpu_seconds() - cpu_started) / repeat * 1000:7.2f} ms")
    assert found == [3] * repeat, found


def _cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def bench_first_scan(base: Path, files: int, repeat: int) -> None:
    """The first `bash` command of a session in a plain folder keeps every file it may change (no limit set by the
    issue; reported so its cost is known): a fresh store each round."""
    root = base / "first"
    build_project(root, files)
    stores: list[BlobStore] = []

    def setup(round_: int) -> None:
        stores.append(BlobStore(base / f"first-store-{round_}"))

    def work(round_: int) -> None:
        ProjectScanner(str(root), stores[round_], 5 * MB).before()

    cpu_started = _cpu_seconds()
    timings = timed(min(repeat, 5), setup, work)
    cpu = (_cpu_seconds() - cpu_started) / len(timings)
    report(f"first bash scan, {files} files, plain", timings, float("inf"))
    store = stores[0]
    kept = sum(path.stat().st_size for _, path in store.digests())
    disk = sum(path.stat().st_blocks * 512 for _, path in store.digests())
    clones = {True: "reflink clones", False: "copies (no reflink here)"}.get(getattr(store, "clones", None), "copies")
    print(
        f"{'':<44} cpu per scan {cpu * 1000:7.0f} ms; kept {kept / MB:.1f} MiB as {clones}, {disk / MB:.1f} MiB on disk"
    )


def bench_rewind(root: Path, store: BlobStore, repeat: int) -> None:
    folder = root / "rewind"
    folder.mkdir()
    originals = {f"rewind/f{i}.txt": f"original {i}\n".encode() * 100 for i in range(100)}
    ops: list[RestoreOp] = []
    for rel, data in originals.items():
        agent = data + b"agent\n"
        ops.append(RestoreOp(rel, store.put(data), content_hash(agent), 0o644))
    journal = Journal(root / "journal.json")

    def setup(_: int) -> None:
        for rel, data in originals.items():
            (root / rel).write_bytes(data + b"agent\n")

    def work(_: int) -> None:
        plan = plan_restore(str(root), store, ops)
        assert not plan.conflicts
        restored = apply_restore(str(root), store, journal, plan)
        assert len(restored) == 100

    report("rewind of a turn that changed 100 files", timed(repeat, setup, work), 500)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--only", choices=["capture", "plain", "git", "rewind", "first"], help="run one measure")
    args = parser.parse_args()
    wanted = {args.only} if args.only else {"capture", "plain", "git", "rewind", "first"}
    with tempfile.TemporaryDirectory(prefix="apex-bench-ckpt-") as temp:
        base = Path(temp).resolve()
        store = BlobStore(base / "blobs")
        small = base / "small"
        small.mkdir()
        if "capture" in wanted:
            bench_capture(small, store, args.repeat)
        if "plain" in wanted:
            plain = base / "plain"
            bench_scan(plain, store, build_project(plain, args.files), args.repeat, "plain", 150)
        if "git" in wanted:
            repo = base / "repo"
            paths = build_project(repo, args.files)
            (repo / ".gitignore").write_text("node_modules/\n")
            for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
                subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", *command], cwd=repo, check=True)
            bench_scan(repo, store, paths, args.repeat, "git", 50)
        if "rewind" in wanted:
            bench_rewind(small, store, args.repeat)
        if "first" in wanted:
            bench_first_scan(base, args.files, args.repeat)


if __name__ == "__main__":
    main()
