"""Skills and prompt templates (spec resources.md §3-§4), loaded by `ResourceLoader`."""

from .diagnostics import ResourceCollision, ResourceDiagnostic, SourceInfo
from .frontmatter import Frontmatter, FrontmatterError, split_frontmatter
from .loader import PackageResource, ResourceFlags, ResourceLoader
from .prompt_templates import PromptTemplate, expand_prompt_template, parse_command_args, substitute_args
from .skill_search import SKILL_SEARCH_CONTRACT, SkillSearchTool, search_skills, should_activate_skill_search
from .skills import Skill, expand_skill_command, format_skills_catalog, skill_slug

__all__ = [
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
    "expand_prompt_template",
    "expand_skill_command",
    "format_skills_catalog",
    "parse_command_args",
    "search_skills",
    "should_activate_skill_search",
    "skill_slug",
    "split_frontmatter",
    "substitute_args",
]
