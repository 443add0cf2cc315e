"""Bash command lines read with the tree-sitter-bash grammar, and the permission rules matched on them.

A line becomes a list of commands: every simple command anywhere in it (inside `$(…)`, backticks,
process substitutions, subshells, groups, pipelines, function bodies, here-documents), the commands
of `bash -c`/`sh -c` strings, `eval` arguments, `trap` actions and `alias` values, and the command
behind wrappers such as `env`, `sudo`, `timeout` or `xargs`. Each word is reduced to its literal
value after quote removal, or marked unknown when the shell would expand it (variables,
substitutions, globs, braces, `~`).

- An **allow** rule matches when the whole line is understood (no unknown word, no construct
  beyond commands, lists, pipelines, subshells, groups, comments and harmless redirections) and
  every command matches it. A command behind a transparent wrapper (`time`, `nice`, `timeout`, …)
  is matched as the wrapped command; a program path is kept as written.
- A **deny** (or ask) rule matches when any command, or any wrapper layer of it, matches, with
  the program path reduced to its name and unknown words standing for anything; and it matches
  every line whose commands cannot all be named (a parse error, `$X v`, an unknown wrapper option,
  `bash -c "$X"`, a shell reading a script from a pipe).

tree-sitter is imported on first use: start-up never pays for it.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

# Deeper nesting of `bash -c`/`eval` strings than this is not followed: the line is not understood.
MAX_DEPTH = 8
# Longer lines are not parsed (a bound on the gate's time): they are not understood either.
MAX_LINE_CHARS = 100_000

Words = tuple[str | None, ...]
"""A command's words: the literal value of each, or None where the shell expands it."""


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


# ----------------------------------------------------------------------------- words


_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_NUMERIC = re.compile(r"[0-7]{1,3}|x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|c.", re.DOTALL)


def _ansi_c(body: str) -> str:
    """The value of `$'…'` quoting (body without `$'` and `'`)."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 >= len(body):
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[nxt])
            i += 2
            continue
        match = _ANSI_NUMERIC.match(body, i + 1)
        if match is None:
            out.append("\\" + nxt)
            i += 2
            continue
        token = match.group()
        if token[0] == "c":
            out.append(chr(ord(token[1]) & 0x1F))
        elif token[0] in "xuU":
            out.append(chr(min(int(token[1:], 16), 0x10FFFF)))
        else:
            out.append(chr(int(token, 8) & 0xFF))
        i = match.end()
    return "".join(out)


def _double_quoted(text: str) -> str:
    """Backslash removal inside double quotes: only before `$`, `` ` ``, `"`, `\\` and newline."""
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


# Unquoted characters that make bash expand a word: globs, brace expansion, tilde, expansions.
_BRACE = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_GLOB_BRACKET = re.compile(r"\[.*\]")


@dataclass
class _Piece:
    value: str
    quoted: bool


def _pieces(node: Node) -> list[_Piece] | None:
    """The word as literal pieces (quoted or not), or None when it holds an expansion."""
    kind = node.type
    text = _text(node)
    if kind in ("word", "number"):
        if "$" in text or "`" in text:
            return None
        out: list[_Piece] = []
        i = 0
        while i < len(text):
            if text[i] == "\\" and i + 1 < len(text):
                if text[i + 1] != "\n":
                    out.append(_Piece(text[i + 1], True))
                i += 2
            else:
                out.append(_Piece(text[i], False))
                i += 1
        return out
    if kind == "raw_string":
        return [_Piece(text[1:-1], True)]
    if kind == "ansi_c_string":
        return [_Piece(_ansi_c(text[2:-1]), True)]
    if kind in ("string", "translated_string"):
        parts: list[_Piece] = []
        for child in node.named_children:
            if child.type != "string_content":
                return None
            parts.append(_Piece(_double_quoted(_text(child)), True))
        return parts
    if kind == "concatenation":
        joined: list[_Piece] = []
        for child in node.children:
            sub = _pieces(child)
            if sub is None:
                return None
            joined.extend(sub)
        return joined
    return None


def word_value(node: Node) -> str | None:
    """The literal value of a word after quote removal, or None when the shell would expand it."""
    pieces = _pieces(node)
    if pieces is None:
        return None
    # Mark quoted characters so expansion syntax is only looked for where the shell sees it.
    shape = "".join(p.value if not p.quoted else "\0" * len(p.value) for p in pieces)
    if any(c in shape for c in "*?") or _GLOB_BRACKET.search(shape) or _BRACE.search(shape):
        return None
    if shape.startswith("~") or "=~" in shape or ":~" in shape:
        return None
    return "".join(p.value for p in pieces)


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogatepass")


# ----------------------------------------------------------------------------- wrappers


@dataclass(frozen=True)
class _Wrapper:
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


