"""The built wheels carry their CHANGELOG.md where `/changelog` finds it, and `scripts/check_wheels.py` insists on it.

The wheels are built for real with `uv build` from this checkout and unpacked the way an installer lays them out.
"""

import importlib.util
import shutil
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from apex_tui.app._changelog import find_changelog

REPO = Path(__file__).resolve().parents[3]


def _uv_build(out: Path, *selection: str) -> list[Path]:
    uv = shutil.which("uv")
    assert uv is not None, "uv must be on PATH to build the wheels"
    subprocess.run([uv, "build", "--wheel", *selection, "-o", str(out), "-q"], cwd=REPO, check=True, timeout=60)
    return sorted(out.glob("*.whl"))


def _install(wheel: Path, site: Path) -> None:
    """What an installer leaves for a pure-Python wheel: every member under site-packages, RECORD included."""
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)


def _check_wheels() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_wheels", REPO / "scripts" / "check_wheels.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _without(wheel: Path, drop: Callable[[str], bool]) -> None:
    """Rewrite `wheel` in place leaving out the members for which `drop` is true."""
    kept = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(kept, "w") as target:
        for item in source.infolist():
            if not drop(item.filename):
                target.writestr(item, source.read(item))
    kept.replace(wheel)


@pytest.fixture(scope="module")
def all_wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheels")
    _uv_build(out, "--all-packages")
    return out


def test_the_tui_wheel_ships_its_changelog_and_changelog_lookup_reads_it(tmp_path: Path) -> None:
    (wheel,) = _uv_build(tmp_path / "dist", "--package", "apex-tui")
    site = tmp_path / "site"
    _install(wheel, site)
    found = find_changelog("apex-tui", "apex_tui", path=[str(site)])
    assert found.version == "0.1.0"
    assert found.path == site / "apex_tui" / "CHANGELOG.md"
    assert found.text == (REPO / "packages" / "tui" / "CHANGELOG.md").read_text(encoding="utf-8")
    assert found.markdown.startswith("# Changelog of apex-tui")


def test_the_coding_agent_wheel_ships_its_changelog(all_wheels: Path, tmp_path: Path) -> None:
    (wheel,) = all_wheels.glob("apex_coding_agent-*.whl")
    _install(wheel, tmp_path)
    found = find_changelog("apex-coding-agent", "apex_coding_agent", path=[str(tmp_path)])
    assert found.path == tmp_path / "apex_coding_agent" / "CHANGELOG.md"
    assert found.text == (REPO / "packages" / "coding-agent" / "CHANGELOG.md").read_text(encoding="utf-8")


def test_check_wheels_passes_the_built_wheels(all_wheels: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _check_wheels().main(str(all_wheels)) == 0
    assert "FAIL" not in capsys.readouterr().err


def test_check_wheels_fails_when_a_wheel_lacks_its_changelog(
    all_wheels: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "wheels"
    shutil.copytree(all_wheels, folder)
    (tui,) = folder.glob("apex_tui-*.whl")
    _without(tui, lambda name: name == "apex_tui/CHANGELOG.md")
    assert _check_wheels().main(str(folder)) == 1
    assert f"FAIL: {tui.name}: no apex_tui/CHANGELOG.md" in capsys.readouterr().err


def test_check_wheels_fails_on_a_changelog_that_is_not_the_projects(tmp_path: Path) -> None:
    # What a checkout without symlink support would ship: the link's target path as the file's text.
    wheel = tmp_path / "apex_tui-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("apex_tui/CHANGELOG.md", "../../CHANGELOG.md")
        archive.writestr("apex_tui-0.1.0.dist-info/RECORD", "apex_tui/CHANGELOG.md,,\n")
    with zipfile.ZipFile(wheel) as archive:
        problems = _check_wheels().changelog_problems(archive, "apex_tui", "# Changelog of apex-tui\n")
    assert problems == ["apex_tui/CHANGELOG.md differs from the project's CHANGELOG.md"]


def test_check_wheels_fails_when_the_changelog_is_missing_from_record(tmp_path: Path) -> None:
    wheel = tmp_path / "apex_tui-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("apex_tui/CHANGELOG.md", "# log\n")
        archive.writestr("apex_tui-0.1.0.dist-info/RECORD", "apex_tui/__init__.py,,\n")
    with zipfile.ZipFile(wheel) as archive:
        problems = _check_wheels().changelog_problems(archive, "apex_tui", "# log\n")
    assert problems == ["apex_tui/CHANGELOG.md is not listed in RECORD"]
