"""The default pip program: `python -m pip`, else `uv pip --python <this python>`, else an error naming both.

The selection depends on the running interpreter, so each case runs a real child interpreter set up to have pip
(a fake `pip` module on PYTHONPATH), or not (`sys.modules["pip"] = None` blocks the import), with a fake `uv` on
PATH or none. The fakes are real executables that record their argv and copy from a local "index".
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from apex_coding_agent.package_manager import Installer, InstallError, parse_source
from apex_coding_agent.package_manager.installer import PipCommand, pip_command_from, select_pip_command

from .helpers import FAKE_PIP, FakePip, write

CHILD = """
import json, sys
if {block_pip}:
    sys.modules["pip"] = None  # makes `import pip` fail, as in a venv made by uv
from pathlib import Path
from apex_coding_agent.package_manager import Installer, InstallError, parse_source
from apex_coding_agent.package_manager.installer import default_pip_command

try:
    command = default_pip_command()
except InstallError as exc:
    print(json.dumps({{"error": str(exc)}}))
    raise SystemExit(0)
installer = Installer(Path({agent!r}), Path({agent!r}))
installer.install(parse_source("pypi:apex-skills==1.0", Path({agent!r})), "user")
print(json.dumps({{"argv": list(command.argv), "options": list(command.install_options)}}))
"""

FAKE_UV = """#!{python}
import json, os, sys
with open({log!r}, "a") as handle:
    handle.write(json.dumps(sys.argv[1:]) + "\\n")
args = sys.argv[1:]
assert args[:4] == ["pip", "install", "--python", {python!r}], args
os.execv({pip!r}, [{pip!r}, "install", *args[4:]])
"""


def run_child(tmp: Path, *, block_pip: bool, pythonpath: Path | None, path: Path) -> dict[str, list[str] | str]:
    agent = tmp / "agent"
    script = CHILD.format(block_pip=block_pip, agent=str(agent))
    env = {**os.environ, "PATH": str(path)}
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), os.environ.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, list[str] | str] = json.loads(done.stdout)
    return result


def fake_uv(tmp: Path, pip: FakePip) -> tuple[Path, Path]:
    """A directory holding an executable `uv` that checks the `pip install --python` prefix, then runs `pip`."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    log = tmp / "uv-log.jsonl"
    uv = bin_dir / "uv"
    uv.write_text(FAKE_UV.format(python=sys.executable, log=str(log), pip=str(pip.script)))
    uv.chmod(0o755)
    return bin_dir, log


def test_pip_importable_in_this_interpreter_uses_python_m_pip(tmp_path: Path) -> None:
    pip = FakePip(tmp_path / "pip")
    pip.publish("apex-skills")
    module_dir = tmp_path / "modules" / "pip"
    write(module_dir / "__init__.py")
    write(module_dir / "__main__.py", FAKE_PIP.format(python=sys.executable, log=str(pip.log), index=str(pip.index)))
    bin_dir, uv_log = fake_uv(tmp_path, pip)  # present, yet pip wins

    result = run_child(tmp_path, block_pip=False, pythonpath=tmp_path / "modules", path=bin_dir)

    assert result == {"argv": [sys.executable, "-m", "pip"], "options": []}
    target = tmp_path / "agent" / "pypi" / "apex-skills"
    [call] = pip.calls()
    assert call[:2] == ["install", "--target"]
    assert Path(call[2]).parent == target.parent  # the staging directory next to the final one
    assert call[3:] == ["apex-skills==1.0"]
    assert (target / "apex_skills" / "__init__.py").is_file()
    assert not uv_log.exists()


def test_without_pip_uses_uv_pip_aimed_at_this_interpreter(tmp_path: Path) -> None:
    pip = FakePip(tmp_path / "pip")
    pip.publish("apex-skills")
    bin_dir, uv_log = fake_uv(tmp_path, pip)

    result = run_child(tmp_path, block_pip=True, pythonpath=None, path=bin_dir)

    assert result == {"argv": [str(bin_dir / "uv"), "pip"], "options": ["--python", sys.executable]}
    [uv_call] = [json.loads(line) for line in uv_log.read_text().splitlines()]
    assert uv_call[:5] == ["pip", "install", "--python", sys.executable, "--target"]
    assert uv_call[6:] == ["apex-skills==1.0"]
    assert (tmp_path / "agent" / "pypi" / "apex-skills" / "apex_skills" / "__init__.py").is_file()


def test_without_pip_or_uv_the_error_names_both_and_the_setting(tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()

    result = run_child(tmp_path, block_pip=True, pythonpath=None, path=empty)

    error = result["error"]
    assert isinstance(error, str)
    assert f"pip is not importable in {sys.executable}" in error
    assert "uv is not on PATH" in error
    assert '"pipCommand" setting' in error


def test_selection_order_and_argv_composition() -> None:
    both = select_pip_command("/py", pip_importable=True, uv="/bin/uv")
    assert both.install_argv("--target", "/t", "req") == ["/py", "-m", "pip", "install", "--target", "/t", "req"]
    uv_only = select_pip_command("/py", pip_importable=False, uv="/bin/uv")
    assert uv_only.install_argv("--target", "/t", "req") == [
        "/bin/uv", "pip", "install", "--python", "/py", "--target", "/t", "req"
    ]  # fmt: skip
    with pytest.raises(InstallError, match="ensurepip"):
        select_pip_command("/py", pip_importable=False, uv=None)


def test_the_setting_wins_and_an_unset_setting_defers_the_choice() -> None:
    assert pip_command_from(["uv", "pip"]) == ["uv", "pip"]
    assert PipCommand(("uv", "pip")).install_argv("--target", "/t") == ["uv", "pip", "install", "--target", "/t"]
    assert pip_command_from(None) == []
    assert pip_command_from([]) == []
    assert pip_command_from(["uv", 3]) == []


def test_real_uv_pip_install_target_of_a_local_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    uv = shutil.which("uv")
    assert uv is not None, "uv is part of this project's toolchain"
    monkeypatch.setenv("UV_OFFLINE", "1")  # a local path source needs no index
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))  # no reliance on what the shared cache holds
    package = tmp_path / "tinypkg"
    write(
        package / "pyproject.toml",
        '[project]\nname = "tinypkg"\nversion = "0.1.0"\n\n'
        '[build-system]\nrequires = ["uv_build>=0.8,<0.20"]\nbuild-backend = "uv_build"\n',
    )
    write(package / "src" / "tinypkg" / "__init__.py", "VALUE = 42\n")
    command = select_pip_command(sys.executable, pip_importable=False, uv=uv)
    installer = Installer(tmp_path / "agent", tmp_path, command)
    source = parse_source(f"pypi:tinypkg @ {package.as_uri()}", tmp_path)

    installed = installer.install(source, "user")

    assert installed == tmp_path / "agent" / "pypi" / "tinypkg"
    assert (installed / "tinypkg" / "__init__.py").read_text() == "VALUE = 42\n"
    assert (installed / "tinypkg-0.1.0.dist-info").is_dir()
