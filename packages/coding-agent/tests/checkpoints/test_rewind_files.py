"""Restoring files after `write`, `edit` and `bash` changes, in a plain folder and in a git repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from checkpoint_helpers import git_init, tree, turn, user_entries
from runtime_helpers import Harness

GENERATOR = "for i in $(seq 1 150); do mkdir -p gen/d$((i % 7)); echo file $i > gen/d$((i % 7))/f$i.txt; done"


def _project(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    return 1\n")
    (root / "notes.txt").write_text("alpha\nbeta\n")
    (root / "old_name.txt").write_text("rename me\n")
    (root / "doomed.txt").write_text("delete me\n")
    (root / "logo.bin").write_bytes(bytes(range(256)) * 8)
    (root / ".gitignore").write_text("ignored/\n")


@pytest.mark.parametrize("kind", ["plain", "git"])
async def test_rewind_restores_every_kind_of_change_and_redo_puts_them_back(harness: Harness, kind: str) -> None:
    root = harness.cwd
    _project(root)
    if kind == "git":
        (root / "notes.txt").write_text("alpha\nbeta\nuncommitted\n")  # dirty before the agent starts
        git_init(root)
        (root / "notes.txt").write_text("alpha\nbeta\nuncommitted too\n")
    original = tree(root)
    session = await harness.session()
    await turn(harness, session, "first", ("write", {"path": "src/new.py", "content": "x = 1\n"}))
    after_first = tree(root)
    await turn(
        harness,
        session,
        "second",
        ("edit", {"path": "src/app.py", "edits": [{"oldText": "return 1", "newText": "return 2"}]}),
        ("bash", {"command": "sed -i 's/beta/BETA/' notes.txt && rm doomed.txt && mv old_name.txt new_name.txt"}),
        ("bash", {"command": GENERATOR}),
        ("bash", {"command": "head -c 3000 /dev/urandom > logo.bin && mkdir -p ignored && echo x > ignored/tmp"}),
        ("write", {"path": "src/new.py", "content": "x = 2\n"}),
    )
    changed = tree(root)
    assert changed["notes.txt"] != original["notes.txt"]
    assert "doomed.txt" not in changed
    assert len([p for p in changed if p.startswith("gen/")]) == 150

    first, second = user_entries(session)
    points = session.checkpoints.get_checkpoints()
    assert points[0].files == ["src/new.py"]
    assert set(points[1].files) >= {"src/app.py", "notes.txt", "doomed.txt", "old_name.txt", "new_name.txt", "logo.bin"}
    assert not any(path.startswith("ignored/") for path in points[1].files)

    result = await session.checkpoints.rewind(second, mode="files")
    assert result.conflicts == []
    restored = tree(root)
    restored.pop("ignored/tmp")  # ignored by .gitignore: never tracked, never touched
    assert restored == after_first

    result = await session.checkpoints.rewind(first, mode="files")
    assert result.conflicts == []
    restored = tree(root)
    restored.pop("ignored/tmp")
    assert restored == original

    assert session.checkpoints.can_redo
    redo = await session.checkpoints.redo()
    assert redo.conflicts == []
    assert tree(root) == after_first | {"ignored/tmp": b"x\n"}
    assert not session.checkpoints.can_redo


async def test_a_file_changed_by_someone_else_is_a_conflict_until_the_user_takes_the_checkpoint(
    harness: Harness,
) -> None:
    (harness.cwd / "a.txt").write_text("mine\n")
    session = await harness.session()
    await turn(
        harness,
        session,
        "go",
        ("write", {"path": "a.txt", "content": "agent\n"}),
        ("write", {"path": "b.txt", "content": "agent b\n"}),
    )
    (harness.cwd / "a.txt").write_text("edited by the user afterwards\n")
    [entry] = user_entries(session)

    plan = session.checkpoints.plan_rewind(entry)
    assert [c.path for c in plan.conflicts] == ["a.txt"]
    assert "+mine" in session.checkpoints.diff(entry, "a.txt")

    result = await session.checkpoints.rewind(entry, mode="files")
    assert [c.path for c in result.conflicts] == ["a.txt"]
    assert result.restored == ["b.txt"]
    assert (harness.cwd / "a.txt").read_text() == "edited by the user afterwards\n"
    assert not (harness.cwd / "b.txt").exists()

    result = await session.checkpoints.rewind(entry, mode="files", overwrite=["a.txt"])
    assert result.restored == ["a.txt"] and result.conflicts == []
    assert (harness.cwd / "a.txt").read_text() == "mine\n"


async def test_a_symlinked_folder_pointing_out_of_the_project_is_never_written_through(
    harness: Harness, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("outside\n")
    (harness.cwd / "sub").mkdir()
    (harness.cwd / "sub" / "f.txt").write_text("inside\n")
    session = await harness.session()
    await turn(harness, session, "go", ("write", {"path": "sub/f.txt", "content": "agent\n"}))
    # Someone swaps the folder for a link out of the project, holding what the agent wrote.
    (harness.cwd / "sub" / "f.txt").unlink()
    (harness.cwd / "sub").rmdir()
    (outside / "f.txt").write_text("agent\n")
    (harness.cwd / "sub").symlink_to(outside)
    [entry] = user_entries(session)

    result = await session.checkpoints.rewind(entry, mode="files")
    assert [c.path for c in result.conflicts] == ["sub/f.txt"]
    assert (outside / "f.txt").read_text() == "agent\n"


async def test_caps_skip_files_and_say_so(harness: Harness) -> None:
    (harness.cwd / "big.txt").write_text("b" * 5000)
    (harness.cwd / "small.txt").write_text("s")
    (harness.cwd / "a.bin").write_bytes(b"a" * 900)
    (harness.cwd / "b.bin").write_bytes(b"b" * 900)
    session = await harness.session(settings={"checkpoints": {"maxFileBytes": 1000, "maxTurnBytes": 1500}})
    await turn(
        harness,
        session,
        "go",
        ("write", {"path": "big.txt", "content": "new"}),
        ("bash", {"command": "echo x > a.bin && echo y > b.bin && echo z > small.txt"}),
    )
    [point] = session.checkpoints.get_checkpoints()
    reasons = {item.path: item.reason for item in point.skipped}
    assert reasons["big.txt"] == "larger than the file cap"
    assert list(reasons.values()).count("over the turn's cap") == 1  # a.bin or b.bin: 900 + 900 > 1500
    assert "small.txt" in point.files

    result = await session.checkpoints.rewind(point.entry_id, mode="files")
    assert {item.path for item in result.skipped} == set(reasons)
    assert (harness.cwd / "big.txt").read_text() == "new"  # not kept: left as it is
    assert (harness.cwd / "small.txt").read_text() == "s"


async def test_disabled_checkpoints_capture_nothing(harness: Harness) -> None:
    session = await harness.session(settings={"checkpoints": {"enabled": False}})
    await turn(
        harness, session, "go", ("write", {"path": "a.txt", "content": "x"}), ("bash", {"command": "echo y > b"})
    )
    assert [point.files for point in session.checkpoints.get_checkpoints()] == [[]]


async def test_an_agent_dir_inside_the_project_is_never_scanned_or_restored(harness: Harness) -> None:
    from apex_coding_agent.core.permissions import PermissionGate
    from apex_coding_agent.core.settings import SettingsManager
    from apex_coding_agent.runtime import create_agent_session
    from apex_coding_agent.session import SessionManager

    agent_dir = harness.cwd / ".agent"
    created = await create_agent_session(
        cwd=str(harness.cwd),
        agent_dir=str(agent_dir),
        model=harness.model(),
        session_manager=SessionManager.create(str(harness.cwd), agent_dir / "sessions"),
        settings_manager=SettingsManager.in_memory({}),
        model_runtime=harness.model_runtime,
        permission_gate=PermissionGate(harness.cwd, flag_mode="bypassPermissions"),
    )
    session = created.session
    await turn(harness, session, "one", ("bash", {"command": "echo a > a.txt"}))
    await turn(harness, session, "two", ("bash", {"command": "echo b > b.txt"}))
    points = session.checkpoints.get_checkpoints()
    assert [p.files for p in points] == [["a.txt"], ["b.txt"]]
    await session.checkpoints.rewind(points[0].entry_id, mode="files")
    assert not (harness.cwd / "a.txt").exists() and not (harness.cwd / "b.txt").exists()
    assert session.session_file is not None and Path(session.session_file).stat().st_size > 0


async def test_a_folder_too_large_to_scan_is_reported_not_walked_forever(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from apex_coding_agent.checkpoints import scan

    monkeypatch.setattr(scan, "MAX_SCAN_FILES", 20)
    for index in range(30):
        (harness.cwd / f"f{index}.txt").write_text(str(index))
    session = await harness.session()
    await turn(
        harness,
        session,
        "go",
        ("bash", {"command": "echo changed > f1.txt"}),
        ("write", {"path": "f2.txt", "content": "by write"}),
    )
    [point] = session.checkpoints.get_checkpoints()
    assert point.files == ["f2.txt"]  # write and edit are still kept
    assert [(s.path, s.reason) for s in point.skipped] == [("*", scan.TOO_MANY_FILES)]


async def test_restored_files_keep_their_permission_bits(harness: Harness) -> None:
    import os
    import stat

    script = harness.cwd / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    git_init(harness.cwd)
    session = await harness.session()
    await turn(harness, session, "go", ("bash", {"command": "rm run.sh && echo new > made.txt"}))
    [entry] = user_entries(session)
    await session.checkpoints.rewind(entry, mode="files")
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    await session.checkpoints.redo()
    await session.checkpoints.rewind(entry, mode="files")
    assert script.read_text() == "#!/bin/sh\necho hi\n"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(script.stat().st_mode) in (0o755, 0o666 & ~umask)


async def test_a_store_that_cannot_be_written_never_stops_the_tool(harness: Harness) -> None:
    (harness.cwd / "a.txt").write_text("old")
    blocked = harness.agent_dir / "checkpoints" / "blobs"
    blocked.parent.mkdir(parents=True)
    blocked.write_text("a file where the store's folder should be")
    session = await harness.session()
    await turn(
        harness, session, "go", ("write", {"path": "a.txt", "content": "new"}), ("bash", {"command": "echo x > b"})
    )
    assert (harness.cwd / "a.txt").read_text() == "new"
    assert (harness.cwd / "b").read_text() == "x\n"
    [point] = session.checkpoints.get_checkpoints()
    reasons = {s.path: s.reason for s in point.skipped}
    assert set(reasons) == {"a.txt", "b"}
    assert reasons["a.txt"].startswith("checkpoint failed (write)")
    assert reasons["b"].startswith("not kept: ")  # the scan could not keep what bash wrote
