"""A pure-Python stand-in for the directory walk of ripgrep and fd, used when neither binary is installed.

It follows the same rules the tools ask the binaries for: hidden entries included, symlinks not followed, `.ignore`
(plus `.rgignore` / `.fdignore`) honoured everywhere, `.gitignore` honoured inside git repositories (or always, when
asked). Globs use gitignore syntax: `*` and `?` stop at `/`, `**` crosses directories, `{a,b}` alternates.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache


@lru_cache(maxsize=512)
def glob_to_regex(glob: str) -> re.Pattern[str]:
    """Compile a gitignore-style glob that must match a whole `/`-separated path."""
    out: list[str] = []
    index = 0
    length = len(glob)
    while index < length:
        char = glob[index]
        if glob.startswith("**/", index) and (index == 0 or glob[index - 1] == "/"):
            out.append("(?:.*/)?")
            index += 3
        elif glob.startswith("**", index) and index + 2 == length and (index == 0 or glob[index - 1] == "/"):
            out.append(".*")
            index += 2
        elif char == "*":
            out.append("[^/]*")
            index += 1
        elif char == "?":
            out.append("[^/]")
            index += 1
        elif char == "[":
            close = glob.find("]", index + 2)
            if close == -1:
                out.append(re.escape(char))
                index += 1
                continue
            body = glob[index + 1 : close]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            index = close + 1
        elif char == "{":
            close = glob.find("}", index)
            if close == -1:
                out.append(re.escape(char))
                index += 1
                continue
            options = glob[index + 1 : close].split(",")
            out.append("(?:" + "|".join(glob_to_regex(option).pattern[:-2] for option in options) + ")")
            index = close + 1
        elif char == "\\" and index + 1 < length:
            out.append(re.escape(glob[index + 1]))
            index += 2
        else:
            out.append(re.escape(char))
            index += 1
    return re.compile("".join(out) + r"\Z")


@dataclass(frozen=True)
class IgnoreRule:
    """One line of an ignore file, already parsed. `base` is the directory the rule is relative to."""

    base: str
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    anchored: bool

    def matches(self, path: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        prefix = self.base.rstrip("/") + "/"
        if not path.startswith(prefix):
            return False
        relative = path[len(prefix) :]
        if self.anchored:
            return self.regex.match(relative) is not None
        return self.regex.match(relative.rsplit("/", 1)[-1]) is not None


def parse_ignore_file(text: str, base: str) -> list[IgnoreRule]:
    rules: list[IgnoreRule] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        elif line.startswith("\\"):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        rules.append(IgnoreRule(base, glob_to_regex(line), negated, dir_only, anchored))
    return rules


def _read_rules(directory: str, names: tuple[str, ...]) -> list[IgnoreRule]:
    rules: list[IgnoreRule] = []
    for name in names:
        try:
            with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as handle:
                rules.extend(parse_ignore_file(handle.read(), directory))
        except OSError:
            continue
    return rules


def find_git_root(directory: str) -> str | None:
    """The nearest directory at or above `directory` containing `.git`."""
    current = os.path.abspath(directory)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _is_ignored(rules: list[IgnoreRule], path: str, is_dir: bool) -> bool:
    # Later rules (deeper files, later lines) override earlier ones, as in git.
    for rule in reversed(rules):
        if rule.matches(path, is_dir):
            return not rule.negated
    return False


@dataclass(frozen=True)
class WalkEntry:
    path: str
    is_dir: bool  # a real directory; a symlink to one is not (the walk never follows links)
    is_symlink: bool = False


def walk(
    root: str,
    extra_ignore_files: tuple[str, ...] = (),
    gitignore_outside_git: bool = False,
    override: Callable[[WalkEntry], bool | None] | None = None,
) -> Iterator[WalkEntry]:
    """Yield every non-ignored entry below `root` (not `root` itself), directories before their contents, sorted.

    `override` is asked first, like rg's `--glob` overrides: True keeps the entry even when an ignore file names it,
    False drops it (a directory is then not descended into), None leaves the decision to the ignore files.
    """
    root = os.path.abspath(root)
    git_root = find_git_root(root)
    use_gitignore = git_root is not None or gitignore_outside_git
    names = (".gitignore", ".ignore", *extra_ignore_files) if use_gitignore else (".ignore", *extra_ignore_files)
    # Parents' ignore files apply too (up to the repository root for .gitignore).
    parents: list[str] = []
    current = os.path.dirname(root)
    while current != os.path.dirname(current):
        parents.append(current)
        if git_root is not None and current == git_root:
            break
        current = os.path.dirname(current)
    inherited: list[IgnoreRule] = []
    for parent in reversed(parents):
        in_repo = git_root is not None and parent.startswith(git_root)
        inherited.extend(_read_rules(parent, names if in_repo else (".ignore", *extra_ignore_files)))
    yield from _walk_dir(root, inherited, names, override)


def _walk_dir(
    directory: str,
    rules: list[IgnoreRule],
    names: tuple[str, ...],
    override: Callable[[WalkEntry], bool | None] | None,
) -> Iterator[WalkEntry]:
    rules = rules + _read_rules(directory, names)
    try:
        with os.scandir(directory) as iterator:
            entries = sorted(iterator, key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
            is_symlink = entry.is_symlink()
        except OSError:
            continue
        found = WalkEntry(entry.path, is_dir, is_symlink)
        decision = None if override is None else override(found)
        if decision is False or (decision is None and _is_ignored(rules, entry.path, is_dir)):
            continue
        yield found
        if is_dir:
            yield from _walk_dir(entry.path, rules, names, override)


__all__ = ["IgnoreRule", "WalkEntry", "find_git_root", "glob_to_regex", "parse_ignore_file", "walk"]
