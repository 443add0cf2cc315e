"""The permission rules matched on bash command lines (the lines are read by bash_line.py).

- An **allow** rule matches when the whole line is understood (no unknown word, no construct
  beyond commands, lists, pipelines, subshells, groups, comments and harmless redirections) and
  every command matches it. A command behind a transparent wrapper (`time`, `nice`, `timeout`, …)
  is matched as the wrapped command; a program path is kept as written.
- A **deny** (or ask) rule matches when any command, or any wrapper layer of it, matches, with
  the program path reduced to its name and unknown words standing for anything; and it matches
  every line whose commands cannot all be named (a parse error, `$X v`, an unknown wrapper option,
  `bash -c "$X"`, a shell reading a script from a pipe).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from apex_coding_agent.core.bash_line import Command, ParsedLine, iter_layers, parse_line
from apex_coding_agent.core.bash_words import Words, word_value
from apex_coding_agent.core.bash_wrappers import WRAPPERS, reduce_name


@dataclass(frozen=True)
class BashRule:
    words: tuple[str, ...]
    prefix: bool


@lru_cache(maxsize=512)
def parse_rule(content: str) -> BashRule | None:
    """`git commit:*` = those words then anything; `git status` = exactly those words."""
    text = content.strip()
    prefix = text.endswith(":*")
    if prefix:
        text = text[:-2]
    try:
        words = tuple(shlex.split(text))
    except ValueError:
        words = tuple(text.split())
    return BashRule(words, prefix) if words else None


def _match_literal(words: Words, rule: BashRule) -> bool:
    if any(w is None for w in words):
        return False
    if rule.prefix:
        return words[: len(rule.words)] == rule.words
    return words == rule.words


def _match_maybe(words: Sequence[str | None], rule: Sequence[str], prefix: bool) -> bool:
    """Could `words` expand to the rule's words? An unknown word may stand for any number of words."""
    # The positions in the rule each prefix of `words` can reach, like a glob with `*` per unknown.
    end = len(rule)
    reached = {0}
    for word in words:
        if prefix and end in reached:
            return True
        if word is None:
            reached = set(range(min(reached), end + 1))
        else:
            reached = {j + 1 for j in reached if j < end and rule[j] == word}
        if not reached:
            return False
    return end in reached


def _deny_layer_matches(words: Words, rule: BashRule) -> bool:
    if not words or words[0] is None:
        return False
    name = words[0]
    names = {name, reduce_name(name)}
    if rule.words[0] not in names and reduce_name(rule.words[0]) not in names:
        return False
    return _match_maybe(words[1:], rule.words[1:], rule.prefix)


def allow_rule_matches(command: str, content: str) -> bool:
    """Every command of the line is understood and matches the rule."""
    rule = parse_rule(content)
    line = parse_line(command)
    if rule is None or not line.fully_understood or not line.commands:
        return False
    return all(c.allow_view is not None and _match_literal(c.allow_view, rule) for c in line.commands)


def deny_rule_matches(command: str, content: str) -> bool:
    """Any command anywhere in the line matches, or the line cannot be fully understood."""
    rule = parse_rule(content)
    line = parse_line(command)
    if not line.understood:
        return True
    return rule is not None and any(_deny_layer_matches(layer, rule) for layer in iter_layers(line))


def single_command_rule(command: str) -> str | None:
    """The exact rule for a line of one understood command (what an "always" answer records)."""
    line = parse_line(command)
    if not line.fully_understood or len(line.commands) != 1:
        return None
    words = line.commands[0].allow_view
    if not words or any(w is None for w in words):
        return None
    return shlex.join(w for w in words if w is not None)


__all__ = [
    "WRAPPERS",
    "BashRule",
    "Command",
    "ParsedLine",
    "allow_rule_matches",
    "deny_rule_matches",
    "parse_line",
    "parse_rule",
    "single_command_rule",
    "word_value",
]
