"""The names-only prompt catalog and its 600-token budget (spec resources.md §3, acceptance 7)."""

import math
import re
from pathlib import Path

from apex_coding_agent.resources.diagnostics import SourceInfo
from apex_coding_agent.resources.skills import CATALOG_HEADER, Skill, format_skills_catalog

INFO = SourceInfo(Path("/"), "local", "user")


def make(name: str, hidden: bool = False) -> Skill:
    path = Path(f"/skills/{name}/SKILL.md")
    return Skill(name, f"about {name}", path, path.parent, INFO, disable_model_invocation=hidden)


def catalog_names(text: str) -> list[str]:
    return re.findall(r"  <name>(.*?)</name>", text)


def test_no_visible_skills_gives_empty_text() -> None:
    assert format_skills_catalog([]) == ""
    assert format_skills_catalog([make("secret", hidden=True)]) == ""


def test_small_catalog_is_complete_sorted_and_escaped() -> None:
    text = format_skills_catalog([make("zeta"), make("a<b&c"), make("hidden", hidden=True), make("alpha")])
    assert text == (
        CATALOG_HEADER + "  <name>a&lt;b&amp;c</name>\n  <name>alpha</name>\n  <name>zeta</name>\n</available_skills>"
    )
    assert text.startswith("\n\nThe following skill names are available.")
    assert "skill_search" in CATALOG_HEADER
    assert "read tool" in CATALOG_HEADER
    assert CATALOG_HEADER.endswith("\n\n<available_skills>\n")
    assert "omitted" not in text


def test_three_hundred_skills_fit_the_budget_as_a_sorted_prefix() -> None:
    skills = [make(f"skill-{index:03d}", hidden=index % 50 == 7) for index in range(300)]
    visible = sorted(s.name for s in skills if not s.disable_model_invocation)
    text = format_skills_catalog(skills)
    assert math.ceil(len(text) / 4) <= 600
    shown = catalog_names(text)
    assert shown == visible[: len(shown)]
    assert not any(s.name in shown for s in skills if s.disable_model_invocation)
    omitted = len(visible) - len(shown)
    assert omitted > 1
    assert text.endswith(
        f"\n  <!-- {omitted} more skills omitted for space; call skill_search to find them -->\n</available_skills>"
    )


def test_prefix_is_the_longest_that_fits() -> None:
    skills = [make(f"skill-{index:03d}") for index in range(300)]
    shown = len(catalog_names(format_skills_catalog(skills)))
    # One more line would exceed the budget once the worst-case comment (300 omitted) is reserved.
    worst_comment = "  <!-- 300 more skills omitted for space; call skill_search to find them -->"
    lines = [f"  <name>skill-{index:03d}</name>" for index in range(shown + 1)]
    size_with_next = len(CATALOG_HEADER) + sum(len(line) + 1 for line in lines) + len(worst_comment)
    assert size_with_next + len("\n</available_skills>") > 2400


def test_singular_comment_when_one_skill_is_omitted() -> None:
    skills = [make("a" * 120), make("b" * 120)]
    full = format_skills_catalog(skills)
    budget = math.ceil((len(full) - 15) / 4)  # a little too small for both names
    text = format_skills_catalog(skills, budget_tokens=budget)
    assert catalog_names(text) == ["a" * 120]
    assert "  <!-- 1 more skill omitted for space; call skill_search to find them -->\n</available_skills>" in text
    assert math.ceil(len(text) / 4) <= budget
