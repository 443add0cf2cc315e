"""Prompt templates: `/name args` expands a markdown file with bash-like placeholders.

A template is `<name>.md`; directory scans are non-recursive and follow symlinks. Substitution happens once over the
template body, so text coming from the arguments is never expanded again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from apex_coding_agent.resources._scan import first_of_each_name, list_resource_files
from apex_coding_agent.resources.diagnostics import ResourceDiagnostic, SourceInfo, collision_diagnostic
from apex_coding_agent.resources.frontmatter import FrontmatterError, Value, split_frontmatter

DESCRIPTION_FALLBACK_LENGTH = 60
_COMMAND_RE = re.compile(r"/(\S+)(?:\s+(.*))?\Z", re.DOTALL)
_PLACEHOLDER_RE = re.compile(
    r"\$\{(?P<num_default>\d+):-(?P<num_default_value>[^}]*)\}"
    r"|\$\{(?:@|ARGUMENTS):-(?P<all_default_value>[^}]*)\}"
    r"|\$\{@:(?P<slice_start>\d+)(?::(?P<slice_length>\d+))?\}"
    r"|\$(?P<all>ARGUMENTS|@)"
    r"|\$(?P<num>\d+)"
)


@dataclass(frozen=True)
class PromptTemplate:
    """One template: `/name` expands `content` (the file body after the frontmatter, trimmed)."""

    name: str
    description: str
    content: str
    file_path: Path
    source_info: SourceInfo
    argument_hint: str | None = None


@dataclass
class TemplateLoadResult:
    templates: list[PromptTemplate] = field(default_factory=list)
    diagnostics: list[ResourceDiagnostic] = field(default_factory=list)


def _text(value: Value) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _fallback_description(body: str) -> str:
    for line in body.splitlines():
        stripped = line.strip()
        if stripped:
            if len(stripped) > DESCRIPTION_FALLBACK_LENGTH:
                return stripped[:DESCRIPTION_FALLBACK_LENGTH] + "..."
            return stripped
    return ""


def load_template_file(path: Path, source_info: SourceInfo) -> TemplateLoadResult:
    """Load one template; unreadable files or malformed frontmatter give a warning naming the file."""
    result = TemplateLoadResult()
    try:
        parsed = split_frontmatter(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        result.diagnostics.append(ResourceDiagnostic("warning", f"could not read prompt template: {exc}", path))
        return result
    except FrontmatterError as exc:
        result.diagnostics.append(ResourceDiagnostic("warning", f"invalid prompt template frontmatter: {exc}", path))
        return result
    description = (_text(parsed.data.get("description")) or "").strip() or _fallback_description(parsed.body)
    result.templates.append(
        PromptTemplate(
            name=path.name[: -len(".md")] if path.name.endswith(".md") else path.name,
            description=description,
            content=parsed.body.strip(),
            file_path=path,
            source_info=SourceInfo(path, source_info.source, source_info.scope, source_info.origin, path.parent),
            argument_hint=_text(parsed.data.get("argument-hint")),
        )
    )
    return result


def load_templates_from_dir(directory: Path, source_info: SourceInfo) -> TemplateLoadResult:
    """The `*.md` files directly in `directory` (subdirectories are not scanned), sorted by file name."""
    files, diagnostics = list_resource_files(directory, ".md", "prompts")
    result = TemplateLoadResult([], diagnostics)
    for path in files:
        loaded = load_template_file(path, source_info)
        result.templates.extend(loaded.templates)
        result.diagnostics.extend(loaded.diagnostics)
    return result


def load_templates_from_path(path: Path, source_info: SourceInfo) -> TemplateLoadResult:
    """An explicit path (settings, `--prompt-template`, package): a file or a directory (non-recursive)."""
    if path.is_dir():
        return load_templates_from_dir(path, source_info)
    if path.is_file():
        return load_template_file(path, source_info)
    return TemplateLoadResult([], [ResourceDiagnostic("error", "prompt template path does not exist", path)])


def dedupe_templates(groups: Iterable[TemplateLoadResult]) -> TemplateLoadResult:
    """Merge in order: the first template of a name wins; later ones give a collision diagnostic."""
    templates, diagnostics = first_of_each_name(
        ((group.templates, group.diagnostics) for group in groups),
        lambda template: template.name,
        lambda template: template.file_path,
        lambda winner, loser: collision_diagnostic("prompt", loser.name, winner.file_path, loser.file_path),
    )
    return TemplateLoadResult(templates, diagnostics)


# --------------------------------------------------------------------------- expansion


def parse_command_args(text: str) -> list[str]:
    """Shell-like split: whitespace separates, `'...'` and `"..."` group (quotes removed, no escapes).

    Quoted parts join the surrounding word (`a"b c"` is one argument `ab c`); `""` is an empty argument.
    """
    args: list[str] = []
    current: list[str] = []
    in_word = False
    quote = ""
    for char in text:
        if quote:
            if char == quote:
                quote = ""
            else:
                current.append(char)
        elif char in ("'", '"'):
            quote = char
            in_word = True
        elif char.isspace():
            if in_word:
                args.append("".join(current))
                current = []
                in_word = False
        else:
            current.append(char)
            in_word = True
    if in_word:  # an unclosed quote runs to the end of the text
        args.append("".join(current))
    return args


def substitute_args(content: str, args: Sequence[str]) -> str:
    """Replace every placeholder of the spec's table in one pass over `content`."""
    joined = " ".join(args)

    def arg(number: int) -> str:
        return args[number - 1] if 1 <= number <= len(args) else ""

    def replace(match: re.Match[str]) -> str:
        groups = match.groupdict()
        if groups["num_default"] is not None:
            return arg(int(groups["num_default"])) or groups["num_default_value"]
        if groups["all_default_value"] is not None:
            return joined or groups["all_default_value"]
        if groups["slice_start"] is not None:
            start = max(int(groups["slice_start"]) - 1, 0)
            length = groups["slice_length"]
            chosen = args[start:] if length is None else args[start : start + int(length)]
            return " ".join(chosen)
        if groups["all"] is not None:
            return joined
        return arg(int(groups["num"]))

    return _PLACEHOLDER_RE.sub(replace, content)


def find_template(templates: Sequence[PromptTemplate], name: str) -> PromptTemplate | None:
    return next((t for t in templates if t.name == name), None)


def expand_prompt_template(text: str, templates: Sequence[PromptTemplate]) -> str:
    """`/name args` → the template body with arguments substituted; any other text is returned unchanged."""
    if not text.startswith("/"):
        return text
    match = _COMMAND_RE.match(text)
    if match is None:
        return text
    template = find_template(templates, match.group(1))
    if template is None:
        return text
    return substitute_args(template.content, parse_command_args(match.group(2) or ""))


__all__ = [
    "PromptTemplate",
    "TemplateLoadResult",
    "dedupe_templates",
    "expand_prompt_template",
    "find_template",
    "load_template_file",
    "load_templates_from_dir",
    "load_templates_from_path",
    "parse_command_args",
    "substitute_args",
]
