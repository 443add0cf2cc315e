"""Fuzzy matching for picker filters: query characters in order, scored so tighter and earlier matches rank first."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")


def fuzzy_score(query: str, text: str) -> float | None:
    """Score of `query` against `text` (case-insensitive), or None when it does not match. Lower is better.

    Every whitespace-separated token of the query must occur in `text` as a subsequence. A token found as a
    contiguous substring scores best; otherwise gaps between matched characters and a late first match cost.
    An empty query matches everything with score 0.
    """
    haystack = text.lower()
    total = 0.0
    for token in query.lower().split():
        score = _token_score(token, haystack)
        if score is None:
            return None
        total += score
    return total


def _token_score(token: str, haystack: str) -> float | None:
    exact = haystack.find(token)
    if exact >= 0:
        # A word-start hit beats a hit inside a word; both beat any scattered match.
        at_word_start = exact == 0 or not haystack[exact - 1].isalnum()
        return (0.0 if at_word_start else 0.5) + exact / 1000
    position = -1
    first = -1
    gaps = 0
    for char in token:
        found = haystack.find(char, position + 1)
        if found < 0:
            return None
        if first < 0:
            first = found
        elif found > position + 1:
            gaps += found - position - 1
        position = found
    return 1.0 + gaps + first / 1000


def fuzzy_filter(query: str, items: Iterable[T], text: Callable[[T], str]) -> list[T]:
    """Items whose `text` matches `query`, best first; ties keep input order. An empty query keeps every item."""
    if not query.strip():
        return list(items)
    scored: list[tuple[float, int, T]] = []
    for index, item in enumerate(items):
        score = fuzzy_score(query, text(item))
        if score is not None:
            scored.append((score, index, item))
    scored.sort(key=lambda entry: (entry[0], entry[1]))
    return [item for _, _, item in scored]


def all_tokens_in(query: str, text: str) -> bool:
    """True when every whitespace-separated token of `query` is a substring of `text` (case-insensitive)."""
    haystack = text.lower()
    return all(token in haystack for token in query.lower().split())


def clamp(index: int, items: Sequence[object]) -> int:
    """`index` limited to the positions of `items` (0 when empty)."""
    return max(0, min(index, len(items) - 1))
