"""The package root exports its SDK names lazily: every name resolves, the root import stays light, and the lazy
table is read from the one declaration of each name."""

import subprocess
import sys
from pathlib import Path

import pytest

import apex_coding_agent
from apex_coding_agent._lazy import declared_exports


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


def test_lazy_exports_are_read_from_the_type_checking_block(tmp_path: Path) -> None:
    source = tmp_path / "pkg.py"
    source.write_text(
        "TYPE_CHECKING = False\n"
        "if TYPE_CHECKING:\n"
        "    from a.b import One as One  # a comment\n"
        "\n"
        "    from a.c import (\n"
        "        Two as Two,\n"
        "        three as three,\n"
        "    )\n"
        "_EXPORTS = {}\n"
        "from x import four as four\n"
    )
    assert declared_exports(str(source)) == {"One": "a.b", "Two": "a.c", "three": "a.c"}


@pytest.mark.parametrize(
    "block",
    [
        "    from a import One as Other\n",  # a renaming alias is not an export of `One`
        "    from a import One\n",  # no redundant alias: mypy would not see a re-export
        "    import a\n",
    ],
)
def test_a_type_checking_block_with_anything_else_is_refused_by_name(tmp_path: Path, block: str) -> None:
    source = tmp_path / "pkg.py"
    source.write_text("if TYPE_CHECKING:\n" + block)
    with pytest.raises(ImportError, match="pkg.py"):
        declared_exports(str(source))


def test_a_module_without_the_block_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "pkg.py"
    source.write_text("X = 1\n")
    with pytest.raises(ImportError, match="no `if TYPE_CHECKING:` block"):
        declared_exports(str(source))
