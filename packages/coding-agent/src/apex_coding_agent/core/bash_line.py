"""A bash command line read with the tree-sitter-bash grammar: the commands it runs and whether it was understood.

A line becomes a list of commands: every simple command anywhere in it (inside `$(…)`, backticks,
process substitutions, subshells, groups, pipelines, function bodies, here-documents), the commands
of `bash -c`/`sh -c` strings, `eval` arguments, `trap` actions and `alias` values, and the command
behind wrappers such as `env`, `sudo`, `timeout` or `xargs` (bash_wrappers.py). Each word is reduced to
its literal value after quote removal, or marked unknown when the shell would expand it (bash_words.py).
The permission rules matched on a line live in bash_rules.py.

tree-sitter is imported on first use: start-up never pays for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from apex_coding_agent.core.bash_words import Words, double_quoted, node_text, word_value
from apex_coding_agent.core.bash_wrappers import (
    FIND_EXEC,
    SHELL_VALUE_OPTIONS,
    SHELLS,
    STARTUP_ASSIGNMENTS,
    WATCH,
    WRAPPERS,
    reduce_name,
    unseen_script,
    unwrap,
    xargs_inner,
)

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

# Deeper nesting of `bash -c`/`eval` strings than this is not followed: the line is not understood.
MAX_DEPTH = 8
# Longer lines are not parsed (a bound on the gate's time): they are not understood either.
MAX_LINE_CHARS = 100_000


@dataclass(frozen=True)
class Command:
    """One command of a line: its wrapper layers, outermost first, and how an allow rule sees it."""

    layers: tuple[Words, ...]
    allow_view: Words | None
    """The words an allow rule is matched against; None when no allow rule can hold for it."""


@dataclass
class ParsedLine:
    commands: list[Command] = field(default_factory=list)
    understood: bool = True
    """Every command of the line can be named (what a deny rule needs)."""
    fully_understood: bool = True
    """Every word is literal and nothing but plain commands appear (what an allow rule needs)."""
    hidden: list[Command] = field(default_factory=list)
    """Commands inside quoted text that may be evaluated later: deny rules see them too."""

    def unknown(self) -> None:
        self.understood = False
        self.fully_understood = False


@lru_cache(maxsize=1)
def _parser() -> Parser:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


@lru_cache(maxsize=256)
def parse_line(command: str) -> ParsedLine:
    """The commands of a bash line and whether it was understood (cached: the gate asks per rule)."""
    line = ParsedLine()
    if len(command) > MAX_LINE_CHARS:
        line.unknown()
        return line
    _parse_into(command, line, 0)
    return line


def _parse_into(source: str, line: ParsedLine, depth: int) -> None:
    if depth > MAX_DEPTH:
        line.unknown()
        return
    data = source.encode("utf-8", "surrogatepass")
    tree = _parser().parse(data)
    root = tree.root_node
    if root.has_error or _continuation_inside_word(source):
        line.unknown()
    _Walker(line, depth).walk(root)


# A backslash-newline between two non-blank characters joins them into one word for bash, while
# tree-sitter treats it as a word break: `r\<newline>m v` runs `rm v`.
_JOINING_CONTINUATION = re.compile(r"(?<!\\)(?:\\\\)*\\\n")


def _continuation_inside_word(source: str) -> bool:
    for match in _JOINING_CONTINUATION.finditer(source):
        before = source[match.end() - 3] if match.end() >= 3 else " "
        after = source[match.end()] if match.end() < len(source) else " "
        if not before.isspace() and not after.isspace():
            return True
    return False


def _misparsed(command: Node) -> bool:
    """Whether tree-sitter split or joined words and commands other than bash does.

    For bash an unquoted newline (not escaped by a backslash) always ends a simple command, and a comment runs to
    the end of its line. tree-sitter-bash sometimes continues a command across such a newline, e.g. before a word
    starting with a backslash (`ls # '` / `\\rm v` parses as `ls` with arguments `\\rm` and `v`): a command whose
    words are separated by a bare newline, or that goes on after a comment, is not what bash would run.
    Likewise two words with nothing between them are one word for bash, which tree-sitter may keep apart.
    """
    words = sorted(
        command.children_by_field_name("name") + command.children_by_field_name("argument"),
        key=lambda child: child.start_byte,
    )
    comments = [child for child in command.children if child.type == "comment"]
    if comments and words and any(comment.start_byte < words[-1].start_byte for comment in comments):
        return True
    source = command.text or b""
    base = command.start_byte
    for before, after in zip(words, words[1:], strict=False):
        gap = source[before.end_byte - base : after.start_byte - base]
        if not gap or b"\n" in gap.replace(b"\\\n", b""):
            # No blank between two words: bash reads them as one (`r\`ls\`m` runs `rm` when ls prints nothing).
            return True
    # An unquoted word never holds a bare newline for bash; tree-sitter may start one there (`ls` / `\\rm v`).
    unquoted = (w.named_children[0] if w.type == "command_name" and w.named_children else w for w in words)
    return any(w.type == "word" and b"\n" in (w.text or b"").replace(b"\\\n", b"") for w in unquoted)


# Named node types an allowed line may contain; anything else (functions, loops, assignments,
# tests, expansions, substitutions, …) makes a line not fully understood.
_PLAIN_NODES = frozenset(
    {
        *("program", "list", "pipeline", "command", "command_name", "comment", "redirected_statement"),
        *("subshell", "compound_statement", "negated_command", "file_redirect", "file_descriptor"),
        *("heredoc_redirect", "heredoc_start", "heredoc_body", "heredoc_content", "heredoc_end"),
        *("herestring_redirect", "word", "number", "string", "string_content", "raw_string"),
        *("ansi_c_string", "concatenation"),
    }
)
_LITERAL_TEXT = frozenset({"raw_string", "string_content", "ansi_c_string", "heredoc_content"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})


class _Walker:
    def __init__(self, line: ParsedLine, depth: int) -> None:
        self.line = line
        self.depth = depth

    def walk(self, root: Node) -> None:
        # A loop, not recursion: a line of a thousand nested subshells must not overflow the stack.
        stack = [root]
        while stack:
            node = stack.pop()
            self._visit(node)
            stack.extend(reversed(node.children))

    def _visit(self, node: Node) -> None:
        if node.is_named and node.type not in _PLAIN_NODES:
            self.line.fully_understood = False
        if node.type == "variable_assignment" and node_text(node).startswith(STARTUP_ASSIGNMENTS):
            self.line.unknown()
        if node.type in _LITERAL_TEXT and ("$(" in node_text(node) or "`" in node_text(node)):
            self._scan_literal(node)
        if node.type == "command_substitution" and node_text(node).startswith("`") and "\\" in node_text(node):
            # Within backticks bash drops the backslash before a backslash, backtick or dollar and
            # then parses the rest, so an escaped inner backtick pair is a nested substitution.
            inner = re.sub(r"\\([\\`$])", r"\1", node_text(node)[1:-1])
            self._nested((inner,), joined=False)
        if node.type == "command":
            self._command(node)
        elif node.type == "file_redirect":
            self._redirect(node)

    def _scan_literal(self, node: Node) -> None:
        """Quoted text that holds substitution syntax may run later (`a='x[$(rm v)]'; echo $((a))`):
        the commands in it count for deny rules, never for allow rules."""
        if self.depth >= MAX_DEPTH:
            return
        if node.type == "string_content":
            value: str | None = double_quoted(node_text(node))
        elif node.type == "heredoc_content":
            value = node_text(node)
        else:
            value = word_value(node)
        if value is None:
            return
        # Only what would run: the substitutions in the text, not the words around them (a script
        # written through a quoted here-document may mention any program).
        stack = [_parser().parse(value.encode("utf-8", "surrogatepass")).root_node]
        while stack:
            sub = stack.pop()
            if sub.type != "command_substitution":
                stack.extend(sub.children)
                continue
            text = node_text(sub)
            scratch = ParsedLine()
            _parse_into(text[2:-1] if text.startswith("$(") else text[1:-1], scratch, self.depth + 1)
            self.line.hidden.extend(scratch.commands)
            self.line.hidden.extend(scratch.hidden)

    def _redirect(self, node: Node) -> None:
        destination = node.child_by_field_name("destination")
        operator = next((node_text(c) for c in node.children if not c.is_named), "")
        target = word_value(destination) if destination is not None else None
        if target is None:
            self.line.fully_understood = False
        elif operator in ("<",) or operator in (">&", "<&") and (target.isdigit() or target == "-"):
            return
        elif target not in _HARMLESS_TARGETS:
            # Writing a file is not part of what a command rule allows.
            self.line.fully_understood = False

    def _command(self, node: Node) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return  # only assignments or redirections: their substitutions are walked as children
        if _misparsed(node):
            self.line.unknown()
        words: list[str | None] = []
        for child in node.children_by_field_name("name") + node.children_by_field_name("argument"):
            target = child.named_children[0] if child.type == "command_name" and child.named_children else child
            words.append(word_value(target))
        if None in words or any(c.type == "variable_assignment" for c in node.named_children):
            self.line.fully_understood = False  # `ls *.py`, `PATH=. ls`, `LD_PRELOAD=x ls`
        self._add(tuple(words), node)

    def _add(self, words: Words, node: Node | None) -> None:
        """Record a command, following wrappers and the shell text some commands run."""
        line = self.line
        layers: list[Words] = [words]
        allow_view: Words | None = words
        see_through = True
        current: Words | None = words
        while current:
            name = current[0]
            if name is None:
                line.unknown()  # `$X v`, `$(echo rm) v`, `r?` — the program cannot be named
                break
            base = reduce_name(name)
            if base in SHELLS:
                self._shell(current, node)
                if see_through:
                    allow_view = None
                break
            if base == "eval":
                self._nested(current[2:] if current[1:2] == ("--",) else current[1:], joined=True)
                if see_through:
                    allow_view = None
                break
            if base in ("source", ".") and (len(current) < 2 or unseen_script(current[1])):
                line.unknown()  # `source <(curl …)`: the text it runs is not on the line
            if base in ("trap", "alias", "mapfile", "readarray", "su", "runuser"):
                self._builtin_text(base, current[1:])
            if base == "hash" and "-p" in current:
                line.unknown()  # `hash -p /bin/rm ls` makes `ls` run rm
            if base in ("env", "sudo") and any((w or "").startswith(STARTUP_ASSIGNMENTS) for w in current[1:]):
                line.unknown()  # `env BASH_ENV=<(…) bash -c ls`: a start-up file the shell runs first
            if base == "watch":
                inner, ok = unwrap(current, WATCH)
                if not ok:
                    line.unknown()
                elif inner:
                    self._nested(inner, joined=True)  # watch hands its words to `sh -c`
                allow_view = None if see_through else allow_view
                break
            if base == "find":
                self._find(current)
            wrapper = WRAPPERS.get(base)
            if wrapper is None:
                break
            inner, ok = unwrap(current, wrapper)
            if not ok:
                line.unknown()
            if base == "env" and inner != current[1:]:
                line.fully_understood = False  # assignments, -S, -C: the environment changes
                if any(
                    w in ("-S", "--split-string") or (w or "").startswith(("-S", "--split-string=")) for w in current
                ):
                    line.unknown()
            if base in ("xargs", "coproc"):
                line.fully_understood = False  # the arguments come from stdin
            if base == "xargs" and inner:
                inner = xargs_inner(current, inner)
            if base == "coproc" and inner:
                # `coproc { …; }` and `coproc NAME { …; }` reach us as words: skip to the body.
                if inner[0] in ("{", "("):
                    inner = inner[1:] or None
                elif len(inner) > 1 and inner[1] in ("{", "("):
                    inner = inner[2:] or None
            if inner is None:
                break
            layers.append(inner)
            if see_through and wrapper.transparent and name == base:
                allow_view = inner
            else:
                see_through = False
            current = inner
        line.commands.append(Command(tuple(layers), allow_view))

    def _shell(self, words: Words, node: Node | None) -> None:
        """`bash -c TEXT`, `sh -s <<EOF`, `bash script`: parse the text it runs when it is literal."""
        i = 1
        runs_text = False
        while i < len(words):
            word = words[i]
            if word is None:
                self.line.unknown()
                return
            if word == "--" or word == "-":
                i += 1
                break
            if word in SHELL_VALUE_OPTIONS:
                i += 2
                continue
            if word.startswith("--"):
                i += 1
                continue
            if not word.startswith(("-", "+")):
                break
            if "c" in word[1:] and word.startswith("-"):
                runs_text = True
            i += 1
        if runs_text:
            if i < len(words) and words[i] is not None:
                self._nested(words[i : i + 1], joined=False)
            else:
                self.line.unknown()
            return
        if i < len(words):
            if unseen_script(words[i]):
                self.line.unknown()
            return  # a script file: what it does is not visible here
        stdin = self._literal_stdin(node)
        if stdin is None:
            self.line.unknown()  # `curl … | sh`: commands from a pipe or a file
        else:
            self._nested((stdin,), joined=False)

    def _literal_stdin(self, node: Node | None) -> str | None:
        redirects: list[Node] = []
        if node is not None:
            redirects.extend(c for c in node.named_children if c.type.endswith("redirect"))
            parent = node.parent
            if parent is not None and parent.type == "redirected_statement":
                redirects.extend(parent.children_by_field_name("redirect"))
        for redirect in redirects:
            if redirect.type == "herestring_redirect" and redirect.named_children:
                return word_value(redirect.named_children[-1])
            if redirect.type == "heredoc_redirect":
                bodies = [c for c in redirect.named_children if c.type == "heredoc_body"]
                if len(bodies) == 1 and all(c.type == "heredoc_content" for c in bodies[0].named_children):
                    return node_text(bodies[0])
                return None
            if redirect.type == "file_redirect":
                return None
        return None

    def _nested(self, words: Sequence[str | None], *, joined: bool) -> None:
        if any(w is None for w in words):
            self.line.unknown()
            return
        text = " ".join(w for w in words if w is not None)
        self.line.fully_understood = False
        if text.strip():
            _parse_into(text, self.line, self.depth + 1)

    def _builtin_text(self, name: str, args: Words) -> None:
        if name in ("mapfile", "readarray", "su", "runuser"):
            # The value of `-C` (a mapfile callback) or `-c`/`--command` (su) is shell text.
            flag = "-C" if name in ("mapfile", "readarray") else "-c"
            for i, arg in enumerate(args):
                if arg in (flag, "--command") and i + 1 < len(args):
                    self._nested(args[i + 1 : i + 2], joined=False)
                elif arg is not None and arg.startswith("--command="):
                    self._nested((arg.split("=", 1)[1],), joined=False)
            return
        if name == "trap":
            rest = list(args[1:] if args[:1] == ("--",) else args)
            if rest and rest[0] is not None and rest[0].startswith("-"):
                return
            if rest:
                self._nested(rest[:1], joined=False)
            return
        for arg in args:
            if arg is None:
                self.line.unknown()
            elif "=" in arg:
                self._nested((arg.split("=", 1)[1],), joined=False)

    def _find(self, words: Words) -> None:
        """`find … -exec CMD {} ;` runs CMD: record it as a command of the line."""
        i = 0
        while i < len(words):
            if words[i] in FIND_EXEC:
                self.line.fully_understood = False
                j = i + 1
                while j < len(words) and words[j] not in (";", "+"):
                    j += 1
                if j > i + 1:
                    self._add(words[i + 1 : j], None)
                i = j
            i += 1


def iter_layers(line: ParsedLine) -> Iterator[Words]:
    for command in (*line.commands, *line.hidden):
        yield from command.layers


__all__ = ["MAX_DEPTH", "MAX_LINE_CHARS", "Command", "ParsedLine", "iter_layers", "parse_line"]
