"""CLI tests import their helpers module by name (pytest runs with --import-mode=importlib)."""

import sys
from pathlib import Path

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


def pytest_terminal_summary(terminalreporter: object) -> None:
    """A skipped batch test says why in every run, not only with `-rs`: a skip is never silent."""
    for report in terminalreporter.stats.get("skipped", []):  # type: ignore[attr-defined]  # pytest's reporter
        if "tests/batch/" in report.nodeid.replace("\\", "/"):
            terminalreporter.write_line(f"SKIPPED {report.nodeid}: {report.longrepr[2]}")  # type: ignore[attr-defined]
