"""Manifests (`[tool.pi]`, `package.json` "pi") and conventional directories."""

from pathlib import Path

from apex_coding_agent.package_manager import package_resources, read_manifest

from .helpers import conventional_package, skill, write


def rel(paths: list[Path], root: Path) -> list[str]:
    return [p.relative_to(root).as_posix() for p in paths]


def test_conventional_dirs(tmp_path: Path) -> None:
    root = conventional_package(tmp_path / "pkg")
    found = package_resources(root)
    assert rel(found["extensions"], root) == ["extensions/pkgext", "extensions/tool.py"]
    assert rel(found["skills"], root) == ["skills/alpha/SKILL.md", "skills/group/beta/SKILL.md", "skills/single.md"]
    assert rel(found["prompts"], root) == ["prompts/review.md"]
    assert rel(found["themes"], root) == ["themes/night.json"]


def test_pyproject_manifest_globs_and_exclusions(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    write(
        root / "pyproject.toml",
        '[project]\nname = "x"\n\n[tool.pi]\n'
        'extensions = ["src/ext/*.py", "!src/ext/_private.py"]\n'
        'skills = ["agent-skills", "!agent-skills/old"]\n'
        'prompts = ["prompts/**/*.md"]\n',
    )
    write(root / "src" / "ext" / "main.py")
    write(root / "src" / "ext" / "_private.py")
    skill(root / "agent-skills", "new")
    skill(root / "agent-skills", "old")
    write(root / "prompts" / "a.md")
    write(root / "prompts" / "sub" / "b.md")
    conventional_package(root / "unused")
    write(root / "themes" / "ignored.json", "{}")  # the manifest lists no themes: none load
    found = package_resources(root)
    assert rel(found["extensions"], root) == ["src/ext/main.py"]
    assert rel(found["skills"], root) == ["agent-skills/new/SKILL.md"]
    assert rel(found["prompts"], root) == ["prompts/a.md", "prompts/sub/b.md"]
    assert found["themes"] == []


def test_package_json_manifest_for_resource_only_packages(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    write(root / "package.json", '{"name": "x", "pi": {"themes": ["colors/*.json"], "prompts": ["p.md"]}}')
    write(root / "colors" / "a.json", "{}")
    write(root / "p.md", "P")
    assert read_manifest(root) == {"themes": ["colors/*.json"], "prompts": ["p.md"]}
    found = package_resources(root)
    assert rel(found["themes"], root) == ["colors/a.json"]
    assert rel(found["prompts"], root) == ["p.md"]


def test_pyproject_without_tool_pi_uses_conventional_dirs(tmp_path: Path) -> None:
    root = conventional_package(tmp_path / "pkg")
    write(root / "pyproject.toml", '[project]\nname = "x"\n')
    assert read_manifest(root) is None
    assert rel(package_resources(root)["prompts"], root) == ["prompts/review.md"]


def test_broken_manifest_counts_as_absent_with_a_warning_naming_the_file(tmp_path: Path) -> None:
    root = conventional_package(tmp_path / "pkg")
    write(root / "pyproject.toml", "[tool.pi\n")
    assert read_manifest(root) is None
    warnings: list[str] = []
    assert len(package_resources(root, warnings.append)["skills"]) == 3
    [warning] = warnings
    assert warning.startswith(f"{root / 'pyproject.toml'}: invalid package manifest (")
    assert warning.endswith("); using the conventional directories")

    write(root / "pyproject.toml", '[project]\nname = "x"\n')
    write(root / "package.json", "{broken")
    warnings.clear()
    assert read_manifest(root, warnings.append) is None
    assert [w.split(":")[0] for w in warnings] == [str(root / "package.json")]
