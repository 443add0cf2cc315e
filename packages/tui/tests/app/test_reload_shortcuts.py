"""Extension shortcuts across `/reload` (keybindings.md §9, resources.md §5): a reloaded extension that keeps its key
but changes the handler gets the new handler; the table is rebuilt only when a shortcut object or the keymap changes."""

from __future__ import annotations

from pathlib import Path

from app_helpers import AppHarness

from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.extensions.types import RegisteredShortcut
from apex_coding_agent.runtime import AgentSessionRuntime, create_agent_session
from apex_coding_agent.runtime.extension_startup import load_startup_extensions
from apex_coding_agent.session import SessionManager
from apex_tui.app import InteractiveApp
from apex_tui.app._extension_ui import ShortcutTable
from apex_tui.keybindings import KeybindingManager, load_keybindings

RELOADED = "Reloaded keybindings, extensions, skills, prompts, themes, and context files"


def write_extension(path: Path, word: str) -> None:
    """An extension whose alt+k shortcut appends `word` to `presses.log` beside it; `/again` is `ctx.reload()`
    (a reload that keeps the app's keymap object, unlike `/reload`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "from pathlib import Path\n\n\n"
        "def extension(pi):\n"
        "    def press(ctx):\n"
        "        with open(Path(__file__).parent / 'presses.log', 'a', encoding='utf-8') as log:\n"
        f"            log.write({word!r} + '\\n')\n\n"
        "    pi.register_shortcut('alt+k', press, description='log a word')\n\n"
        "    async def again(args, ctx):\n"
        "        await ctx.reload()\n"
        "        ctx.ui.notify('reloaded by the extension')\n\n"
        "    pi.register_command('again', again, description='reload')\n",
        encoding="utf-8",
    )


async def start_with_file_extensions(harness: AppHarness) -> InteractiveApp:
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


async def test_a_shortcut_kept_across_a_reload_runs_the_new_handler(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    path = harness.agent_dir / "extensions" / "words.py"
    presses = path.parent / "presses.log"
    write_extension(path, "before")
    await start_with_file_extensions(harness)
    harness.press("meta k")
    assert presses.read_text(encoding="utf-8").splitlines() == ["before"]

    write_extension(path, "after")
    harness.type("/again")
    harness.press("enter")
    await harness.until("reloaded by the extension")
    harness.press("meta k")
    assert presses.read_text(encoding="utf-8").splitlines() == ["before", "after"]

    write_extension(path, "last")
    harness.type("/reload")
    harness.press("enter")
    await harness.until(RELOADED)
    harness.press("meta k")
    assert presses.read_text(encoding="utf-8").splitlines() == ["before", "after", "last"]


def _shortcut(key: str, word: str, log: list[str]) -> RegisteredShortcut:
    return RegisteredShortcut(key=key, handler=lambda ctx: log.append(word), extension_path="/ext/words.py")


def test_the_table_follows_new_shortcut_objects_for_the_same_key() -> None:
    log: list[str] = []
    manager = KeybindingManager()
    table = ShortcutTable()
    first = _shortcut("alt+k", "one", log)
    assert table.refresh(manager, [first]) == []
    assert table.by_key["meta k"] is first

    # The same objects: nothing is rebuilt (the mapping stays the very same dict).
    built = table.by_key
    table.refresh(manager, [first])
    assert table.by_key is built

    second = _shortcut("alt+k", "two", log)
    table.refresh(manager, [second])
    table.by_key["meta k"].handler(None)
    assert table.by_key["meta k"] is second and log == ["two"]


def test_a_new_keymap_rebuilds_and_warnings_are_reported_once() -> None:
    table = ShortcutTable()
    shortcuts = [_shortcut("ctrl+c", "x", []), _shortcut("alt+k", "y", [])]
    first = table.refresh(KeybindingManager(), shortcuts)
    assert len(first) == 1 and "ctrl+c" in first[0] and list(table.by_key) == ["meta k"]
    built = table.by_key
    # The same shortcut objects under another keymap object: rebuilt, and the warning is not reported again.
    assert table.refresh(KeybindingManager(), shortcuts) == []
    assert table.by_key is not built and list(table.by_key) == ["meta k"]
