"""The shared startup path `build_runtime_from_args` (modes.md §1, settings-and-trust.md §6) and its CLI wiring."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import json_lines, run_cli

from apex_ai.models import ModelRegistry
from apex_coding_agent.cli.args import parse_args
from apex_coding_agent.cli.startup import build_runtime_from_args, no_model_error, resolve_scoped_models
from apex_coding_agent.core.auth_storage import AuthStorage
from apex_coding_agent.core.model_runtime import ModelRuntime

FLAG_EXTENSION = """
def extension(pi):
    pi.register_flag("shout", type="boolean", description="Greet loudly")
"""


def _dirs(tmp_path: Path, models: tuple[str, ...] = ("m-a", "m-b", "m-c")) -> tuple[Path, Path]:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    agent.mkdir()
    provider = {
        "baseUrl": "http://127.0.0.1:9/v1",
        "api": "openai-completions",
        "apiKey": "test-key",
        "models": [{"id": m} for m in models],
    }
    (agent / "models.json").write_text(json.dumps({"providers": {"local": provider}}))
    return work, agent


def _settings(agent: Path, **values: object) -> None:
    (agent / "settings.json").write_text(json.dumps(values))


def test_scoped_patterns_exact_glob_thinking_suffix_and_unknown(tmp_path: Path) -> None:
    _, agent = _dirs(tmp_path)
    warnings: list[str] = []
    found = resolve_scoped_models(
        ModelRuntime.create(str(agent)), ["local/m-c:high", "local/m-*", "nope-*"], warnings.append
    )
    assert [(s.model.id, s.thinking_level) for s in found] == [("m-c", "high"), ("m-a", None), ("m-b", None)]
    assert warnings == ['No models match pattern "nope-*"']


async def test_enabled_models_setting_scopes_a_headless_runtime_and_models_flag_wins(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    _settings(agent, enabledModels=["local/m-b", "missing-model"])
    build = await build_runtime_from_args(
        parse_args(["--model", "local/m-a", "--no-session"]), cwd=str(work), agent_dir=agent, mode="print"
    )
    assert build.runtime is not None and build.exit_code == 0 and build.errors == []
    try:
        assert [s.model.id for s in build.runtime.session.scoped_models] == ["m-b"]
        assert 'Warning: No models match pattern "missing-model"' in build.warnings
    finally:
        await build.runtime.dispose()
    flagged = await build_runtime_from_args(
        parse_args(["--model", "local/m-a", "--no-session", "--models", "local/m-c"]),
        cwd=str(work),
        agent_dir=agent,
        mode="json",
    )
    assert flagged.runtime is not None
    try:
        assert [s.model.id for s in flagged.runtime.session.scoped_models] == ["m-c"]
    finally:
        await flagged.runtime.dispose()


async def test_help_lists_extension_flags_and_list_models_returns_text_without_a_runtime(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    (work / "flag_ext.py").write_text(FLAG_EXTENSION)
    shown = await build_runtime_from_args(
        parse_args(["--help", "-e", "flag_ext.py"]), cwd=str(work), agent_dir=agent, mode="print"
    )
    assert shown.runtime is None and shown.exit_code == 0
    assert "Extension flags:" in shown.output and "--shout" in shown.output and "Greet loudly" in shown.output
    listed = await build_runtime_from_args(
        parse_args(["--list-models", "m-b"]), cwd=str(work), agent_dir=agent, mode="print"
    )
    assert listed.runtime is None and listed.exit_code == 0
    assert "m-b" in listed.output and "m-a" not in listed.output


def _no_models() -> ModelRuntime:
    """No provider at all: what a user without keys and without models.json has."""
    return ModelRuntime(None, AuthStorage.in_memory(), registry=ModelRegistry(load_catalog=False))


async def test_missing_model_is_an_error_headless_but_not_when_the_caller_says_so(tmp_path: Path) -> None:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    agent.mkdir()
    args = parse_args(["--no-session"])
    failed = await build_runtime_from_args(args, cwd=str(work), agent_dir=agent, mode="rpc", model_runtime=_no_models())
    assert failed.runtime is None and failed.exit_code == 1
    assert failed.errors == [no_model_error(agent)] and str(agent / "models.json") in failed.errors[0]
    bare = await build_runtime_from_args(
        args, cwd=str(work), agent_dir=agent, mode="tui", no_model_is_error=False, model_runtime=_no_models()
    )
    assert bare.runtime is not None and bare.errors == [] and bare.exit_code == 0
    try:
        assert bare.runtime.session.model is None
    finally:
        await bare.runtime.dispose()


async def test_bad_model_and_bad_session_flags_are_errors(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    model = await build_runtime_from_args(
        parse_args(["--provider", "nobody", "--model", "x"]), cwd=str(work), agent_dir=agent, mode="print"
    )
    assert model.runtime is None and model.exit_code == 1 and model.errors[0].startswith("Error: ")
    resume = await build_runtime_from_args(parse_args(["-r"]), cwd=str(work), agent_dir=agent, mode="print")
    assert resume.runtime is None and resume.exit_code == 1
    assert resume.errors == ["--resume opens the session picker, which needs the interactive app"]


async def test_trust_prompt_is_asked_for_a_configured_project_and_its_settings_then_apply(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    (work / ".apex-code").mkdir()
    (work / ".apex-code" / "settings.json").write_text(json.dumps({"enabledModels": ["local/m-c"]}))
    asked: list[Path] = []

    def prompt(root: Path) -> str:
        asked.append(root)
        return "trust_session"

    args = parse_args(["--model", "local/m-a", "--no-session"])
    build = await build_runtime_from_args(
        args,
        cwd=str(work),
        agent_dir=agent,
        mode="tui",
        trust_prompt=prompt,  # type: ignore[arg-type]  # returns one of the TrustChoice literals
    )
    assert build.runtime is not None and build.project_trusted and asked == [work.resolve()]
    try:
        assert [s.model.id for s in build.runtime.session.scoped_models] == ["m-c"]
    finally:
        await build.runtime.dispose()
    headless = await build_runtime_from_args(args, cwd=str(work), agent_dir=agent, mode="print")
    assert headless.runtime is not None and not headless.project_trusted
    try:
        assert headless.runtime.session.scoped_models == []
    finally:
        await headless.runtime.dispose()


def test_rpc_mode_cycles_through_the_enabled_models_setting(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    _settings(agent, enabledModels=["local/m-a", "local/m-c"])
    commands = "".join(json.dumps({"type": "cycle_model", "id": str(i)}) + "\n" for i in (1, 2))
    result = run_cli(
        ["--mode", "rpc", "--permission-mode", "default", "--no-session", "--model", "local/m-a"],
        work,
        agent,
        stdin=commands,
    )
    assert result.returncode == 0, result.stderr
    replies = {r["id"]: r for r in json_lines(result.stdout) if r.get("type") == "response"}
    assert replies["1"]["data"]["model"]["id"] == "m-c" and replies["1"]["data"]["isScoped"] is True
    assert replies["2"]["data"]["model"]["id"] == "m-a"
