"""`apex-code batch TASKS.jsonl --out DIR [...]`: the command line of batch runs (see docs/batch.md)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn, TextIO

USAGE = "apex-code batch TASKS.jsonl --out DIR [options]"
DESCRIPTION = """Run every task of TASKS.jsonl (one JSON object per line) as a headless session in its own copy of
its repository. Per task, DIR/tasks/<id>/ gets the session file, the result envelope, the diff, the setup and
check logs and task.json; DIR/summary.jsonl gets a line per finished task. Rerunning with the same --out skips
finished tasks. Ctrl+C stops the batch (running tasks end as aborted); a second Ctrl+C kills them."""


class _Parser(argparse.ArgumentParser):
    def __init__(self, stderr: TextIO, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]  # argparse's keyword arguments
        self._stderr = stderr

    def error(self, message: str) -> NoReturn:
        self._stderr.write(f"Error: {message}\nUsage: {USAGE}\n")
        raise SystemExit(1)


def _positive(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
        return value

    return parse


def _parser(stderr: TextIO) -> _Parser:
    from apex_ai.thinking import MODEL_THINKING_LEVELS
    from apex_coding_agent.cli.args import PERMISSION_MODES

    parser = _Parser(stderr, prog="apex-code batch", usage=USAGE, description=DESCRIPTION)
    parser.add_argument("tasks", type=Path, help="the task file (JSONL)")
    parser.add_argument("--out", type=Path, required=True, help="the output folder (reuse it to resume)")
    parser.add_argument(
        "--workers", type=_positive(int), default=None, help="tasks at once (default: the number of cores)"
    )
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="run the tasks on Ray: a local runtime, or the cluster at ADDRESS (needs apex-coding-agent[ray])",
    )
    parser.add_argument("--max-cost", type=_positive(float), default=None, metavar="USD", help="stop starting tasks once the batch has spent this much")  # fmt: skip
    parser.add_argument("--time-limit", type=_positive(float), default=None, metavar="SECONDS", help="per-task time limit (setup, run and check)")  # fmt: skip
    parser.add_argument("--model", default=None, help="model of tasks that name none")
    parser.add_argument("--thinking", choices=MODEL_THINKING_LEVELS, default=None, help="thinking level of tasks that name none")  # fmt: skip
    parser.add_argument("--permission-mode", choices=PERMISSION_MODES, default=None, help="permission mode of tasks that name none")  # fmt: skip
    parser.add_argument("--keep-copies", action="store_true", help="keep each task's copy in DIR/work/<id>")
    return parser


def run(argv: Sequence[str], stdout: TextIO, stderr: TextIO) -> int:
    """Entry of the `batch` subcommand; returns the exit code."""
    parser = _parser(stderr)
    if any(arg in ("-h", "--help") for arg in argv):
        stdout.write(parser.format_help())
        return 0
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:
        return int(exc.code or 0)
    from apex_coding_agent.batch.runner import BatchOptions, run_batch
    from apex_coding_agent.batch.tasks import TaskDefaults
    from apex_coding_agent.paths import get_agent_dir

    options = BatchOptions(
        tasks_file=args.tasks,
        out=args.out,
        agent_dir=str(get_agent_dir()),
        workers=args.workers or os.cpu_count() or 1,
        defaults=TaskDefaults(model=args.model, thinking=args.thinking, permission_mode=args.permission_mode),
        ray=args.ray is not None,
        ray_address=args.ray or None,
        max_cost=args.max_cost,
        time_limit=args.time_limit,
        keep_copies=args.keep_copies,
    )
    return run_batch(options, stderr)


__all__ = ["run"]
