"""Skills and prompt templates, loaded by `ResourceLoader`; theme discovery."""

from __future__ import annotations

from typing import TYPE_CHECKING

from apex_coding_agent._lazy import declared_exports, lazy_exports

if TYPE_CHECKING:
    from apex_coding_agent.resources.diagnostics import ResourceCollision as ResourceCollision
    from apex_coding_agent.resources.diagnostics import ResourceDiagnostic as ResourceDiagnostic
    from apex_coding_agent.resources.diagnostics import SourceInfo as SourceInfo
    from apex_coding_agent.resources.frontmatter import Frontmatter as Frontmatter
    from apex_coding_agent.resources.frontmatter import FrontmatterError as FrontmatterError
    from apex_coding_agent.resources.frontmatter import split_frontmatter as split_frontmatter
    from apex_coding_agent.resources.loader import PackageResource as PackageResource
    from apex_coding_agent.resources.loader import ResourceFlags as ResourceFlags
    from apex_coding_agent.resources.loader import ResourceLoader as ResourceLoader
    from apex_coding_agent.resources.prompt_templates import PromptTemplate as PromptTemplate
    from apex_coding_agent.resources.prompt_templates import expand_prompt_template as expand_prompt_template
    from apex_coding_agent.resources.prompt_templates import parse_command_args as parse_command_args
    from apex_coding_agent.resources.prompt_templates import substitute_args as substitute_args
    from apex_coding_agent.resources.skill_search import SKILL_SEARCH_CONTRACT as SKILL_SEARCH_CONTRACT
    from apex_coding_agent.resources.skill_search import SkillSearchTool as SkillSearchTool
    from apex_coding_agent.resources.skill_search import search_skills as search_skills
    from apex_coding_agent.resources.skill_search import should_activate_skill_search as should_activate_skill_search
    from apex_coding_agent.resources.skills import Skill as Skill
    from apex_coding_agent.resources.skills import expand_skill_command as expand_skill_command
    from apex_coding_agent.resources.skills import format_skills_catalog as format_skills_catalog
    from apex_coding_agent.resources.skills import skill_slug as skill_slug
    from apex_coding_agent.resources.themes import BUILTIN_THEME_NAMES as BUILTIN_THEME_NAMES
    from apex_coding_agent.resources.themes import ThemeChoice as ThemeChoice
    from apex_coding_agent.resources.themes import ThemeFlags as ThemeFlags
    from apex_coding_agent.resources.themes import ThemeLoadResult as ThemeLoadResult
    from apex_coding_agent.resources.themes import ThemeSource as ThemeSource
    from apex_coding_agent.resources.themes import discover_themes as discover_themes
    from apex_coding_agent.resources.themes import select_theme as select_theme

# Names load on first access (PEP 562): a print run needs the resource loader, not theme discovery.
_EXPORTS = declared_exports(__file__)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


__all__ = sorted(_EXPORTS)
