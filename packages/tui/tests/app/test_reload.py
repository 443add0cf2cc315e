"""`/reload` in the app (tui.md §8, resources.md §5): extension files edited on disk are imported again, their new
commands show in `/` autocomplete, and a broken edit is reported while the app keeps running."""

from __future__ import annotations

from pathlib import Path

from app_helpers import AppHarness

from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.runtime import AgentSessionRuntime, create_agent_session
from apex_coding_agent.runtime.extension_startup import load_startup_extensions
from apex_coding_agent.session import SessionManager
from apex_tui.app import InteractiveApp
from apex_tui.keybindings import load_keybindings

RELOADED = "Reloaded keybindings, extensions, skills, prompts, themes, and context files"


def write_extension(path: Path, *commands: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["def extension(pi):"]
    lines += [
        f"    pi.register_command({name!r}, lambda args, ctx: None, description='{name} things')" for name in commands
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


async def start_with_file_extensions(harness: AppHarness) -> InteractiveApp:
    """The app over a runtime whose extensions were discovered in `<agentDir>/extensions`, as the CLI does."""
    settings = SettingsManager.in_memory({})
    startup = await load_startup_extensions(
        cwd=str(harness.cwd), agent_dir=str(harness.agent_dir), settings=settings, mode="tui"
    )
    assert startup.errors == []
    result = await create_agent_session(
        cwd=str(harness.cwd),
        agent_dir=str(harness.agent_dir),
        model=harness.faux.model("faux-1"),
        session_manager=SessionManager.in_memory(str(harness.cwd)),
        settings_manager=settings,
        model_runtime=harness.model_runtime,
        permission_gate=PermissionGate(harness.cwd, flag_mode="bypassPermissions"),
        extension_runner=startup.runner,
    )
    harness.app = InteractiveApp(
        AgentSessionRuntime(result),
        keymap_loader=lambda: load_keybindings(harness.agent_dir),
        cwd=str(harness.cwd),
        agent_dir=harness.agent_dir,
        clock=harness.clock,
        version="0.0.test",
    )
    await harness.settle()
    return harness.app


def suggestions(harness: AppHarness, prefix: str) -> list[str]:
    app = harness.running
    app.editor.set_text("")
    harness.type(prefix)
    labels = [s.label for s in app.editor.suggestions]
    app.editor.set_text("")
    return labels


async def test_reload_imports_the_edited_extension_and_autocomplete_offers_its_new_command(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    path = harness.agent_dir / "extensions" / "tools.py"
    write_extension(path, "hello")
    await start_with_file_extensions(harness)
    assert "/hello" in suggestions(harness, "/he")
    assert "/deploy" not in suggestions(harness, "/de")

    write_extension(path, "deploy")
    harness.type("/reload")
    harness.press("enter")
    await harness.until(RELOADED)

    assert "/deploy" in suggestions(harness, "/de")
    assert "/hello" not in suggestions(harness, "/he")
    assert "Error" not in harness.text()


async def test_reload_reports_a_broken_extension_and_the_app_keeps_running(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    path = harness.agent_dir / "extensions" / "tools.py"
    write_extension(path, "hello")
    app = await start_with_file_extensions(harness)

    path.write_text("def extension(pi):\n    raise RuntimeError('boom on reload')\n", encoding="utf-8")
    harness.type("/reload")
    harness.press("enter")
    await harness.until(RELOADED)

    assert "RuntimeError: boom on reload" in " ".join(harness.text().split())
    runner = app.runner
    assert runner is not None and runner.extensions == []
    last = runner.errors[-1]
    assert (last.extension_path, last.event) == (str(path), "load")
    assert last.error.startswith(f'Failed to load extension "{path}": RuntimeError: boom on reload (at {path}:2)')
    assert "/hello" not in suggestions(harness, "/he")
    assert not app.exiting
