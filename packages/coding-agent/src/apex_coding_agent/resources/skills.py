"""Agent Skills: discovery, frontmatter, the prompt catalog and `/skill:` expansion.

A skill is a markdown file with YAML frontmatter. A directory holding `SKILL.md` is one skill (nothing below it is
scanned); other directories are searched recursively, skipping dot-names and `node_modules`, following symlinks and
honouring `.gitignore`, `.ignore` and `.fdignore` files met on the way. Direct `*.md` files at a scan root are
single-file skills only where the caller allows it (`<agentDir>/skills`, `.apex-code/skills`, explicit paths).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from apex_coding_agent.core.context_files import git_root
from apex_coding_agent.resources._scan import first_of_each_name
from apex_coding_agent.resources.diagnostics import ResourceDiagnostic, Scope, SourceInfo, collision_diagnostic
from apex_coding_agent.resources.frontmatter import FrontmatterError, Value, split_frontmatter
from apex_coding_agent.tools.ignore_walk import IgnoreRule, parse_ignore_file

SKILL_FILE = "SKILL.md"
IGNORE_FILE_NAMES = (".gitignore", ".ignore", ".fdignore")
MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
CATALOG_TOKEN_BUDGET = 600
_NAME_RE = re.compile(r"^[a-z0-9-]+$")
_SLUG_RUN_RE = re.compile(r"[^a-z0-9-]+")
_DASHES_RE = re.compile(r"-{2,}")
_SKILL_COMMAND_RE = re.compile(r"/skill:(\S+)(?:\s+(.*))?\Z", re.DOTALL)

CATALOG_HEADER = (
    "\n\nThe following skill names are available. Skills hold specialised instructions for particular tasks. "
    "Call the skill_search tool to see their descriptions or to look for skills by keyword; when a skill fits the "
    "task, load its instructions with the read tool before you start.\n\n<available_skills>\n"
)
CATALOG_FOOTER = "\n</available_skills>"


@dataclass(frozen=True)
class Skill:
    """One loaded skill. `base_dir` is the directory of `file_path`; references in the body are relative to it."""

    name: str
    description: str
    file_path: Path
    base_dir: Path
    source_info: SourceInfo
    disable_model_invocation: bool = False
    license: str | None = None
    compatibility: str | None = None
    allowed_tools: str | None = None
    metadata: dict[str, Value] = field(default_factory=dict)

    @property
    def command_name(self) -> str:
        """The `/skill:<token>` token of this skill."""
        return skill_slug(self.name)


@dataclass
class SkillLoadResult:
    skills: list[Skill] = field(default_factory=list)
    diagnostics: list[ResourceDiagnostic] = field(default_factory=list)


# --------------------------------------------------------------------------- one file


def _text(value: Value) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return " ".join("" if item is None else str(item) for item in value)
    if isinstance(value, dict):
        return None
    return str(value)


def validate_skill_name(name: str) -> list[str]:
    """Problems with a skill name; each becomes a warning (the skill still loads)."""
    problems: list[str] = []
    if len(name) > MAX_NAME_LENGTH:
        problems.append(f"name exceeds {MAX_NAME_LENGTH} characters ({len(name)})")
    if not _NAME_RE.match(name):
        problems.append("name must contain only lowercase a-z, 0-9 and hyphens")
    if name.startswith("-") or name.endswith("-"):
        problems.append("name must not start or end with a hyphen")
    if "--" in name:
        problems.append("name must not contain consecutive hyphens")
    return problems


def load_skill_file(path: Path, source_info: SourceInfo, *, name_fallback: str | None = None) -> SkillLoadResult:
    """Load one skill file. `name_fallback` defaults to the parent directory name.

    Unreadable files, malformed frontmatter and a missing description give a warning and no skill.
    """
    result = SkillLoadResult()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        result.diagnostics.append(ResourceDiagnostic("warning", f"could not read skill file: {exc}", path))
        return result
    try:
        data = split_frontmatter(text).data
    except FrontmatterError as exc:
        result.diagnostics.append(ResourceDiagnostic("warning", f"invalid skill frontmatter: {exc}", path))
        return result
    name = _text(data.get("name")) or name_fallback or path.parent.name
    description = (_text(data.get("description")) or "").strip()
    if not description:
        result.diagnostics.append(ResourceDiagnostic("warning", "skill has no description; not loaded", path))
        return result
    for problem in validate_skill_name(name):
        result.diagnostics.append(ResourceDiagnostic("warning", f'skill "{name}": {problem}', path))
    if len(description) > MAX_DESCRIPTION_LENGTH:
        message = f'skill "{name}": description exceeds {MAX_DESCRIPTION_LENGTH} characters ({len(description)})'
        result.diagnostics.append(ResourceDiagnostic("warning", message, path))
    metadata = data.get("metadata")
    result.skills.append(
        Skill(
            name=name,
            description=description,
            file_path=path,
            base_dir=path.parent,
            source_info=source_info,
            disable_model_invocation=data.get("disable-model-invocation") is True,
            license=_text(data.get("license")),
            compatibility=_text(data.get("compatibility")),
            allowed_tools=_text(data.get("allowed-tools")),
            metadata=dict(metadata) if isinstance(metadata, dict) else {},
        )
    )
    return result


# --------------------------------------------------------------------------- directories


def _read_ignore_rules(directory: Path) -> list[IgnoreRule]:
    # Each rule is relative to the directory of its file, which is how a pattern found below the scan root
    # applies relative to that root.
    rules: list[IgnoreRule] = []
    for name in IGNORE_FILE_NAMES:
        try:
            text = (directory / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        rules.extend(parse_ignore_file(text, str(directory)))
    return rules


def _ignored(rules: Sequence[IgnoreRule], path: Path, is_dir: bool) -> bool:
    for rule in reversed(rules):  # later rules (deeper files, later lines) win, as in git
        if rule.matches(str(path), is_dir):
            return not rule.negated
    return False


def load_skills_from_dir(root: Path, source_info: SourceInfo, *, include_root_files: bool) -> SkillLoadResult:
    """Every skill below `root` (see the module docstring). A missing `root` gives an empty result."""
    result = SkillLoadResult()
    if root.is_dir():
        _scan(root, source_info, include_root_files, [], set(), result, is_root=True)
    return result


def _scan(
    directory: Path,
    source_info: SourceInfo,
    include_root_files: bool,
    inherited: list[IgnoreRule],
    visited: set[str],
    result: SkillLoadResult,
    *,
    is_root: bool,
) -> None:
    real = os.path.realpath(directory)
    if real in visited:  # a symlink cycle
        return
    visited.add(real)
    rules = inherited + _read_ignore_rules(directory)
    skill_file = directory / SKILL_FILE
    if skill_file.is_file() and not _ignored(rules, skill_file, False):
        _extend(result, load_skill_file(skill_file, _with_path(source_info, skill_file)))
        return
    try:
        entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except OSError as exc:
        result.diagnostics.append(ResourceDiagnostic("warning", f"could not list skills directory: {exc}", directory))
        return
    for entry in entries:
        if entry.name.startswith(".") or entry.name == "node_modules":
            continue
        path = Path(entry.path)
        try:
            is_dir = entry.is_dir()  # follows symlinks
            is_file = entry.is_file()
        except OSError:
            continue
        if _ignored(rules, path, is_dir):
            continue
        if is_dir:
            _scan(path, source_info, include_root_files, rules, visited, result, is_root=False)
        elif is_file and is_root and include_root_files and entry.name.endswith(".md"):
            name_fallback = entry.name[: -len(".md")]
            _extend(result, load_skill_file(path, _with_path(source_info, path), name_fallback=name_fallback))


def _with_path(info: SourceInfo, path: Path) -> SourceInfo:
    return SourceInfo(path, info.source, info.scope, info.origin, path.parent)


def _extend(into: SkillLoadResult, other: SkillLoadResult) -> None:
    into.skills.extend(other.skills)
    into.diagnostics.extend(other.diagnostics)


def load_skills_from_path(path: Path, source_info: SourceInfo) -> SkillLoadResult:
    """An explicit path (settings, `--skill`, package): a file is one skill, a directory is scanned with root files."""
    if path.is_dir():
        return load_skills_from_dir(path, source_info, include_root_files=True)
    if path.is_file():
        fallback = None if path.name == SKILL_FILE else path.stem
        return load_skill_file(path, _with_path(source_info, path), name_fallback=fallback)
    return SkillLoadResult([], [ResourceDiagnostic("error", "skill path does not exist", path)])


# --------------------------------------------------------------------------- standard locations


@dataclass(frozen=True)
class SkillLocation:
    """A directory to scan and whether its direct `*.md` files are single-file skills."""

    path: Path
    scope: Scope
    include_root_files: bool


def project_skill_locations(cwd: str | Path, *, home: str | Path | None = None) -> list[SkillLocation]:
    """`.apex-code/skills` and `.agents/skills` in cwd and each ancestor up to the git root (fs root outside a repo).

    `~/.agents/skills` is a user location and never counted here. Nearest directories come first.
    """
    start = Path(os.path.realpath(cwd))
    home_dir = Path(os.path.realpath(home if home is not None else Path.home()))
    top = git_root(start)
    out: list[SkillLocation] = []
    for directory in (start, *start.parents):
        out.append(SkillLocation(directory / ".apex-code" / "skills", "project", True))
        if directory != home_dir:
            out.append(SkillLocation(directory / ".agents" / "skills", "project", False))
        if top is not None and directory == top:
            break
    return out


def user_skill_locations(agent_dir: str | Path, *, home: str | Path | None = None) -> list[SkillLocation]:
    """`<agentDir>/skills` (with single-file skills) and `~/.agents/skills` (without)."""
    home_dir = Path(home) if home is not None else Path.home()
    return [
        SkillLocation(Path(agent_dir) / "skills", "user", True),
        SkillLocation(home_dir / ".agents" / "skills", "user", False),
    ]


def dedupe_skills(groups: Iterable[SkillLoadResult]) -> SkillLoadResult:
    """Merge results in order: the first skill of a name wins, later ones give a collision diagnostic.

    The same file reached twice (e.g. through a symlink or an overlapping path) is kept once, silently.
    """
    skills, diagnostics = first_of_each_name(
        ((group.skills, group.diagnostics) for group in groups),
        lambda skill: skill.name,
        lambda skill: skill.file_path,
        lambda winner, loser: collision_diagnostic("skill", loser.name, winner.file_path, loser.file_path),
    )
    return SkillLoadResult(skills, diagnostics)


# --------------------------------------------------------------------------- prompt catalog


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _omitted_comment(count: int) -> str:
    noun = "skill" if count == 1 else "skills"
    return f"  <!-- {count} more {noun} omitted for space; call skill_search to find them -->"


def format_skills_catalog(skills: Sequence[Skill], *, budget_tokens: int = CATALOG_TOKEN_BUDGET) -> str:
    """The names-only catalog appended to the system prompt ("" when no skill is visible to the model).

    When the whole list exceeds the budget, the longest sorted prefix that fits next to a worst-case omitted-count
    comment is kept, followed by the comment with the exact count.
    """
    visible = sorted((s for s in skills if not s.disable_model_invocation), key=lambda s: s.name)
    if not visible:
        return ""
    from xml.sax.saxutils import escape  # imported here: the xml package is not needed without skills

    lines = [f"  <name>{escape(s.name)}</name>" for s in visible]
    full = CATALOG_HEADER + "\n".join(lines) + CATALOG_FOOTER
    if estimate_tokens(full) <= budget_tokens:
        return full
    max_chars = budget_tokens * 4
    used = len(CATALOG_HEADER) + len(CATALOG_FOOTER) + len(_omitted_comment(len(visible)))
    kept: list[str] = []
    for line in lines:
        if used + len(line) + 1 > max_chars:
            break
        kept.append(line)
        used += len(line) + 1
    return CATALOG_HEADER + "\n".join([*kept, _omitted_comment(len(visible) - len(kept))]) + CATALOG_FOOTER


# --------------------------------------------------------------------------- /skill: commands


def skill_slug(name: str) -> str:
    """`/skill:` token: lowercase, runs outside `a-z0-9-` become `-`, dashes collapsed and trimmed; `skill` if empty."""
    slug = _DASHES_RE.sub("-", _SLUG_RUN_RE.sub("-", name.lower())).strip("-")
    return slug or "skill"


def find_skill_by_command(skills: Sequence[Skill], token: str) -> Skill | None:
    """The first skill whose slug is `token`."""
    return next((s for s in skills if s.command_name == token), None)


def skill_block(skill: Skill, body: str, args: str = "") -> str:
    """The text that replaces a `/skill:` input."""
    text = (
        f'<skill name="{skill.name}" location="{skill.file_path}">\n'
        f"References are relative to {skill.base_dir}.\n\n{body.strip()}\n</skill>"
    )
    return text + "\n\n" + args if args else text


SkillErrorReporter = Callable[[Skill, str], None]


def expand_skill_command(text: str, skills: Sequence[Skill], *, on_error: SkillErrorReporter | None = None) -> str:
    """Expand `/skill:<token> [args]`; anything else (or an unknown token) is returned unchanged.

    The skill file is read now, so edits show without a reload. A read or parse error is passed to `on_error`
    (reported like an extension error) and the text passes through unchanged.
    """
    if not text.startswith("/skill:"):
        return text
    match = _SKILL_COMMAND_RE.match(text)
    if match is None:
        return text
    skill = find_skill_by_command(skills, match.group(1))
    if skill is None:
        return text
    try:
        body = split_frontmatter(skill.file_path.read_text(encoding="utf-8")).body
    except (OSError, UnicodeDecodeError, FrontmatterError) as exc:
        if on_error is not None:
            on_error(skill, f"could not read skill {skill.file_path}: {exc}")
        return text
    return skill_block(skill, body, (match.group(2) or "").strip())


__all__ = [
    "CATALOG_TOKEN_BUDGET",
    "IGNORE_FILE_NAMES",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_NAME_LENGTH",
    "Skill",
    "SkillErrorReporter",
    "SkillLoadResult",
    "SkillLocation",
    "dedupe_skills",
    "estimate_tokens",
    "expand_skill_command",
    "find_skill_by_command",
    "format_skills_catalog",
    "load_skill_file",
    "load_skills_from_dir",
    "load_skills_from_path",
    "project_skill_locations",
    "skill_block",
    "skill_slug",
    "user_skill_locations",
    "validate_skill_name",
]
