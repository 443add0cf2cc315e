"""Git packages against a local repository: clone, ref checkout, reconcile on ref change, update, deps."""

from pathlib import Path

from apex_coding_agent.package_manager import Installer, parse_source
from apex_coding_agent.package_manager.installer import DEPS_DIR

from .helpers import FakePip, git, git_repo, write


def prompts(clone: Path) -> list[str]:
    return sorted(p.name for p in (clone / "prompts").glob("*.md"))


def test_clone_checkout_and_reconcile_when_the_ref_changes(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    installer = Installer(tmp_path / "agent", tmp_path / "cwd")
    v1 = parse_source(f"file://{repo}@v1")
    clone = installer.install(v1, "user")
    assert clone == tmp_path / "agent" / "git" / "file" / Path(*str(repo).strip("/").split("/"))
    assert prompts(clone) == ["one.md"]
    write(clone / "stray.txt", "left behind by a tool")
    (clone / "prompts" / "one.md").write_text("edited")

    clone2 = installer.install(parse_source(f"file://{repo}@v2"), "user")
    assert clone2 == clone
    assert prompts(clone) == ["one.md", "two.md"]
    assert not (clone / "stray.txt").exists()  # cleaned
    assert (clone / "prompts" / "one.md").read_text() == "One\n"  # reset
    assert git(clone, "rev-parse", "HEAD") == git(repo, "rev-parse", "v2")

    installer.install(parse_source(f"file://{repo}@v1"), "user")
    assert prompts(clone) == ["one.md"]


def test_update_moves_unpinned_clones_and_skips_pinned_ones(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    installer = Installer(tmp_path / "agent", tmp_path / "cwd")
    unpinned = parse_source(f"file://{repo}")
    clone = installer.install(unpinned, "project")
    assert clone.is_relative_to(tmp_path / "cwd" / ".apex-code" / "git")
    write(repo / "prompts" / "three.md", "Three\n")
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "three")

    assert installer.update(unpinned, "project") is True
    assert prompts(clone) == ["one.md", "three.md", "two.md"]

    pinned = parse_source(f"file://{repo}@v1")
    pinned_clone = installer.install(pinned, "user")
    assert installer.update(pinned, "user") is False
    assert prompts(pinned_clone) == ["one.md"]


def test_dependencies_go_to_apex_deps_through_pip_command(tmp_path: Path) -> None:
    pip = FakePip(tmp_path / "pip")
    pip.publish("helper-lib")
    repo = git_repo(tmp_path / "repo")
    write(repo / "pyproject.toml", '[project]\nname = "tool"\ndependencies = ["helper-lib>=1"]\n')
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "deps")
    installer = Installer(tmp_path / "agent", tmp_path / "cwd", tuple(pip.command))
    clone = installer.install(parse_source(f"file://{repo}"), "user")
    assert (clone / DEPS_DIR / "helper_lib" / "__init__.py").is_file()
    [call] = pip.calls()
    assert call[:2] == ["install", "--target"]
    assert call[3:] == ["helper-lib>=1"]


def test_remove_deletes_the_clone_and_empty_parents(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    installer = Installer(tmp_path / "agent", tmp_path / "cwd")
    source = parse_source(f"file://{repo}@v1")
    installer.install(source, "user")
    installer.remove(source, "user")
    assert not (tmp_path / "agent" / "git" / "file").exists()
    assert (tmp_path / "agent").is_dir()


def test_temporary_sources_live_under_tmp_extensions(tmp_path: Path) -> None:
    from apex_coding_agent.package_manager import resolve_temporary_sources

    repo = git_repo(tmp_path / "repo")
    resolved = resolve_temporary_sources([f"file://{repo}@v1"], tmp_path / "agent", tmp_path / "cwd")
    [prompt] = resolved.prompts
    assert prompt.scope == "temporary"
    relative = prompt.path.relative_to(tmp_path / "agent" / "tmp" / "extensions" / "git")
    assert len(relative.parts[0]) == 8 and relative.parts[1:] == ("prompts", "one.md")
