"""Interactive startup from flags: scoped models from `--models` / `enabledModels`, `-r` (tui.md §13)."""

import json
from pathlib import Path

from app_helpers import AppHarness

from apex_coding_agent.cli_args import parse_args
from apex_tui.app._startup import build_startup, scoped_models


def test_scoped_model_patterns_exact_glob_level_and_unknown(tmp_path: Path) -> None:
    runtime = AppHarness(tmp_path).model_runtime
    warnings: list[str] = []
    found = scoped_models(runtime, ["faux/faux-think:high", "faux-*", "nothing-here"], warnings.append)
    assert [(s.model.id, s.thinking_level) for s in found] == [("faux-think", "high"), ("faux-1", None)]
    assert warnings == ['No models match pattern "nothing-here"']


async def test_enabled_models_setting_scopes_the_session_and_resume_flag_asks_for_the_picker(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    (harness.agent_dir / "settings.json").write_text(json.dumps({"enabledModels": ["faux/faux-1"]}))
    args = parse_args(["-r", "--model", "faux/faux-think", "--session-dir", str(tmp_path / "sessions")])
    startup = await build_startup(
        args, cwd=str(harness.cwd), agent_dir=harness.agent_dir, model_runtime=harness.model_runtime
    )
    try:
        session = startup.runtime.session
        assert [s.model.id for s in session.scoped_models] == ["faux-1"]
        assert session.model is not None and session.model.id == "faux-think"
        assert startup.resume_picker
        assert session.permission_gate is not None
    finally:
        await startup.runtime.dispose()
