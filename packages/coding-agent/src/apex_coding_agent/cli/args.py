"""Parsing the `apex-code` command line, standard library only.

Parsing never exits: problems become diagnostics (`error` ones make the CLI print `Error: ...`
and exit 1, `warning` ones are printed and the run goes on), so the caller decides what to do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Mode = Literal["text", "json", "rpc"]
# apex_ai.thinking.MODEL_THINKING_LEVELS, spelled out: this module is on the fast path of `--version` and
# `--help`, which imports nothing but the standard library (a test keeps the two lists equal).
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
PERMISSION_MODES = ("default", "plan", "acceptEdits", "bypassPermissions", "dontAsk")
TUI_MODES = ("regular", "fullscreen")


@dataclass(frozen=True)
class Diagnostic:
    level: Literal["error", "warning"]
    message: str


@dataclass
class Args:
    help: bool = False
    version: bool = False
    mode: Mode | None = None
    print: bool = False
    continue_: bool = False
    resume: bool = False
    session: str | None = None
    session_id: str | None = None
    entry: str | None = None
    """With `--session`: open the session with its leaf at this entry (as `/tree` would)."""
    fork: str | None = None
    session_dir: str | None = None
    no_session: bool = False
    name: str | None = None
    provider: str | None = None
    model: str | None = None
    api_key: str | None = None
    thinking: str | None = None
    models: list[str] | None = None
    list_models: bool = False
    list_models_search: str | None = None
    tools: list[str] | None = None
    exclude_tools: list[str] | None = None
    no_builtin_tools: bool = False
    no_tools: bool = False
    allowed_tools: list[str] | None = None
    permission_mode: str | None = None
    extensions: list[str] = field(default_factory=list)
    no_extensions: bool = False
    skills: list[str] = field(default_factory=list)
    no_skills: bool = False
    prompt_templates: list[str] = field(default_factory=list)
    no_prompt_templates: bool = False
    themes: list[str] = field(default_factory=list)
    no_themes: bool = False
    no_context_files: bool = False
    system_prompt: str | None = None
    append_system_prompt: list[str] = field(default_factory=list)
    export: str | None = None
    rewind: str | None = None
    rewind_mode: str | None = None
    overwrite: list[str] = field(default_factory=list)
    export_output: str | None = None
    tui_mode: str | None = None
    verbose: bool = False
    approve: bool | None = None
    offline: bool = False
    files: list[str] = field(default_factory=list)
    """`@path` arguments, without the `@`."""
    messages: list[str] = field(default_factory=list)
    extension_flags: dict[str, str | bool] = field(default_factory=dict)
    extension_flag_positions: dict[str, int] = field(default_factory=dict)
    """For an extension flag that took the next argument as its value: where that argument stood among `messages`
    (a boolean flag gives it back once the extensions say which flags are boolean)."""
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        return [d.message for d in self.diagnostics if d.level == "error"]


# flag -> (attribute, kind). kinds: bool, str, list (comma separated), append (repeatable)
_BOOL = {
    "-h": "help", "--help": "help", "-v": "version", "--version": "version",
    "-c": "continue_", "--continue": "continue_", "-r": "resume", "--resume": "resume",
    "--no-session": "no_session", "-nbt": "no_builtin_tools", "--no-builtin-tools": "no_builtin_tools",
    "-nt": "no_tools", "--no-tools": "no_tools", "-ne": "no_extensions", "--no-extensions": "no_extensions",
    "-ns": "no_skills", "--no-skills": "no_skills", "-np": "no_prompt_templates",
    "--no-prompt-templates": "no_prompt_templates", "--no-themes": "no_themes",
    "-nc": "no_context_files", "--no-context-files": "no_context_files", "--verbose": "verbose",
    "--offline": "offline",
}  # fmt: skip
_STR = {
    "--session": "session", "--session-id": "session_id", "--fork": "fork", "--session-dir": "session_dir",
    "--entry": "entry", "-n": "name", "--name": "name", "--provider": "provider", "--model": "model",
    "--api-key": "api_key", "--system-prompt": "system_prompt", "--rewind": "rewind", "--rewind-mode": "rewind_mode",
}  # fmt: skip
_LIST = {
    "--models": "models", "-t": "tools", "--tools": "tools", "-xt": "exclude_tools",
    "--exclude-tools": "exclude_tools", "--allowed-tools": "allowed_tools",
}  # fmt: skip
_APPEND = {
    "-e": "extensions", "--extension": "extensions", "--skill": "skills", "--prompt-template": "prompt_templates",
    "--theme": "themes", "--append-system-prompt": "append_system_prompt", "--overwrite": "overwrite",
}  # fmt: skip

# Flags `parse_args` handles one by one: their values are checked, or optional.
_SPECIAL = (
    "-p", "--print", "--mode", "--thinking", "--list-models", "--permission-mode", "--tui-mode", "--export",
    "-a", "--approve", "-na", "--no-approve",
)  # fmt: skip
OPTIONS: frozenset[str] = frozenset({*_BOOL, *_STR, *_LIST, *_APPEND, *_SPECIAL})
"""Every option of the command line (any other `--name` is an extension's flag); `--help` lists each one."""


def _comma_list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _takes_as_message(arg: str) -> bool:
    """`-p` consumes the next arg unless it is `@file` or a flag; `---x` counts as a message."""
    return not arg.startswith("@") and (not arg.startswith("-") or arg.startswith("---"))


def parse_args(argv: list[str]) -> Args:
    args = Args()
    i = 0

    def error(message: str) -> None:
        args.diagnostics.append(Diagnostic("error", message))

    def value_of(flag: str) -> str | None:
        nonlocal i
        if i + 1 < len(argv):
            i += 1
            return argv[i]
        error(f"{flag} requires a value")
        return None

    while i < len(argv):
        arg = argv[i]
        if arg in _BOOL:
            setattr(args, _BOOL[arg], True)
        elif arg in ("-p", "--print"):
            args.print = True
            if i + 1 < len(argv) and _takes_as_message(argv[i + 1]):
                i += 1
                args.messages.append(argv[i])
        elif arg == "--mode":
            value = value_of(arg)
            if value in ("text", "json", "rpc"):
                args.mode = value  # type: ignore[assignment]  # narrowed by the membership test
            # Invalid values are ignored (reference behaviour).
        elif arg in _STR:
            value = value_of(arg)
            if value is not None:
                setattr(args, _STR[arg], value)
        elif arg in _LIST:
            value = value_of(arg)
            if value is not None:
                setattr(args, _LIST[arg], _comma_list(value))
        elif arg in _APPEND:
            value = value_of(arg)
            if value is not None:
                getattr(args, _APPEND[arg]).append(value)
        elif arg == "--thinking":
            value = value_of(arg)
            if value is not None:
                if value in THINKING_LEVELS:
                    args.thinking = value
                else:
                    args.diagnostics.append(
                        Diagnostic(
                            "warning", f'Invalid thinking level "{value}". Valid values: {", ".join(THINKING_LEVELS)}'
                        )
                    )
        elif arg == "--list-models":
            args.list_models = True
            if i + 1 < len(argv) and not argv[i + 1].startswith(("-", "@")):
                i += 1
                args.list_models_search = argv[i]
        elif arg == "--permission-mode":
            if i + 1 < len(argv) and argv[i + 1] in PERMISSION_MODES:
                i += 1
                args.permission_mode = argv[i]
            else:
                got = argv[i + 1] if i + 1 < len(argv) and not argv[i + 1].startswith("-") else None
                if got is not None:
                    i += 1
                error(
                    f"--permission-mode requires one of: {', '.join(PERMISSION_MODES)}"
                    + (f' (got "{got}")' if got is not None else "")
                )
        elif arg == "--tui-mode":
            if i + 1 >= len(argv) or argv[i + 1].startswith("-"):
                error("--tui-mode requires regular or fullscreen")
            else:
                i += 1
                if argv[i] in TUI_MODES:
                    args.tui_mode = argv[i]
                else:
                    error(f'--tui-mode requires regular or fullscreen (got "{argv[i]}")')
        elif arg == "--export":
            value = value_of(arg)
            if value is not None:
                args.export = value
                if i + 1 < len(argv) and not argv[i + 1].startswith(("-", "@")):
                    i += 1
                    args.export_output = argv[i]
        elif arg in ("-a", "--approve"):
            args.approve = True
        elif arg in ("-na", "--no-approve"):
            args.approve = False
        elif arg.startswith("@") and len(arg) > 1:
            args.files.append(arg[1:])
        elif arg.startswith("--") and len(arg) > 2:
            name, eq, inline = arg[2:].partition("=")
            if eq:
                args.extension_flags[name] = inline
            elif i + 1 < len(argv) and not argv[i + 1].startswith(("-", "@")):
                i += 1
                args.extension_flags[name] = argv[i]
                args.extension_flag_positions[name] = len(args.messages)
            else:
                args.extension_flags[name] = True
        elif arg.startswith("-") and len(arg) > 1 and not arg.startswith("---"):
            error(f"Unknown option: {arg}")
        else:
            args.messages.append(arg)
        i += 1

    if args.name is not None and not args.name.strip():
        error("--name requires a non-empty value")
    elif args.name is not None:
        args.name = args.name.strip()
    return args


def resolve_mode(
    args: Args, *, stdin_is_tty: bool, stdout_is_tty: bool
) -> Literal["interactive", "text", "json", "rpc"]:
    """rpc / json by `--mode`; print when `-p` or when stdin or stdout is not a terminal; else interactive."""
    if args.mode == "rpc":
        return "rpc"
    if args.mode == "json":
        return "json"
    if args.print or args.mode == "text" or not stdin_is_tty or not stdout_is_tty:
        return "text"
    return "interactive"


__all__ = ["OPTIONS", "Args", "Diagnostic", "PERMISSION_MODES", "THINKING_LEVELS", "parse_args", "resolve_mode"]
