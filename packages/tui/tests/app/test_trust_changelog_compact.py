"""`/trust`, `/changelog` and a real `/compact` through the app (tui.md §8)."""

import asyncio
import json
from pathlib import Path

from app_helpers import AppHarness

import apex_coding_agent
import apex_tui
from apex_ai.options import StreamOptions
from apex_ai.providers.faux import FauxState, faux_assistant_message
from apex_ai.types import AssistantMessage, Context, Model
from apex_coding_agent.core.trust import TrustStore, canonical_project_path, resolve_project_trusted
from apex_coding_agent.session import CompactionEntry
from apex_tui.app._changelog import find_changelog
from apex_tui.app._picker import Picker


async def test_trust_and_changelog_are_offered_by_autocomplete(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    for name in ("trust", "changelog"):
        app.editor.set_text("")
        harness.type("/" + name)
        assert f"/{name}" in [s.label for s in app.editor.suggestions]


# ---------------------------------------------------------------------------------------------------- /trust


def flat(harness: AppHarness) -> str:
    """The frame as one line: notices with long tmp paths wrap."""
    return " ".join(row.strip() for row in harness.screen() if row.strip())


async def test_trust_saves_the_project_and_the_next_start_uses_it(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    (harness.cwd / ".apex-code").mkdir()
    (harness.cwd / ".apex-code" / "settings.json").write_text("{}")
    store = TrustStore(harness.agent_dir / "trust.json")
    project = canonical_project_path(harness.cwd)
    # Nothing saved yet: the next start would ask (here: no UI, so untrusted).
    assert resolve_project_trusted(project, store).reason == "no-ui"

    harness.type("/trust")
    harness.press("enter")
    assert isinstance(app.slot.original_widget, Picker)
    screen = harness.text()
    assert "Trust project folder?" in screen and "Saved decision: none" in screen
    assert "→ Trust" in screen and "Do not trust" in screen and "(this session only)" not in screen
    harness.press("enter")

    assert app.slot.original_widget is app.editor
    assert json.loads((harness.agent_dir / "trust.json").read_text()) == {str(project): True}
    assert f"Project trusted: {project} (applies next start)" in flat(harness)
    assert resolve_project_trusted(project, store).trusted is True
    assert resolve_project_trusted(project, store).reason == "saved"


async def test_trust_parent_then_do_not_trust_and_escape_changes_nothing(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    trust_file = harness.agent_dir / "trust.json"
    project = canonical_project_path(harness.cwd)

    harness.type("/trust")
    harness.press("enter")
    harness.press("down", "enter")
    assert json.loads(trust_file.read_text()) == {str(project.parent): True, str(project): None}
    assert f"Parent folder trusted: {project.parent} (applies next start)" in flat(harness)

    harness.type("/trust")
    harness.press("enter")
    screen = harness.text()
    assert "Saved decision: trusted (from" in screen
    assert "→ Trust parent folder" in screen  # the saved choice is preselected
    harness.press("down", "enter")
    assert json.loads(trust_file.read_text()) == {str(project.parent): True, str(project): False}
    assert f"Project not trusted: {project} (applies next start)" in flat(harness)

    before = trust_file.read_text()
    harness.type("/trust")
    harness.press("enter")
    assert "Saved decision: not trusted" in harness.text()
    assert "→ Do not trust" in harness.text()
    harness.press("esc")
    assert app.slot.original_widget is app.editor
    assert trust_file.read_text() == before


async def test_trust_with_a_broken_trust_file_reports_it_without_a_picker(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    (harness.agent_dir / "trust.json").write_text("[1, 2]")
    harness.type("/trust")
    harness.press("enter")
    assert app.slot.original_widget is app.editor
    assert "expected an object of directory -> true/false/null" in flat(harness)
    assert (harness.agent_dir / "trust.json").read_text() == "[1, 2]"


# ------------------------------------------------------------------------------------------------ /changelog


def _project_changelog(module_file: str | None) -> str:
    assert module_file is not None
    return (Path(module_file).parents[2] / "CHANGELOG.md").read_text(encoding="utf-8")


async def test_changelog_shows_both_packages_as_markdown_blocks(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    harness.type("/changelog")
    harness.press("enter")
    assert app.editor.text == ""
    # A tall frame, so both changelogs fit whatever their length.
    screen = "\n".join(row.decode("utf-8") for row in app.root.render((120, 400), focus=True).text)
    agent_at = screen.index("[changelog: apex-coding-agent]")
    tui_at = screen.index("[changelog: apex-tui]")
    assert agent_at < tui_at
    # The headings of the real files, rendered as markdown (no `#` left).
    for source in (_project_changelog(apex_coding_agent.__file__), _project_changelog(apex_tui.__file__)):
        heading = source.splitlines()[0]
        assert heading.startswith("# ")
        assert heading[2:] in screen
        assert heading not in screen


def _wheel_install(site: Path, *, extra_files: dict[str, str] | None = None) -> None:
    """What `pip install apex_demo-1.2.3-py3-none-any.whl` leaves: the package and its dist-info."""
    package = site / "apex_demo"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    info = site / "apex_demo-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.4\nName: apex-demo\nVersion: 1.2.3\n")
    files = {"apex_demo/__init__.py": "", **(extra_files or {})}
    for name, text in (extra_files or {}).items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text)
    record = [f"{name},," for name in files] + [
        "apex_demo-1.2.3.dist-info/METADATA,,",
        "apex_demo-1.2.3.dist-info/RECORD,,",
    ]
    (info / "RECORD").write_text("\n".join(record) + "\n")


def test_a_wheel_without_a_changelog_gets_a_notice(tmp_path: Path) -> None:
    _wheel_install(tmp_path)
    changelog = find_changelog("apex-demo", "apex_demo", path=[str(tmp_path)])
    assert changelog.version == "1.2.3" and changelog.text is None
    assert changelog.markdown.startswith("No changelog ships with apex-demo 1.2.3:")


def test_a_changelog_listed_in_the_wheel_record_is_read(tmp_path: Path) -> None:
    _wheel_install(tmp_path, extra_files={"apex_demo/CHANGELOG.md": "# Demo history\n\n- one\n"})
    changelog = find_changelog("apex-demo", "apex_demo", path=[str(tmp_path)])
    assert changelog.path == tmp_path / "apex_demo" / "CHANGELOG.md"
    assert changelog.markdown == "# Demo history\n\n- one\n"


def test_an_editable_install_reads_the_project_folder(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "CHANGELOG.md").write_text("# Editable history\n")
    site = tmp_path / "site"
    _wheel_install(site)
    url = {"url": project.as_uri(), "dir_info": {"editable": True}}
    (site / "apex_demo-1.2.3.dist-info" / "direct_url.json").write_text(json.dumps(url))
    changelog = find_changelog("apex-demo", "apex_demo", path=[str(site)])
    assert changelog.path == project / "CHANGELOG.md" and changelog.text == "# Editable history\n"


def test_a_package_that_is_not_installed_is_named(tmp_path: Path) -> None:
    changelog = find_changelog("apex-demo", "apex_demo", path=[str(tmp_path)])
    assert changelog.version is None
    assert changelog.markdown == "apex-demo is not installed, so there is no changelog to show."


# -------------------------------------------------------------------------------------------------- /compact


async def _two_long_turns(harness: AppHarness) -> None:
    for text in ("one", "two"):
        harness.type(text)
        harness.press("enter")
        await harness.settle()


async def test_compact_runs_with_a_status_line_and_leaves_a_compaction_block(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    summarizing = asyncio.Event()
    release = asyncio.Event()

    async def summary(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        summarizing.set()
        await release.wait()
        return faux_assistant_message("## Goal\nKeep the numbers one and two.")

    harness.script(faux_assistant_message("first answer " * 40), faux_assistant_message("second answer " * 40), summary)
    app = await harness.start(settings={"compaction": {"keepRecentTokens": 200}})
    await _two_long_turns(harness)

    harness.type("/compact")
    harness.press("enter")
    await summarizing.wait()
    assert app.session.is_compacting
    assert "Compacting context..." in harness.text()
    release.set()
    await harness.until("Compacted context")
    await harness.settle()

    screen = harness.text()
    assert "Compacting context..." not in screen
    assert "[compaction] Compacted from" in screen and "tokens" in screen
    entries = [e for e in app.session.session_manager.get_entries() if isinstance(e, CompactionEntry)]
    assert len(entries) == 1 and entries[0].trigger == "manual"
    assert "## Goal\nKeep the numbers one and two." in entries[0].summary
    # The summary itself shows at detail `all`.
    assert "Keep the numbers one and two." not in screen
    while app.ctx.detail.value != "all":
        harness.press("ctrl o")
    assert "Keep the numbers one and two." in harness.text()


async def test_escape_cancels_a_running_compaction(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    summarizing = asyncio.Event()

    async def hanging(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        summarizing.set()
        assert options.signal is not None
        while not options.signal.aborted:
            await asyncio.sleep(0.001)
        return faux_assistant_message("never used")

    harness.script(faux_assistant_message("first answer " * 40), faux_assistant_message("second answer " * 40), hanging)
    app = await harness.start(settings={"compaction": {"keepRecentTokens": 200}})
    await _two_long_turns(harness)
    roles = [m.role for m in app.session.messages]

    harness.type("/compact")
    harness.press("enter")
    await summarizing.wait()
    assert "Compacting context..." in harness.text()
    harness.press("esc")
    await harness.until("Compaction cancelled")
    await harness.settle()

    screen = harness.text()
    assert screen.count("Compaction cancelled") == 1
    assert "Compacting context..." not in screen and "[compaction]" not in screen
    assert not app.session.is_compacting
    assert [e for e in app.session.session_manager.get_entries() if isinstance(e, CompactionEntry)] == []
    assert [m.role for m in app.session.messages] == roles
    assert "second answer" in screen
