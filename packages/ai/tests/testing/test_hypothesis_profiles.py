"""The shared Hypothesis profiles: the same examples on every run by default, a long random hunt on request."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apex_ai.testing.hypothesis_profiles import (
    CI_PROFILE,
    EXAMPLES_ENV,
    EXPLORE_PROFILE,
    PROFILE_ENV,
    examples,
    register_profiles,
)


def _drawn_twice() -> tuple[list[str], list[str]]:
    """The examples one property test draws in two runs of it."""
    seen: list[str] = []

    @given(st.text(min_size=1))
    def probe(text: str) -> None:
        seen.append(text)

    probe()
    first = list(seen)
    seen.clear()
    probe()
    return first, seen


def test_a_property_test_draws_the_same_examples_on_every_run() -> None:
    """Without this a rare counterexample would fail one CI run in many, on an unrelated change."""
    assert settings.get_current_profile_name() == CI_PROFILE
    first, second = _drawn_twice()
    assert len(first) > 10 and first == second


def test_the_explore_profile_is_random_and_raises_the_example_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    before = settings.get_current_profile_name()
    try:
        with monkeypatch.context() as patch:
            patch.setenv(PROFILE_ENV, EXPLORE_PROFILE)
            patch.setenv(EXAMPLES_ENV, "40")
            settings.load_profile("default")
            register_profiles()
            assert settings.get_current_profile_name() == EXPLORE_PROFILE
            assert (examples(150), examples(3)) == (40, 40)
            first, second = _drawn_twice()
            assert first != second  # 40 non-empty texts drawn twice at random: equal runs would mean a fixed seed
            register_profiles()  # a second package's conftest keeps the profile chosen
            assert settings.get_current_profile_name() == EXPLORE_PROFILE
    finally:
        register_profiles()  # the registrations of this run's environment again
        settings.load_profile(before)
    assert examples(150) == 150 or before == EXPLORE_PROFILE
