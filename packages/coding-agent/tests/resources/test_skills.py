"""Skill discovery, frontmatter rules, collisions, `/skill:` slugs and expansion (spec resources.md §3)."""

import os
from pathlib import Path

from apex_coding_agent.resources.diagnostics import SourceInfo
from apex_coding_agent.resources.skills import (
    Skill,
    dedupe_skills,
    expand_skill_command,
    load_skills_from_dir,
    load_skills_from_path,
    project_skill_locations,
    skill_slug,
)

INFO = SourceInfo(Path("/"), "local", "user")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill_md(name: str | None, description: str | None = "does things", body: str = "Body.") -> str:
    lines = ["---"]
    if name is not None:
        lines.append(f"name: {name}")
    if description is not None:
        lines.append(f"description: {description}")
    lines.append("---")
    return "\n".join(lines) + "\n" + body + "\n"


def names(skills: list[Skill]) -> list[str]:
    return [s.name for s in skills]


def test_skill_dir_stops_recursion_and_nested_dirs_are_searched(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root / "a" / "SKILL.md", skill_md("a"))
    write(root / "a" / "inner" / "SKILL.md", skill_md("inner"))  # below a skill: not scanned
    write(root / "group" / "b" / "SKILL.md", skill_md("b"))
    write(root / ".hidden" / "SKILL.md", skill_md("hidden"))
    write(root / "node_modules" / "x" / "SKILL.md", skill_md("nm"))
    result = load_skills_from_dir(root, INFO, include_root_files=False)
    assert names(result.skills) == ["a", "b"]
    assert result.diagnostics == []
    skill = result.skills[0]
    assert skill.file_path == root / "a" / "SKILL.md"
    assert skill.base_dir == root / "a"
    assert skill.source_info.path == skill.file_path


def test_root_markdown_files_are_single_file_skills_only_when_allowed(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root / "quick.md", skill_md(None, "a quick one"))
    write(root / "sub" / "notaskill.md", skill_md(None, "nested plain md files are not skills"))
    allowed = load_skills_from_dir(root, INFO, include_root_files=True)
    assert names(allowed.skills) == ["quick"]
    assert load_skills_from_dir(root, INFO, include_root_files=False).skills == []


def test_name_falls_back_to_the_directory_and_need_not_match_it(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root / "fallback-dir" / "SKILL.md", skill_md(None))
    write(root / "other-dir" / "SKILL.md", skill_md("custom"))
    found = load_skills_from_dir(root, INFO, include_root_files=False).skills
    assert {(s.name, s.base_dir.name) for s in found} == {("custom", "other-dir"), ("fallback-dir", "fallback-dir")}


def test_missing_or_blank_description_is_not_loaded_with_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root / "none" / "SKILL.md", skill_md("none", None))
    write(root / "blank" / "SKILL.md", skill_md("blank", "''"))
    write(root / "ok" / "SKILL.md", skill_md("ok"))
    result = load_skills_from_dir(root, INFO, include_root_files=False)
    assert names(result.skills) == ["ok"]
    warned = sorted(str(d.path) for d in result.diagnostics)
    assert warned == [str(root / "blank" / "SKILL.md"), str(root / "none" / "SKILL.md")]
    assert all(d.type == "warning" and "description" in d.message for d in result.diagnostics)


