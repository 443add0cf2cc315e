"""The widgets and theme packages stay independent of the agent layers (STYLE.md §2)."""

import subprocess
import sys


def test_widgets_import_no_agent_layer() -> None:
    code = (
        "import sys, apex_tui.widgets, apex_tui.theme\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'apex_coding_agent', 'apex_agent'})\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""
