"""Footer lines and token formatting (tui.md §1)."""

import pytest
from urwid.testing import render_runs, render_text

from apex_tui.widgets import Footer, FooterState, format_tokens

ACCEPTANCE = FooterState(
    cwd="/home/u/proj",
    home="/home/u",
    git_branch="main",
    session_name="fix bug",
    input_tokens=12345,
    output_tokens=800,
    cache_read_tokens=0,
    cost=0.0123,
    context_percent=74.2,
    context_window=200_000,
    auto_compact=True,
    provider="anthropic",
    model_id="claude-sonnet-4-5",
    reasoning=True,
    thinking_level="medium",
)


@pytest.mark.parametrize(
    ("count", "text"),
    [
        (0, "0"),
        (999, "999"),
        (1000, "1.0k"),
        (9_949, "9.9k"),
        (12_345, "12k"),
        (999_000, "999k"),
        (1_200_000, "1.2M"),
        (12_600_000, "13M"),
    ],
)
def test_format_tokens(count: int, text: str) -> None:
    assert format_tokens(count) == text


def test_acceptance_line_two() -> None:
    lines = render_text(Footer(ACCEPTANCE), (80,))
    assert lines[0].rstrip() == "~/proj (main) • fix bug"
    assert lines[1].startswith("↑12k ↓800 $0.012 74.2%!/200k (auto)")
    assert lines[1].endswith("claude-sonnet-4-5 • medium")
    assert len(lines) == 2


def test_context_warning_and_error_styles() -> None:
    footer = Footer(ACCEPTANCE)
    runs = render_runs(footer, (80,))[1]
    assert any(text == "74.2%!/200k (auto)" and "warning" in str(attr) for attr, text in runs)
    footer.update(context_percent=95.0)
    runs = render_runs(footer, (80,))[1]
    assert any(text == "95.0%!!/200k (auto)" and "error" in str(attr) for attr, text in runs)
    footer.update(color_blind=True)
    runs = render_runs(footer, (80,))[1]
    assert any(text == "95.0%!!/200k (auto)" and "accent" in str(attr) for attr, text in runs)


def test_optional_parts() -> None:
    footer = Footer(FooterState(cwd="/srv", context_percent=None, context_window=128_000, model_id=None))
    assert render_text(footer, (40,), strip=True) == ["/srv", "?/128k                          no-model"]
    footer.update(
        permission_mode="plan",
        cache_read_tokens=5000,
        cache_write_tokens=20,
        cache_hit_percent=80.0,
        subscription=True,
        context_percent=1.0,
        model_id="gpt",
        reasoning=True,
        thinking_level="off",
        provider="openai",
        show_provider=True,
        extension_statuses=(("z", "last"), ("a", "first")),
    )
    lines = render_text(footer, (100,), strip=True)
    assert lines[1].startswith("plan R5.0k W20 CH80% $0.000 (sub) 1.0%/128k")
    assert lines[1].endswith("(openai) gpt • thinking off")
    assert lines[2] == "first last"


def test_token_display_modes_and_ascii() -> None:
    footer = Footer(ACCEPTANCE)
    footer.update(token_display="full", ascii_symbols=True)
    line = render_text(footer, (80,), strip=True)[1]
    assert line.startswith("^12,345 v800 $0.012")
    assert line.endswith("claude-sonnet-4-5 - medium")
    footer.update(token_display="off")
    assert render_text(footer, (80,), strip=True)[1].startswith("74.2%!/200k (auto)")


def test_narrow_footer_keeps_the_model() -> None:
    lines = render_text(Footer(ACCEPTANCE), (40,))
    assert all(len(line) == 40 for line in lines)
    assert lines[1].rstrip().endswith("claude-sonnet-4-5 • medium")
    assert lines[1].startswith("↑12k ↓800")
    assert "…" in lines[1]


def test_update_without_change_keeps_the_canvas() -> None:
    footer = Footer(ACCEPTANCE)
    first = footer.render((80,))
    footer.update(model_id="claude-sonnet-4-5")
    assert footer.render((80,)) is first  # urwid's canvas cache answered: nothing was invalidated
