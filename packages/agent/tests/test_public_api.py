"""The package root exports what it says and needs nothing above apex_ai."""

import subprocess
import sys

import apex_agent


def test_every_name_in_all_is_importable() -> None:
    for name in apex_agent.__all__:
        assert hasattr(apex_agent, name), name
    assert len(set(apex_agent.__all__)) == len(apex_agent.__all__)


def test_import_loads_no_higher_layer_and_no_sdk() -> None:
    probe = (
        "import sys, apex_agent\n"
        "print(','.join(sorted(m for m in ('apex_coding_agent', 'apex_tui', 'anthropic', 'openai') if m in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == ""
