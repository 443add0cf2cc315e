"""Rough edges of the terminal app, one test each: the footer's provider, the setup notice's markdown, the layout
setting applied at once."""

from __future__ import annotations

from pathlib import Path

from app_helpers import AppHarness


def footer_rows(harness: AppHarness) -> list[str]:
    return harness.screen()[-2:]


async def test_the_footer_names_the_provider_when_two_providers_serve_models(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    await harness.start()
    assert "(faux) faux-1" not in "\n".join(footer_rows(harness))  # one provider: the model id is enough
    harness.model_runtime.registry.register_provider(
        "other", api="faux", base_url="http://localhost:0", models=harness.faux.models
    )
    harness.running.update_footer()
    assert "(faux) faux-1" in footer_rows(harness)[1]


async def test_the_no_model_notice_shows_its_example_as_code_without_fence_marks(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    await harness.start(model=None)
    screen = harness.text()
    assert "No model available." in screen and "**" not in screen
    assert '{"providers": {"local":' in screen
    assert "```" not in screen
