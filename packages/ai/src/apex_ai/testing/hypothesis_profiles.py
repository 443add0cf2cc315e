"""Hypothesis settings profiles shared by every package's tests (each `tests/conftest.py` calls `register_profiles`).

- `ci`, the default: each property test tries the same examples on every run (`derandomize=True`, no example
  database), so a rare counterexample cannot show up as a flaky failure of an unrelated change.
- `explore`: fresh random examples on every run, and tests whose example count is `examples(n)` try
  `APEX_HYPOTHESIS_EXAMPLES` (default 20,000) instead of `n`. For a long hunt run by hand; a failure prints the
  blob that replays it.

Pick one with `APEX_HYPOTHESIS_PROFILE=explore` or pytest's `--hypothesis-profile=explore`.
Hypothesis is a test dependency only: import this module from tests, never from a package's code.
"""

from __future__ import annotations

import os

from hypothesis import settings

CI_PROFILE = "ci"
EXPLORE_PROFILE = "explore"
PROFILE_ENV = "APEX_HYPOTHESIS_PROFILE"
EXAMPLES_ENV = "APEX_HYPOTHESIS_EXAMPLES"
DEFAULT_EXPLORE_EXAMPLES = 20_000


def register_profiles() -> None:
    """Register `ci` and `explore`, and load the one `APEX_HYPOTHESIS_PROFILE` names (default `ci`).

    A profile loaded before (pytest's `--hypothesis-profile`, or an earlier call) is kept.
    """
    settings.register_profile(CI_PROFILE, derandomize=True, database=None)
    explore_examples = int(os.environ.get(EXAMPLES_ENV) or DEFAULT_EXPLORE_EXAMPLES)
    settings.register_profile(
        EXPLORE_PROFILE, derandomize=False, max_examples=explore_examples, print_blob=True, deadline=None
    )
    if settings.get_current_profile_name() == "default":
        settings.load_profile(os.environ.get(PROFILE_ENV) or CI_PROFILE)


def examples(count: int) -> int:
    """`count` examples, or the explore profile's count while exploring.

    For `@settings(max_examples=examples(n))`: a count given in the decorator would otherwise beat the profile's.
    """
    if settings.get_current_profile_name() == EXPLORE_PROFILE:
        return settings().max_examples  # a fresh settings object inherits the loaded profile
    return count


__all__ = [
    "CI_PROFILE",
    "DEFAULT_EXPLORE_EXAMPLES",
    "EXAMPLES_ENV",
    "EXPLORE_PROFILE",
    "PROFILE_ENV",
    "examples",
    "register_profiles",
]
