"""Skills and prompt templates (spec resources.md §3-§4), loaded by `ResourceLoader`; theme discovery (§7)."""

from .diagnostics import ResourceCollision, ResourceDiagnostic, SourceInfo
from .frontmatter import Frontmatter, FrontmatterError, split_frontmatter
from .loader import PackageResource, ResourceFlags, ResourceLoader
from .prompt_templates import PromptTemplate, expand_prompt_template, parse_command_args, substitute_args
from .skill_search import SKILL_SEARCH_CONTRACT, SkillSearchTool, search_skills, should_activate_skill_search
from .skills import Skill, expand_skill_command, format_skills_catalog, skill_slug
from .themes import (
    BUILTIN_THEME_NAMES,
    ThemeChoice,
    ThemeFlags,
    ThemeLoadResult,
    ThemeSource,
    discover_themes,
    select_theme,
)

__all__ = [
    "BUILTIN_THEME_NAMES",
    "SKILL_SEARCH_CONTRACT",
    "Frontmatter",
    "FrontmatterError",
    "PackageResource",
    "PromptTemplate",
    "ResourceCollision",
    "ResourceDiagnostic",
    "ResourceFlags",
    "ResourceLoader",
    "Skill",
    "SkillSearchTool",
    "SourceInfo",
    "ThemeChoice",
    "ThemeFlags",
    "ThemeLoadResult",
    "ThemeSource",
    "discover_themes",
    "expand_prompt_template",
    "expand_skill_command",
    "format_skills_catalog",
    "parse_command_args",
    "search_skills",
    "select_theme",
    "should_activate_skill_search",
    "skill_slug",
    "split_frontmatter",
    "substitute_args",
]
