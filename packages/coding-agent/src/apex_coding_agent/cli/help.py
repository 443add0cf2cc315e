"""The `--help` text. Standard library only: `apex-code --help` answers without loading anything else."""

from __future__ import annotations

# Type checkers treat a constant named TYPE_CHECKING as true; at run time nothing below is imported.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from apex_coding_agent.extensions.runner import ExtensionRunner

HELP = """\
apex-code - a minimal terminal coding agent

Usage:
  apex-code [options] [@files...] [messages...]
  apex-code install|remove|update|list|config ...   manage packages
  apex-code batch TASKS.jsonl --out DIR [...]       run many headless tasks, each in its own copy
  apex-code mcp list|get|add|remove ...             manage MCP servers (docs/mcp.md)
  apex-code sessions list|search|reindex|gc ...     list and search sessions, collect checkpoint blobs
  apex-code checkpoints gc [--grace-seconds N]      remove file checkpoints no session refers to

Modes:
  (default)                   interactive terminal app (package apex-tui)
  -p, --print [msg]           run the prompt(s), print the final answer, exit
      --mode text|json|rpc    text output, a JSON event stream, or a JSONL RPC server on stdin/stdout
      --permission-mode MODE  required without the terminal app: default, plan, acceptEdits,
                              bypassPermissions, dontAsk

Model:
      --provider NAME         provider of --model
      --model PATTERN         id, provider/id or a glob, with an optional :thinking suffix
      --api-key KEY           key for this run (not saved)
      --thinking LEVEL        off, minimal, low, medium, high, xhigh, max
      --models LIST           models to cycle through (comma separated)
      --list-models [TEXT]    list models that have a key, then exit

Sessions:
  -c, --continue              continue the most recent session of this directory
  -r, --resume                pick a session to resume (terminal app)
      --session PATH|ID       open a session file or id
      --entry ID              with --session: continue from this entry (see `apex-code sessions search`)
      --session-id ID         open or create the session with exactly this id
      --fork PATH|ID          copy a session into a new one and continue there
      --session-dir DIR       where sessions are stored
      --no-session            keep the session in memory only
  -n, --name NAME             name the session
      --export FILE [OUT]     write a session as HTML, then exit
      --rewind ENTRY          with --session: put the files (and conversation) back to before that
                              user message, then exit (--rewind-mode all|conversation|files,
                              --overwrite PATH to replace a file someone else changed)

Tools and resources:
  -t, --tools LIST            only these tools (read, bash, edit, write, grep, find, ls, ...)
  -xt, --exclude-tools LIST   not these tools
  -nbt, --no-builtin-tools    no built-in tools
  -nt, --no-tools             no tools at all
      --allowed-tools LIST    allow these tools without asking
  -e, --extension SOURCE      load an extension (repeatable)
  -ne, --no-extensions        do not discover extensions
      --skill PATH            load a skill (repeatable);  -ns, --no-skills
      --prompt-template PATH  load prompt templates;      -np, --no-prompt-templates
      --theme PATH            load a theme;               --no-themes
  -nc, --no-context-files     do not read AGENTS.md / CLAUDE.md
      --system-prompt TEXT    replace the system prompt (text or a file)
      --append-system-prompt TEXT   add to it (repeatable)
  -a, --approve / -na, --no-approve   trust or ignore this project's own configuration for this run
      --tui-mode regular|fullscreen
      --offline               no network at startup
      --verbose
  -h, --help                  show this help
  -v, --version               show the version
"""


def help_text(runner: ExtensionRunner | None = None) -> str:
    """The `--help` text, with the flags extensions registered (shown once extensions have loaded)."""
    flags = runner.get_flags() if runner is not None else []
    if not flags:
        return HELP
    lines = ["", "Extension flags:"]
    for flag in flags:
        name = f"--{flag.name}" + (" VALUE" if flag.type == "string" else "")
        lines.append(f"      {name:<22}  {flag.description or ''}".rstrip())
    return HELP + "\n".join(lines) + "\n"


__all__ = ["HELP", "help_text"]
