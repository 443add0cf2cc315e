"""The `apex-code` command.

`--version` and `--help` must answer without importing pydantic or any provider SDK: the module
imports only the standard library at the top and loads the rest once a real run needs it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from apex_coding_agent import __version__

INTERACTIVE_ENTRY_POINT_GROUP = "apex_code.interactive"

HELP = """\
apex-code - a minimal terminal coding agent

Usage:
  apex-code [options] [@files...] [messages...]

Options:
  -p, --print            Run the prompt once, print the answer and exit
      --mode MODE        Output mode: text (default), json or rpc
  -h, --help             Show this help and exit
  -v, --version          Show the version and exit

Without -p or --mode, apex-code starts the interactive terminal app (package apex-tui).
"""


def _run_interactive(argv: Sequence[str]) -> int:
    # Imported here: entry point discovery costs a few milliseconds we do not spend on --version.
    from importlib.metadata import entry_points

    found = list(entry_points(group=INTERACTIVE_ENTRY_POINT_GROUP))
    if not found:
        sys.stderr.write(
            "apex-code: the interactive app is not installed.\n"
            "Install it with `pip install apex-tui`, or run headless with -p / --mode json / --mode rpc.\n"
        )
        return 1
    run = found[0].load()
    result = run(argv)
    return int(result) if result is not None else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `apex-code` console script; returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--version" in args or "-v" in args:
        sys.stdout.write(f"{__version__}\n")
        return 0
    if "--help" in args or "-h" in args:
        sys.stdout.write(HELP)
        return 0
    if "-p" in args or "--print" in args or "--mode" in args:
        sys.stderr.write("apex-code: headless modes are not implemented yet.\n")
        return 1
    return _run_interactive(args)


if __name__ == "__main__":  # pragma: no cover - `python -m apex_coding_agent.cli`
    sys.exit(main())
