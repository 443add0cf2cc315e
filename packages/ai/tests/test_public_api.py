"""The package root exports what it says, and importing it loads no provider SDK."""

import subprocess
import sys

import apex_ai


def test_every_name_in_all_is_importable_and_public_modules_are_covered() -> None:
    for name in apex_ai.__all__:
        assert hasattr(apex_ai, name), name
    assert len(set(apex_ai.__all__)) == len(apex_ai.__all__)


def test_import_loads_no_sdk() -> None:
    probe = (
        "import sys, apex_ai\nprint(','.join(sorted(m for m in ('anthropic', 'openai', 'httpx2') if m in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == ""
