"""Skills and prompt templates, loaded by `ResourceLoader`; theme discovery."""

from __future__ import annotations

from typing import TYPE_CHECKING

from apex_coding_agent._lazy import lazy_exports

if TYPE_CHECKING:
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

# Names load on first access (PEP 562): a print run needs the resource loader, not theme discovery.
_EXPORTS: dict[str, str] = {
    "ResourceCollision": ".diagnostics",
    "ResourceDiagnostic": ".diagnostics",
    "SourceInfo": ".diagnostics",
    "Frontmatter": ".frontmatter",
    "FrontmatterError": ".frontmatter",
    "split_frontmatter": ".frontmatter",
    "PackageResource": ".loader",
    "ResourceFlags": ".loader",
    "ResourceLoader": ".loader",
    "PromptTemplate": ".prompt_templates",
    "expand_prompt_template": ".prompt_templates",
    "parse_command_args": ".prompt_templates",
    "substitute_args": ".prompt_templates",
    "SKILL_SEARCH_CONTRACT": ".skill_search",
    "SkillSearchTool": ".skill_search",
    "search_skills": ".skill_search",
    "should_activate_skill_search": ".skill_search",
    "Skill": ".skills",
    "expand_skill_command": ".skills",
    "format_skills_catalog": ".skills",
    "skill_slug": ".skills",
    "BUILTIN_THEME_NAMES": ".themes",
    "ThemeChoice": ".themes",
    "ThemeFlags": ".themes",
    "ThemeLoadResult": ".themes",
    "ThemeSource": ".themes",
    "discover_themes": ".themes",
    "select_theme": ".themes",
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


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
