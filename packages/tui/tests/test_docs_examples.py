"""The docs' examples marked `package=tui` run here (this venv has apex_tui), and the app's reference tables in
docs/ match the code. The runner is the coding agent's docs test, loaded from its file."""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _runner() -> Any:  # Any: a module loaded from a path has no static type
    path = ROOT / "packages" / "coding-agent" / "tests" / "test_docs_examples.py"
    spec = importlib.util.spec_from_file_location("apex_docs_examples_runner", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


runner = _runner()
_OURS = runner.examples("tui")


@pytest.fixture(scope="module")
def scripted_server() -> Iterator[Any]:
    with runner.ScriptedModelServer([{"text": runner.SCRIPTED_REPLY, "repeat": True}]) as server:
        yield server


@pytest.mark.slow
@pytest.mark.parametrize("example", _OURS, ids=[e.name for e in _OURS])
def test_example_runs(example: Any, tmp_path: Path, scripted_server: Any) -> None:
    runner.run_example(example, tmp_path, scripted_server)


def test_keybindings_doc_holds_the_generated_table() -> None:
    from apex_tui.keybindings import render_keybindings_reference

    text = (ROOT / "docs" / "keybindings.md").read_text(encoding="utf-8")
    generated = text.split("<!-- generated: keybindings -->\n", 1)[1].split("<!-- end generated -->", 1)[0]
    assert generated.strip() == render_keybindings_reference().strip(), "regenerate the table in docs/keybindings.md"


def test_themes_doc_lists_every_token() -> None:
    from apex_tui.theme import ALL_TOKENS

    text = (ROOT / "docs" / "themes.md").read_text(encoding="utf-8")
    section = text.split("## Tokens\n", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^\| `([^`]+)`", section, re.MULTILINE) == list(ALL_TOKENS)
