"""`install`, `remove`, `update`, `list`, `config` subcommands end to end on real files, git and a fake pip."""

import io
import json
from pathlib import Path
from typing import Any

import pytest

from apex_coding_agent.package_manager import run_package_command

from .helpers import FakePip, conventional_package, git, git_repo, write


class Cli:
    def __init__(self, tmp: Path) -> None:
        self.agent = tmp / "agent"
        self.cwd = tmp / "project"
        self.cwd.mkdir(parents=True)
        self.pip = FakePip(tmp / "pip")
        write(self.agent / "settings.json", json.dumps({"pipCommand": self.pip.command}))

    def __call__(self, *argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = run_package_command(list(argv), self.agent, self.cwd, out, err)
        return code, out.getvalue(), err.getvalue()

    def user_packages(self) -> list[Any]:
        data: dict[str, list[Any]] = json.loads((self.agent / "settings.json").read_text())
        return data["packages"]

    def project_packages(self) -> list[Any]:
        data: dict[str, list[Any]] = json.loads((self.cwd / ".apex-code" / "settings.json").read_text())
        return data["packages"]


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def test_install_list_remove_pypi(cli: Cli) -> None:
    cli.pip.publish("apex-skills")
    assert cli("install", "pypi:apex-skills==1.0") == (0, "Installed pypi:apex-skills==1.0\n", "")
    target = cli.agent / "pypi" / "apex-skills"
    assert (target / "apex_skills" / "__init__.py").is_file()
    [call] = cli.pip.calls()
    assert call[:2] == ["install", "--target"] and call[3:] == ["apex-skills==1.0"]
    assert Path(call[2]).parent == target.parent  # staged beside the final directory
    assert cli.user_packages() == ["pypi:apex-skills==1.0"]
    settings = json.loads((cli.agent / "settings.json").read_text())
    assert settings["pipCommand"] == cli.pip.command  # other keys survive

    code, out, _ = cli("list")
    assert (code, out) == (0, f"User packages:\n  pypi:apex-skills==1.0\n    {target}\n")

    assert cli("uninstall", "pypi:Apex_Skills") == (0, "Removed pypi:Apex_Skills\n", "")
    assert cli.user_packages() == []
    assert not target.exists()
    assert cli("list") == (0, "No packages installed.\n", "")


def test_reinstall_replaces_the_entry_with_the_same_identity(cli: Cli) -> None:
    cli.pip.publish("apex-skills")
    write(
        cli.agent / "settings.json",
        json.dumps(
            {"pipCommand": cli.pip.command, "packages": [{"source": "pypi:apex-skills==0.9", "skills": []}, "../other"]}
        ),
    )
    assert cli("install", "pypi:apex-skills==1.0")[0] == 0
    assert cli.user_packages() == [{"source": "pypi:apex-skills==1.0", "skills": []}, "../other"]
    assert cli("install", "pypi:apex-skills==1.1")[0] == 0  # a new pin installs again
    assert [call[3:] for call in cli.pip.calls()] == [["apex-skills==1.0"], ["apex-skills==1.1"]]
    assert cli.user_packages()[0] == {"source": "pypi:apex-skills==1.1", "skills": []}


def test_local_install_into_project_settings_is_rebased(cli: Cli) -> None:
    conventional_package(cli.cwd / "vendor" / "pkg")
    assert cli("install", "./vendor/pkg", "-l") == (0, "Installed ./vendor/pkg\n", "")
    assert cli.project_packages() == ["../vendor/pkg"]  # relative to .apex-code/
    code, out, _ = cli("list")
    assert out == f"Project packages:\n  ../vendor/pkg\n    {cli.cwd / 'vendor' / 'pkg'}\n"
    assert cli("remove", "./vendor/pkg") == (1, "", "No matching package found for ./vendor/pkg\n")
    assert cli("remove", "./vendor/pkg", "-l") == (0, "Removed ./vendor/pkg\n", "")
    assert (cli.cwd / "vendor" / "pkg").is_dir()  # local packages are never deleted


def test_npm_source_is_refused_with_a_warning(cli: Cli) -> None:
    code, out, err = cli("install", "npm:@foo/bar")
    assert (code, out) == (1, "")
    assert err.startswith("Error: npm:@foo/bar: npm packages are not supported")
    assert "packages" not in json.loads((cli.agent / "settings.json").read_text())


def test_usage_errors(cli: Cli) -> None:
    assert cli("install") == (1, "", "Missing install source.\nUsage: apex-code install <source> [-l]\n")
    code, _, err = cli("list", "--bogus")
    assert code == 1 and err.startswith('Unknown option --bogus for "list".')
    code, out, _ = cli("remove", "--help")
    assert code == 0 and "Alias: apex-code uninstall <source> [-l]" in out


def test_update_git_and_pinned_packages(cli: Cli, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    assert cli("install", f"file://{repo}")[0] == 0
    assert cli("install", f"file://{repo}@v1", "-l")[0] == 0
    write(repo / "prompts" / "three.md", "Three\n")
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "three")
    user_clone = cli.agent / "git" / "file" / str(repo).strip("/")
    project_clone = cli.cwd / ".apex-code" / "git" / "file" / str(repo).strip("/")

    code, out, err = cli("update")
    assert (code, out) == (0, "Updated packages\n")
    assert err == "Skipping project packages: the project is not trusted (use --approve).\n"
    assert (user_clone / "prompts" / "three.md").is_file()

    assert cli("update", "--all", "--approve")[:2] == (0, "Updated packages\n")
    assert not (project_clone / "prompts" / "two.md").exists()  # pinned at v1

    code, _, err = cli("update", "self")
    assert code == 1 and "self-update is not available" in err


def test_config_lists_and_toggles_resources(cli: Cli) -> None:
    conventional_package(cli.agent / "pkg")
    assert cli("install", str(cli.agent / "pkg"))[0] == 0
    code, out, _ = cli("config")
    assert code == 0
    assert out.splitlines()[:5] == [
        str(cli.agent / "pkg"),
        "  extensions:",
        "    [x] extensions/pkgext",
        "    [x] extensions/tool.py",
        "  skills:",
    ]
    assert cli("config", "--disable", str(cli.agent / "pkg"), "skills/alpha") == (
        0,
        f"Disabled skill skills/alpha in {cli.agent / 'pkg'}\n",
        "",
    )
    assert cli.user_packages() == [{"source": str(cli.agent / "pkg"), "skills": ["-skills/alpha"]}]
    assert "    [ ] skills/alpha/SKILL.md" in cli("config")[1]
    cli("config", "--enable", str(cli.agent / "pkg"), "skills/alpha")
    assert cli.user_packages() == [{"source": str(cli.agent / "pkg"), "skills": ["+skills/alpha"]}]
    assert "    [x] skills/alpha/SKILL.md" in cli("config")[1]


def test_update_pypi_skips_pins_and_upgrades_the_rest(cli: Cli) -> None:
    cli.pip.publish("pinned-pkg")
    cli.pip.publish("loose-pkg")
    assert cli("install", "pypi:pinned-pkg==1.0")[0] == 0
    assert cli("install", "pypi:loose-pkg")[0] == 0
    assert cli("update") == (0, "Updated packages\n", "")
    assert cli("update", "pypi:Loose_Pkg") == (0, "Updated pypi:Loose_Pkg\n", "")
    assert [call[3:] for call in cli.pip.calls()] == [
        ["pinned-pkg==1.0"],
        ["loose-pkg"],
        ["--upgrade", "loose-pkg"],
        ["--upgrade", "loose-pkg"],
    ]
    assert cli("update", "pypi:absent") == (1, "", "No matching package found for pypi:absent\n")
