"""Interactive startup over the CLI's shared path: scoped models, `-r`, trust selector, extensions (tui.md §13)."""

import json
from pathlib import Path

import pytest
from app_helpers import AppHarness
from urwid.testing import ScriptedScreen

from apex_ai.types import AssistantMessage, TextContent, Usage, UserMessage
from apex_coding_agent.cli.args import parse_args
from apex_coding_agent.cli.startup import resolve_scoped_models
from apex_coding_agent.session import SessionManager
from apex_tui.app._run import ask_trust
from apex_tui.app._startup import StartupError, build_startup
from apex_tui.keybindings import KeybindingManager

RECORDER = """
import json, os
from pathlib import Path

def extension(pi):
    @pi.register_command("greet", description="Say hello")
    async def greet(args, ctx):
        return None

    @pi.on("session_start")
    def start(event, ctx):
        Path(os.environ["STARTUP_LOG"]).write_text(json.dumps({"reason": event.reason, "mode": ctx.mode}))
"""
BROKEN = """
def extension(pi):
    @pi.on("session_start")
    def start(event, ctx):
        raise RuntimeError("start handler broke")
"""


def test_scoped_model_patterns_exact_glob_level_and_unknown(tmp_path: Path) -> None:
    runtime = AppHarness(tmp_path).model_runtime
    warnings: list[str] = []
    found = resolve_scoped_models(runtime, ["faux/faux-think:high", "faux-*", "nothing-here"], warnings.append)
    assert [(s.model.id, s.thinking_level) for s in found] == [("faux-think", "high"), ("faux-1", None)]
    assert warnings == ['No models match pattern "nothing-here"']


async def test_enabled_models_setting_scopes_the_session_and_resume_flag_asks_for_the_picker(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    (harness.agent_dir / "settings.json").write_text(json.dumps({"enabledModels": ["faux/faux-1", "nothing-here"]}))
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
        # Shown as transcript warnings, without the CLI's `Warning: ` prefix.
        assert 'No models match pattern "nothing-here"' in startup.warnings
    finally:
        await startup.runtime.dispose()


async def test_trust_selector_then_project_settings_extensions_and_the_responder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness = AppHarness(tmp_path)
    config = harness.cwd / ".apex-code"
    (config / "extensions").mkdir(parents=True)
    (config / "settings.json").write_text(json.dumps({"enabledModels": ["faux/faux-think"]}))
    (config / "extensions" / "recorder.py").write_text(RECORDER)
    (config / "extensions" / "broken.py").write_text(BROKEN)
    log = tmp_path / "startup.json"
    monkeypatch.setenv("STARTUP_LOG", str(log))
    asked: list[Path] = []

    def prompt(root: Path) -> str:
        asked.append(root)
        screen = ScriptedScreen(size=(100, 30), inputs=[["down", "down", "enter"]])  # "Trust (this session only)"
        answer = ask_trust(screen, KeybindingManager(), root)
        assert answer is not None
        return answer

    async def responder(tool: str, params: object, reason: str | None) -> str:
        return "deny"

    startup = await build_startup(
        parse_args(["--model", "faux/faux-1", "--no-session"]),
        cwd=str(harness.cwd),
        agent_dir=harness.agent_dir,
        trust_prompt=prompt,  # type: ignore[arg-type]  # answers one of the TrustChoice literals
        model_runtime=harness.model_runtime,
        responder=responder,  # type: ignore[arg-type]  # answers a ResponderAnswer literal
    )
    try:
        session = startup.runtime.session
        assert asked == [harness.cwd.resolve()]
        assert not (harness.agent_dir / "trust.json").exists()  # a session-only answer is not saved
        assert [s.model.id for s in session.scoped_models] == ["faux-think"]
        runner = startup.runtime.extension_runner
        assert runner is not None and runner.get_command("greet") is not None
        assert not log.exists()  # loaded, not started: the app starts them once its UI is bound
        await startup.runtime.start_extensions()
        assert json.loads(log.read_text()) == {"reason": "startup", "mode": "tui"}
        assert [(Path(e.extension_path).name, e.error) for e in runner.errors] == [("broken.py", "start handler broke")]
        assert session.permission_gate is not None and session.permission_gate.responder is responder
    finally:
        await startup.runtime.dispose()


async def test_startup_errors_carry_every_message(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    (harness.agent_dir / "settings.json").write_text(json.dumps({"enabledModels": ["nothing-here"]}))
    with pytest.raises(StartupError) as caught:
        await build_startup(
            parse_args(["--session", "no-such-session", "--session-dir", str(tmp_path / "sessions")]),
            cwd=str(harness.cwd),
            agent_dir=harness.agent_dir,
            model_runtime=harness.model_runtime,
        )
    lines = str(caught.value).splitlines()
    assert lines[0] == 'Warning: No models match pattern "nothing-here"'
    assert "no-such-session" in lines[-1]


async def test_the_app_startup_defers_the_context_messages_of_the_session_it_opens(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    manager = SessionManager.create(str(harness.cwd), tmp_path / "sessions")
    for n in range(3):
        manager.append_message(UserMessage(content=f"question {n}", timestamp=n))
        manager.append_message(
            AssistantMessage(
                content=[TextContent(text=f"answer {n}")],
                api="faux",
                provider="faux",
                model="faux-1",
                usage=Usage(),
                stop_reason="stop",
                timestamp=n,
            )
        )
    path = manager.session_file
    manager.close()
    assert path is not None
    startup = await build_startup(
        parse_args(["--session", str(path)]),
        cwd=str(harness.cwd),
        agent_dir=harness.agent_dir,
        model_runtime=harness.model_runtime,
    )
    try:
        session = startup.runtime.session
        assert session.deferred_messages is not None  # nothing projected yet: the app shows the newest first
        assert [m.role for m in session.messages] == ["user", "assistant"] * 3  # complete on first real use
        assert session.deferred_messages is None
    finally:
        await startup.runtime.dispose()
