"""A known setting with a value of the wrong JSON type stops the start: one `Error:` line naming the file and the
key, exit 1, the file left byte for byte as it was (the CLI as a subprocess, and the same start-up path in-process
for every known key)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_coding_agent.cli.args import parse_args
from apex_coding_agent.cli.startup import build_runtime_from_args
from apex_coding_agent.core.settings import SETTING_KINDS, SettingsManager, check_setting_types

SAMPLES: dict[str, Any] = {
    "string": "5",
    "boolean": True,
    "integer": 7,
    "fraction": 2.5,
    "object": {"a": 1},
    "array": ["x", 1],
    "string list": ["x"],
}
"""One JSON value of each shape; every key is tried with each sample that is not of its kind."""
MATCHES: dict[str, set[str]] = {
    "string": {"string"},
    "boolean": {"boolean"},
    "integer": {"integer"},
    "number": {"integer", "fraction"},
    "object": {"object"},
    "array": {"array", "string list"},
    "string list": {"string list"},
}
SOURCES = [Path(__file__).resolve().parents[3] / pkg / "src" for pkg in ("coding-agent", "tui")]


def _nest(dotted: str, value: Any) -> dict[str, Any]:
    *parents, last = dotted.split(".")
    data: dict[str, Any] = {last: value}
    for key in reversed(parents):
        data = {key: data}
    return data


@pytest.mark.parametrize(
    ("settings", "key", "expected"),
    [
        ({"runBudget": {"maxTurns": "5"}}, "runBudget.maxTurns", 'must be a whole number, not a string ("5")'),
        ({"sessionDir": 5}, "sessionDir", "must be a string, not a number (5)"),
    ],
)
@pytest.mark.parametrize("scope", ["global", "project"])
def test_wrongly_typed_setting_is_one_error_line_and_exit_1(
    tmp_path: Path, settings: dict[str, Any], key: str, expected: str, scope: str
) -> None:
    work, agent = tmp_path / "work", tmp_path / "agent"
    path = agent / "settings.json" if scope == "global" else work / ".apex-code" / "settings.json"
    path.parent.mkdir(parents=True)
    work.mkdir(exist_ok=True)
    content = (json.dumps(settings, indent=4) + "\n").encode()
    path.write_bytes(content)
    with ScriptedModelServer([{"text": "never sent"}]) as server:
        write_models(agent, server)
        proc = run_cli(["--approve", "--permission-mode", "default", "-p", "hi"], work, agent)
        requests = len(server.requests)
    assert proc.returncode == 1
    assert proc.stderr == f'Error: {path}: "{key}" {expected}\n'
    assert proc.stdout == ""
    assert requests == 0
    assert path.read_bytes() == content


CASES = [
    (dotted, shape)
    for dotted, kind in SETTING_KINDS.items()
    for shape in SAMPLES
    if shape not in MATCHES[kind]
    and not (kind == "array" and shape == "string list")
    # The legacy `skills` object (`{"customDirectories": [...]}`) is migrated to the list at load.
    and not (dotted == "skills" and shape == "object")
]


@pytest.mark.parametrize(("dotted", "shape"), CASES, ids=[f"{d}={s}" for d, s in CASES])
async def test_every_known_key_with_a_wrong_type_fails_the_start_naming_file_and_key(
    tmp_path: Path, dotted: str, shape: str
) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    path = agent / "settings.json"
    content = json.dumps(_nest(dotted, SAMPLES[shape])).encode()
    path.write_bytes(content)
    build = await build_runtime_from_args(
        parse_args(["--permission-mode", "default", "-p", "hi"]), cwd=str(tmp_path), agent_dir=agent, mode="print"
    )
    assert build.runtime is None and build.exit_code == 1
    [line] = build.errors
    assert line.startswith(f'Error: {path}: "{dotted}" must be ')
    assert path.read_bytes() == content


def test_null_means_unset_and_a_setter_keeps_the_wrong_value_in_the_file(tmp_path: Path) -> None:
    """The app's `/reload` and SDK hosts keep running: the wrong key is a warning, its default applies, and a later
    setter rewrites only the key it changes."""
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"sessionDir": None, "runBudget": {"maxTurns": "5"}, "theme": "light"}))
    settings = SettingsManager(path, None)
    assert [str(e) for e in settings.drain_errors()] == [
        f'Warning: (type, global settings) {path}: "runBudget.maxTurns" must be a whole number, not a string ("5"); '
        "using the default"
    ]
    assert settings.get("runBudget") == {} and settings.get("sessionDir") is None
    settings.reload()
    assert settings.drain_errors() == []  # reported once, not on every reload
    settings.set("theme", "dark")
    assert json.loads(path.read_text()) == {"sessionDir": None, "runBudget": {"maxTurns": "5"}, "theme": "dark"}


def test_every_setting_the_code_reads_raw_has_a_declared_type() -> None:
    """Raw reads (`settings.get("key")`) trust the value's type; typed reads (`get_int`, `get_bool`, ...) fall back
    on their own. A key read raw without a declared type would reach its reader unchecked."""
    pattern = re.compile(r"(?:settings(?:_manager)?|global_settings|project_settings)\.get\(\s*\"([A-Za-z.]+)\"")
    read = {key for src in SOURCES for file in src.rglob("*.py") for key in pattern.findall(file.read_text())}
    assert read, "the pattern no longer finds any read"
    assert sorted(read - set(SETTING_KINDS)) == []


@pytest.mark.parametrize(("value", "whole"), [(5, True), (5.0, True), (10**30, True), (2.5, False), (1e20, False)])
def test_whole_numbers_are_the_ones_json_holds_exactly(value: float, whole: bool) -> None:
    cleaned, problems = check_setting_types({"runBudget": {"maxTurns": value}}, "settings.json")
    assert (cleaned == {"runBudget": {"maxTurns": value}}) is whole
    assert problems == ([] if whole else [f'settings.json: "runBudget.maxTurns" must be a whole number, not {value}'])


def test_an_unexpected_failure_is_one_error_line_not_a_traceback(tmp_path: Path) -> None:
    """The top-level guard: whatever start-up trips over ends as one `Error:` line and exit 1."""
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"extensions": ["bad\u0000path"]}))
    proc = run_cli(["--permission-mode", "default", "-p", "hi"], work, agent)
    assert proc.returncode == 1
    [line] = proc.stderr.splitlines()
    assert line.startswith("Error: ") and "Traceback" not in proc.stderr
