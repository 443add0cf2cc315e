"""Commands that run another command (`env`, `sudo`, `timeout`, `xargs`, `watch`, the shells): how to find the
wrapped command behind their options. Used by bash_line.py."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from apex_coding_agent.core.bash_words import Words


@dataclass(frozen=True)
class Wrapper:
    """How to find the command a wrapper runs: options taking a value, then `positional` words."""

    value_options: frozenset[str] = frozenset()
    flags: frozenset[str] | None = None
    """Known options without a value; None = any other `-x` is taken as a flag."""
    positional: int = 0
    assignments: bool = False
    transparent: bool = True
    """An allow rule sees through it (it does not change what the wrapped command may do)."""
    no_command_flags: frozenset[str] = frozenset()
    """Flags that make it not run the command at all (`command -v rm` only looks rm up)."""
    attached_only: frozenset[str] = frozenset()
    """Short options whose optional value can only be attached (`xargs -i{}`, `-l5`)."""


def _opts(*names: str) -> frozenset[str]:
    return frozenset(names)


WRAPPERS: dict[str, Wrapper] = {
    "env": Wrapper(
        _opts("-u", "--unset", "-C", "--chdir", "-S", "--split-string"),
        _opts("-i", "--ignore-environment", "-0", "--null", "-", "-v", "--debug"),
        assignments=True,
    ),
    "sudo": Wrapper(
        _opts(
            *("-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R"),
            *("--user", "--group", "--host", "--prompt", "--close-from", "--chdir", "--role", "--type"),
            *("--other-user", "--command-timeout", "--chroot"),
        ),
        _opts(
            *("-A", "-b", "-E", "-H", "-i", "-k", "-K", "-n", "-P", "-S", "-s", "-B", "-N"),
            *("--askpass", "--background", "--preserve-env", "--set-home", "--login", "--reset-timestamp"),
            *("--non-interactive", "--preserve-groups", "--stdin", "--shell", "--bell", "--no-update"),
        ),
        assignments=True,
        transparent=False,
        no_command_flags=_opts("-l", "--list", "-v", "--validate", "-V", "--version", "-e", "--edit", "-K"),
    ),
    "doas": Wrapper(_opts("-u", "-C"), _opts("-n", "-s", "-L"), transparent=False),
    "nice": Wrapper(_opts("-n", "--adjustment"), None),
    "ionice": Wrapper(_opts("-c", "--class", "-n", "--classdata"), _opts("-t", "--ignore")),
    "timeout": Wrapper(
        _opts("-s", "--signal", "-k", "--kill-after"),
        _opts("--preserve-status", "--foreground", "-v", "--verbose", "-f"),
        positional=1,
    ),
    "nohup": Wrapper(flags=_opts()),
    "setsid": Wrapper(flags=_opts("-c", "--ctty", "-f", "--fork", "-w", "--wait")),
    "stdbuf": Wrapper(_opts("-i", "-o", "-e", "--input", "--output", "--error"), _opts()),
    "time": Wrapper(_opts("-f", "--format", "-o", "--output"), _opts("-p", "-a", "--append", "-v", "--verbose")),
    "command": Wrapper(flags=_opts("-p"), no_command_flags=_opts("-v", "-V")),
    "builtin": Wrapper(flags=_opts()),
    "exec": Wrapper(_opts("-a"), _opts("-c", "-l")),
    "xargs": Wrapper(
        _opts(
            *("-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args"),
            *("--max-procs", "--max-chars", "--process-slot-var"),
        ),
        _opts(
            *("-0", "-r", "-t", "-p", "-x", "-o", "--null", "--no-run-if-empty", "--verbose", "--interactive"),
            *("--exit", "--open-tty", "--replace", "--eof", "--max-lines"),
        ),
        transparent=False,
        attached_only=_opts("-e", "-i", "-l"),
    ),
    "busybox": Wrapper(flags=_opts(), transparent=False),
    "coproc": Wrapper(flags=_opts(), transparent=False),
}
WATCH = Wrapper(
    _opts("-n", "--interval", "-q", "--equexit"),
    _opts("-b", "--beep", "-c", "--color", "-C", "--no-color", "-e", "--errexit", "-g", "--chgexit", "-p", "--precise")
    | _opts("-t", "--no-title", "-w", "--no-wrap", "-x", "--exec", "-d", "--differences", "--differences=permanent"),
)
SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "rbash", "fish", "csh", "tcsh"})
# A shell runs the file these name before anything else.
STARTUP_ASSIGNMENTS = ("BASH_ENV=", "ENV=")
SHELL_VALUE_OPTIONS = _opts("-o", "+o", "-O", "+O", "--rcfile", "--init-file")
# Builtins whose argument is itself shell text: `trap 'rm v' EXIT`, `alias ls='rm v'`.
FIND_EXEC = _opts("-exec", "-execdir", "-ok", "-okdir")


def unwrap(words: Words, wrapper: Wrapper) -> tuple[Words | None, bool]:
    """(the wrapped command, or None when there is none; False when the options are not understood)."""
    i = 1
    while i < len(words):
        word = words[i]
        if word is None:
            return None, False
        if word == "--":
            i += 1
            break
        if wrapper.assignments and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", word):
            i += 1
            continue
        if word == "-" and wrapper.flags is not None and "-" in wrapper.flags:
            i += 1
            continue
        if not word.startswith("-") or word == "-":
            break
        if word in wrapper.no_command_flags:
            return None, True
        if word.startswith("--"):
            name = word.split("=", 1)[0]
            if name in wrapper.value_options:
                i += 1 if "=" in word else 2
                continue
            if wrapper.flags is None or name in wrapper.flags:
                i += 1
                continue
            return None, False
        if wrapper.flags is None and re.fullmatch(r"-\d+", word):  # nice -5
            i += 1
            continue
        # A cluster of short options, the last of which may take a value (`-Eu root`, `-uroot`).
        j, consumed = 1, 1
        while j < len(word):
            opt = "-" + word[j]
            if opt in wrapper.no_command_flags:
                return None, True
            if opt in wrapper.attached_only:
                break
            if opt in wrapper.value_options:
                consumed = 1 if j + 1 < len(word) else 2
                break
            if wrapper.flags is not None and opt not in wrapper.flags:
                return None, False
            j += 1
        i += consumed
    for _ in range(wrapper.positional):
        if i >= len(words) or words[i] is None:
            return None, i >= len(words)
        i += 1
    return (words[i:] or None), True


def xargs_inner(words: Words, inner: Words) -> Words:
    """With `-I R` xargs puts each input line where R appears: those words are unknown."""
    replace: str | None = None
    for i, word in enumerate(words[1 : len(words) - len(inner)], start=1):
        if word is None:
            continue
        if word == "-I" and i + 1 < len(words):
            replace = words[i + 1]
        elif word.startswith("-I"):
            replace = word[2:]
        elif word.startswith("--replace"):
            replace = word.split("=", 1)[1] if "=" in word else "{}"
        elif word.startswith("-i"):
            replace = word[2:] or "{}"
    if not replace:
        return inner
    return tuple(None if w is None or replace in w else w for w in inner)


def unseen_script(path: str | None) -> bool:
    """A script argument that is really a pipe or a stream (`bash /dev/stdin`, `source <(…)`)."""
    return path is None or path.startswith(("/dev/", "/proc/"))


def reduce_name(name: str) -> str:
    return posixpath.basename(name) or name


__all__ = [
    "FIND_EXEC",
    "SHELLS",
    "SHELL_VALUE_OPTIONS",
    "STARTUP_ASSIGNMENTS",
    "WATCH",
    "WRAPPERS",
    "Wrapper",
    "reduce_name",
    "unseen_script",
    "unwrap",
    "xargs_inner",
]
