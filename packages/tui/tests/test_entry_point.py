"""The CLI of apex-coding-agent finds this package's app through an entry point."""

from importlib.metadata import entry_points

from apex_tui.app import run_interactive


def test_interactive_entry_point_points_at_the_app() -> None:
    found = {ep.name: ep for ep in entry_points(group="apex_code.interactive")}
    assert "tui" in found
    assert found["tui"].load() is run_interactive