def test_malformed_frontmatter_warns_naming_the_file_and_the_rest_loads(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    bad = write(root / "bad" / "SKILL.md", "---\nname: bad\ndescription: [unclosed\n---\nbody\n")
    write(root / "good" / "SKILL.md", skill_md("good"))
    result = load_skills_from_dir(root, INFO, include_root_files=False)
    assert names(result.skills) == ["good"]
    assert len(result.diagnostics) == 1
    assert result.diagnostics[0].path == bad
    assert str(result.diagnostics[0]).startswith(f"{bad}: invalid skill frontmatter")


def test_name_and_description_rules_warn_but_load(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root / "p" / "SKILL.md", skill_md("Poteto Mode"))
    write(root / "h" / "SKILL.md", skill_md("-bad--name-"))
    write(root / "l" / "SKILL.md", skill_md("x" * 65))
    write(root / "d" / "SKILL.md", skill_md("long-description", "y" * 1025))
    result = load_skills_from_dir(root, INFO, include_root_files=False)
    assert sorted(names(result.skills)) == sorted(["Poteto Mode", "-bad--name-", "x" * 65, "long-description"])
    messages = [str(d) for d in result.diagnostics]
    assert any("p/SKILL.md" in m and "lowercase" in m for m in messages)
    assert any("h/SKILL.md" in m and "start or end with a hyphen" in m for m in messages)
    assert any("h/SKILL.md" in m and "consecutive hyphens" in m for m in messages)
    assert any("l/SKILL.md" in m and "exceeds 64" in m for m in messages)
    assert any("d/SKILL.md" in m and "description exceeds 1024" in m for m in messages)
    assert {d.type for d in result.diagnostics} == {"warning"}


def test_optional_fields_are_kept(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s" / "SKILL.md",
        "---\nname: s\ndescription: d\nlicense: MIT\ncompatibility: python>=3.11\n"
        "allowed-tools: read bash\ndisable-model-invocation: true\nmetadata:\n  author: me\nunknown: 1\n---\n",
    )
    (skill,) = load_skills_from_path(path, INFO).skills
    assert (skill.license, skill.compatibility, skill.allowed_tools) == ("MIT", "python>=3.11", "read bash")
    assert skill.disable_model_invocation is True
    assert skill.metadata == {"author": "me"}


def test_ignore_files_are_honoured_relative_to_where_they_are_found(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root / ".gitignore", "drafts/\n")
    write(root / ".ignore", "/top-only\n")
    write(root / "group" / ".fdignore", "secret\n")
    write(root / "drafts" / "d" / "SKILL.md", skill_md("draft"))
    write(root / "top-only" / "SKILL.md", skill_md("top-only"))
    write(root / "group" / "top-only" / "SKILL.md", skill_md("nested-top-only"))  # anchored rule: root only
    write(root / "group" / "secret" / "SKILL.md", skill_md("secret"))
    write(root / "secret" / "SKILL.md", skill_md("visible-secret"))  # .fdignore of group/ does not reach here
    result = load_skills_from_dir(root, INFO, include_root_files=False)
    assert sorted(names(result.skills)) == ["nested-top-only", "visible-secret"]


def test_negated_ignore_rule_reincludes(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root / ".gitignore", "drop-*\n!drop-keep\n")
    write(root / "drop-keep" / "SKILL.md", skill_md("keep"))
    write(root / "drop-me" / "SKILL.md", skill_md("drop"))
    assert names(load_skills_from_dir(root, INFO, include_root_files=False).skills) == ["keep"]


def test_symlinks_are_followed_and_cycles_end(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    write(outside / "linked" / "SKILL.md", skill_md("linked"))
    root = tmp_path / "skills"
    root.mkdir()
    os.symlink(outside, root / "link")
    os.symlink(root, root / "loop")
    assert names(load_skills_from_dir(root, INFO, include_root_files=False).skills) == ["linked"]


def test_collisions_keep_the_first_and_report(tmp_path: Path) -> None:
    first = load_skills_from_path(write(tmp_path / "one" / "SKILL.md", skill_md("same")), INFO)
    second_path = write(tmp_path / "two" / "SKILL.md", skill_md("same", "other"))
    merged = dedupe_skills([first, load_skills_from_path(second_path, INFO)])
    assert [s.description for s in merged.skills] == ["does things"]
    (diag,) = merged.diagnostics
    assert diag.type == "collision"
    assert diag.path == second_path
    assert diag.collision is not None
    assert diag.collision.winner_path == tmp_path / "one" / "SKILL.md"
    assert diag.collision.name == "same"


def test_same_file_reached_twice_is_loaded_once_without_collision(tmp_path: Path) -> None:
    path = write(tmp_path / "s" / "SKILL.md", skill_md("s"))
    merged = dedupe_skills([load_skills_from_path(path, INFO), load_skills_from_path(tmp_path / "s", INFO)])
    assert names(merged.skills) == ["s"]
    assert merged.diagnostics == []


def test_missing_explicit_path_is_an_error(tmp_path: Path) -> None:
    result = load_skills_from_path(tmp_path / "nope", INFO)
    assert result.skills == []
    assert [(d.type, d.path) for d in result.diagnostics] == [("error", tmp_path / "nope")]


def test_project_locations_walk_up_to_the_git_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    cwd = repo / "a" / "b"
    cwd.mkdir(parents=True)
    paths = [(loc.path, loc.include_root_files) for loc in project_skill_locations(cwd, home=tmp_path / "home")]
    real = Path(os.path.realpath(repo))
    assert paths[0] == (real / "a" / "b" / ".apex-code" / "skills", True)
    assert paths[1] == (real / "a" / "b" / ".agents" / "skills", False)
    assert paths[-1] == (real / ".agents" / "skills", False)
    assert len(paths) == 6


def test_home_agents_skills_is_not_a_project_location(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cwd = home / "proj"
    cwd.mkdir(parents=True)
    paths = [loc.path for loc in project_skill_locations(cwd, home=home)]
    real_home = Path(os.path.realpath(home))
    assert real_home / ".agents" / "skills" not in paths
    assert real_home / ".apex-code" / "skills" in paths
    assert paths[-1] == Path("/.agents/skills")  # outside a repo the walk reaches the fs root


def test_skill_slug() -> None:
    assert skill_slug("Poteto Mode") == "poteto-mode"
    assert skill_slug("  A__B--c!! ") == "a-b-c"
    assert skill_slug("pdf-tools") == "pdf-tools"
    assert skill_slug("***") == "skill"
    assert skill_slug("Ünïcode Name") == "n-code-name"


def test_poteto_mode_acceptance(tmp_path: Path) -> None:
    """Acceptance 6: `name: Poteto Mode` loads with a warning and `/skill:poteto-mode` expands with the args."""
    path = write(tmp_path / "skills" / "poteto" / "SKILL.md", skill_md("Poteto Mode", "mode", "\n\n  Do it.  \n\n"))
    result = load_skills_from_dir(tmp_path / "skills", INFO, include_root_files=False)
    assert names(result.skills) == ["Poteto Mode"]
    assert [d.type for d in result.diagnostics] == ["warning"]
    expanded = expand_skill_command("/skill:poteto-mode please  now", result.skills)
    assert expanded == (
        f'<skill name="Poteto Mode" location="{path}">\n'
        f"References are relative to {path.parent}.\n\nDo it.\n</skill>\n\nplease  now"
    )
    assert expand_skill_command("/skill:poteto-mode", result.skills).endswith("Do it.\n</skill>")
    assert expand_skill_command("/skill:poteto-mode\nmulti\nline", result.skills).endswith("</skill>\n\nmulti\nline")


def test_unknown_skill_and_plain_text_pass_through(tmp_path: Path) -> None:
    skills = load_skills_from_path(write(tmp_path / "s" / "SKILL.md", skill_md("s")), INFO).skills
    assert expand_skill_command("/skill:nope args", skills) == "/skill:nope args"
    assert expand_skill_command("hello /skill:s", skills) == "hello /skill:s"
    assert expand_skill_command("/skill:", skills) == "/skill:"


def test_read_error_is_reported_and_text_passes_through(tmp_path: Path) -> None:
    path = write(tmp_path / "s" / "SKILL.md", skill_md("s"))
    skills = load_skills_from_path(path, INFO).skills
    path.unlink()
    reports: list[tuple[str, str]] = []
    out = expand_skill_command("/skill:s x", skills, on_error=lambda skill, msg: reports.append((skill.name, msg)))
    assert out == "/skill:s x"
    assert len(reports) == 1
    assert reports[0][0] == "s"
    assert str(path) in reports[0][1]