WRAPPERS: dict[str, _Wrapper] = {
    "env": _Wrapper(
        _opts("-u", "--unset", "-C", "--chdir", "-S", "--split-string"),
        _opts("-i", "--ignore-environment", "-0", "--null", "-", "-v", "--debug"),
        assignments=True,
    ),
    "sudo": _Wrapper(
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
    "doas": _Wrapper(_opts("-u", "-C"), _opts("-n", "-s", "-L"), transparent=False),
    "nice": _Wrapper(_opts("-n", "--adjustment"), None),
    "ionice": _Wrapper(_opts("-c", "--class", "-n", "--classdata"), _opts("-t", "--ignore")),
    "timeout": _Wrapper(
        _opts("-s", "--signal", "-k", "--kill-after"),
        _opts("--preserve-status", "--foreground", "-v", "--verbose", "-f"),
        positional=1,
    ),
    "nohup": _Wrapper(flags=_opts()),
    "setsid": _Wrapper(flags=_opts("-c", "--ctty", "-f", "--fork", "-w", "--wait")),
    "stdbuf": _Wrapper(_opts("-i", "-o", "-e", "--input", "--output", "--error"), _opts()),
    "time": _Wrapper(_opts("-f", "--format", "-o", "--output"), _opts("-p", "-a", "--append", "-v", "--verbose")),
    "command": _Wrapper(flags=_opts("-p"), no_command_flags=_opts("-v", "-V")),
    "builtin": _Wrapper(flags=_opts()),
    "exec": _Wrapper(_opts("-a"), _opts("-c", "-l")),
    "xargs": _Wrapper(
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
    "busybox": _Wrapper(flags=_opts(), transparent=False),
    "coproc": _Wrapper(flags=_opts(), transparent=False),
}
WATCH = _Wrapper(
    _opts("-n", "--interval", "-q", "--equexit"),
    _opts("-b", "--beep", "-c", "--color", "-C", "--no-color", "-e", "--errexit", "-g", "--chgexit", "-p", "--precise")
    | _opts("-t", "--no-title", "-w", "--no-wrap", "-x", "--exec", "-d", "--differences", "--differences=permanent"),
)
SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "rbash", "fish", "csh", "tcsh"})
# A shell runs the file these name before anything else.
_STARTUP_ASSIGNMENTS = ("BASH_ENV=", "ENV=")
_SHELL_VALUE_OPTIONS = _opts("-o", "+o", "-O", "+O", "--rcfile", "--init-file")
# Builtins whose argument is itself shell text: `trap 'rm v' EXIT`, `alias ls='rm v'`.
_FIND_EXEC = _opts("-exec", "-execdir", "-ok", "-okdir")


def _unwrap(words: Words, wrapper: _Wrapper) -> tuple[Words | None, bool]:
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


def _xargs_inner(words: Words, inner: Words) -> Words:
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


def _unseen_script(path: str | None) -> bool:
    """A script argument that is really a pipe or a stream (`bash /dev/stdin`, `source <(…)`)."""
    return path is None or path.startswith(("/dev/", "/proc/"))


def _reduce(name: str) -> str:
    return posixpath.basename(name) or name


# ----------------------------------------------------------------------------- walking the tree

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
        if node.type == "variable_assignment" and _text(node).startswith(_STARTUP_ASSIGNMENTS):
            self.line.unknown()
        if node.type in _LITERAL_TEXT and ("$(" in _text(node) or "`" in _text(node)):
            self._scan_literal(node)
        if node.type == "command_substitution" and _text(node).startswith("`") and "\\" in _text(node):
            # Within backticks bash drops the backslash before a backslash, backtick or dollar and
            # then parses the rest, so an escaped inner backtick pair is a nested substitution.
            inner = re.sub(r"\\([\\`$])", r"\1", _text(node)[1:-1])
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
            value: str | None = _double_quoted(_text(node))
        elif node.type == "heredoc_content":
            value = _text(node)
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
            text = _text(sub)
            scratch = ParsedLine()
            _parse_into(text[2:-1] if text.startswith("$(") else text[1:-1], scratch, self.depth + 1)
            self.line.hidden.extend(scratch.commands)
            self.line.hidden.extend(scratch.hidden)

    def _redirect(self, node: Node) -> None:
        destination = node.child_by_field_name("destination")
        operator = next((_text(c) for c in node.children if not c.is_named), "")
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
            base = _reduce(name)
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
            if base in ("source", ".") and (len(current) < 2 or _unseen_script(current[1])):
                line.unknown()  # `source <(curl …)`: the text it runs is not on the line
            if base in ("trap", "alias", "mapfile", "readarray", "su", "runuser"):
                self._builtin_text(base, current[1:])
            if base == "hash" and "-p" in current:
                line.unknown()  # `hash -p /bin/rm ls` makes `ls` run rm
            if base in ("env", "sudo") and any((w or "").startswith(_STARTUP_ASSIGNMENTS) for w in current[1:]):
                line.unknown()  # `env BASH_ENV=<(…) bash -c ls`: a start-up file the shell runs first
            if base == "watch":
                inner, ok = _unwrap(current, WATCH)
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
            inner, ok = _unwrap(current, wrapper)
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
                inner = _xargs_inner(current, inner)
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
            if word in _SHELL_VALUE_OPTIONS:
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
            if _unseen_script(words[i]):
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
                    return _text(bodies[0])
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
            if words[i] in _FIND_EXEC:
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


# ----------------------------------------------------------------------------- rules


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
    names = {name, _reduce(name)}
    if rule.words[0] not in names and _reduce(rule.words[0]) not in names:
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
