"""Prompt templates: loading, argument parsing and every placeholder (spec resources.md §4, acceptance 9-10)."""

import os
from pathlib import Path

import pytest

from apex_coding_agent.resources.diagnostics import SourceInfo
from apex_coding_agent.resources.prompt_templates import (
    PromptTemplate,
    dedupe_templates,
    expand_prompt_template,
    load_templates_from_dir,
    load_templates_from_path,
    parse_command_args,
    substitute_args,
)

INFO = SourceInfo(Path("/"), "local", "user")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def template(name: str, content: str) -> PromptTemplate:
    return PromptTemplate(name, "", content, Path(f"/p/{name}.md"), INFO)


def test_acceptance_nine() -> None:
    templates = [template("t", "Hello $1, all: $@, d: ${2:-none}")]
    assert expand_prompt_template('/t "a b" c', templates) == "Hello a b, all: a b c, d: c"
    assert expand_prompt_template("/t x", templates) == "Hello x, all: x, d: none"


def test_acceptance_ten_unknown_passes_and_subdirectories_are_not_scanned(tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    write(prompts / "review.md", "Review it")
    write(prompts / "nested" / "deep.md", "never loaded")
    loaded = load_templates_from_dir(prompts, INFO)
    assert [t.name for t in loaded.templates] == ["review"]
    assert expand_prompt_template("/unknown arg", loaded.templates) == "/unknown arg"
    assert expand_prompt_template("/deep", loaded.templates) == "/deep"
    assert expand_prompt_template("/review", loaded.templates) == "Review it"


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ("a b  c", ["a", "b", "c"]),
        ('"a b" c', ["a b", "c"]),
        ("'it is' \"x y\"", ["it is", "x y"]),
        ('pre"mid dle"post z', ["premid dlepost", "z"]),
        ("'don\\'t'", ["don\\t"]),  # no escapes: the backslash is literal and the quote closes
        ('"" x', ["", "x"]),
        ("  \n\t ", []),
        ('"unclosed rest', ["unclosed rest"]),
        ("'a \"b\" c'", ['a "b" c']),
    ],
)
def test_shell_like_argument_parsing(text: str, args: list[str]) -> None:
    assert parse_command_args(text) == args


@pytest.mark.parametrize(
    ("body", "args", "expected"),
    [
        ("$1|$2|$3", ["a", "b"], "a|b|"),
        ("$10", [str(i) for i in range(1, 11)], "10"),
        ("$@", ["a", "b c"], "a b c"),
        ("$ARGUMENTS", ["a", "b"], "a b"),
        ("${1:-def}", [""], "def"),
        ("${1:-def}", ["x"], "x"),
        ("${3:-none here}", ["x"], "none here"),
        ("${@:-all}", [], "all"),
        ("${ARGUMENTS:-all}", [], "all"),
        ("${ARGUMENTS:-all}", ["q", "r"], "q r"),
        ("${@:2}", ["a", "b", "c", "d"], "b c d"),
        ("${@:2:2}", ["a", "b", "c", "d"], "b c"),
        ("${@:5}", ["a"], ""),
        ("cost $ 5 and $x stay", ["a"], "cost $ 5 and $x stay"),
    ],
)
def test_placeholder_table(body: str, args: list[str], expected: str) -> None:
    assert substitute_args(body, args) == expected


def test_inserted_values_are_not_expanded_again() -> None:
    assert substitute_args("[$1] [$2]", ["$2", "${1:-x}"]) == "[$2] [${1:-x}]"
    assert substitute_args("$@", ["$1", "$ARGUMENTS"]) == "$1 $ARGUMENTS"


def test_expansion_only_at_the_start_of_the_text() -> None:
    templates = [template("t", "T $1")]
    assert expand_prompt_template("please /t x", templates) == "please /t x"
    assert expand_prompt_template("/t\nline two", templates) == "T line"
    assert expand_prompt_template("/tx", templates) == "/tx"
    assert expand_prompt_template("/", templates) == "/"


def test_frontmatter_description_argument_hint_and_body(tmp_path: Path) -> None:
    path = write(
        tmp_path / "prompts" / "fix.md",
        "---\ndescription: Fix an issue\nargument-hint: <issue> [area]\n---\n\nFix $1 in ${2:-everything}.\n",
    )
    (loaded,) = load_templates_from_path(path, INFO).templates
    assert (loaded.name, loaded.description, loaded.argument_hint) == ("fix", "Fix an issue", "<issue> [area]")
    assert loaded.content == "Fix $1 in ${2:-everything}."
    assert loaded.source_info.path == path
    assert expand_prompt_template("/fix #12", [loaded]) == "Fix #12 in everything."


def test_description_falls_back_to_the_first_body_line(tmp_path: Path) -> None:
    short = write(tmp_path / "short.md", "\n\n  First line  \nsecond\n")
    long = write(tmp_path / "long.md", "x" * 61 + "\n")
    exact = write(tmp_path / "exact.md", "y" * 60 + "\n")
    descriptions = [load_templates_from_path(p, INFO).templates[0].description for p in (short, long, exact)]
    assert descriptions == ["First line", "x" * 60 + "...", "y" * 60]


def test_malformed_template_warns_naming_the_file_and_the_rest_loads(tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    bad = write(prompts / "bad.md", "---\ndescription: 'open\n---\nbody\n")
    write(prompts / "good.md", "good body")
    result = load_templates_from_dir(prompts, INFO)
    assert [t.name for t in result.templates] == ["good"]
    (diag,) = result.diagnostics
    assert diag.type == "warning"
    assert diag.path == bad
    assert str(diag).startswith(f"{bad}: ")


def test_symlinked_files_are_followed_and_non_md_ignored(tmp_path: Path) -> None:
    target = write(tmp_path / "elsewhere" / "real.md", "linked body")
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    os.symlink(target, prompts / "linked.md")
    write(prompts / "notes.txt", "not a template")
    assert [t.name for t in load_templates_from_dir(prompts, INFO).templates] == ["linked"]


def test_collisions_keep_the_first(tmp_path: Path) -> None:
    first = load_templates_from_path(write(tmp_path / "a" / "same.md", "first"), INFO)
    second = load_templates_from_path(write(tmp_path / "b" / "same.md", "second"), INFO)
    merged = dedupe_templates([first, second])
    assert [t.content for t in merged.templates] == ["first"]
    (diag,) = merged.diagnostics
    assert diag.type == "collision"
    assert diag.collision is not None
    assert (diag.collision.kind, diag.collision.loser_path) == ("prompt", tmp_path / "b" / "same.md")


def test_missing_path_is_an_error(tmp_path: Path) -> None:
    result = load_templates_from_path(tmp_path / "none.md", INFO)
    assert [(d.type, d.path) for d in result.diagnostics] == [("error", tmp_path / "none.md")]
    assert load_templates_from_dir(tmp_path / "no-dir", INFO).diagnostics == []
