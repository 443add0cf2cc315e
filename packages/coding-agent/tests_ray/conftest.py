"""The Ray tests reuse the batch tests' helpers (imported by module name: pytest runs with --import-mode=importlib)."""

import sys
from pathlib import Path

_BATCH_TESTS = str(Path(__file__).parent.parent / "tests" / "batch")
if _BATCH_TESTS not in sys.path:
    sys.path.insert(0, _BATCH_TESTS)
