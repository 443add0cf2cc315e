"""The package root exports its SDK names lazily: every name resolves, and the root import stays light."""

import subprocess
import sys

import apex_coding_agent


def test_every_exported_name_resolves() -> None:
    for name in apex_coding_agent.__all__:
        assert getattr(apex_coding_agent, name) is not None, name


def test_root_import_loads_nothing_heavy() -> None:
    probe = (
        "import sys, apex_coding_agent\n"
        "print(','.join(sorted(m for m in ('pydantic', 'apex_ai', 'anthropic', 'openai') if m in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == ""


def test_import_never_reaches_the_terminal_app() -> None:
    probe = "import sys, apex_coding_agent\n[getattr(apex_coding_agent, n) for n in apex_coding_agent.__all__]\nprint('apex_tui' in sys.modules, 'urwid' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False False"


def test_all_matches_the_lazy_table() -> None:
    assert sorted(apex_coding_agent.__all__) == sorted([*apex_coding_agent._EXPORTS, "__version__"])
