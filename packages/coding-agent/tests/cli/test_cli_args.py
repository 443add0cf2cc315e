"""modes.md §1-2: flag parsing and mode resolution (checks 3-5); `--help` lists every option."""

import dataclasses
import itertools
import re
import string
import subprocess
from pathlib import Path

import pytest
from cli_helpers import CLI, env_for

from apex_coding_agent.cli.args import OPTIONS, Args, parse_args, resolve_mode


def test_print_does_not_consume_a_file_argument_but_takes_triple_dash() -> None:
    args = parse_args(["-p", "@README.md"])
    assert args.print and args.files == ["README.md"] and args.messages == []
    args = parse_args(["-p", "---x"])
    assert args.messages == ["---x"]
    args = parse_args(["-p", "--verbose", "hello", "world"])
    assert args.verbose and args.messages == ["hello", "world"]


def test_invalid_thinking_is_a_warning_and_unknown_short_option_an_error() -> None:
    args = parse_args(["--thinking", "huge"])
    assert args.thinking is None
    assert [d.level for d in args.diagnostics] == ["warning"]
    assert args.diagnostics[0].message.startswith('Invalid thinking level "huge". Valid values: off, minimal')
    assert parse_args(["-zz"]).errors == ["Unknown option: -zz"]
    assert parse_args(["--tui-mode"]).errors == ["--tui-mode requires regular or fullscreen"]
    assert parse_args(["--tui-mode", "huge"]).errors == ['--tui-mode requires regular or fullscreen (got "huge")']
    assert parse_args(["--tui-mode", "fullscreen"]).tui_mode == "fullscreen"


def test_unknown_long_flags_become_extension_flags() -> None:
    assert parse_args(["--foo=bar"]).extension_flags == {"foo": "bar"}
    assert parse_args(["--foo", "bar"]).extension_flags == {"foo": "bar"}
    assert parse_args(["--foo"]).extension_flags == {"foo": True}
    assert parse_args(["--foo", "@f"]).extension_flags == {"foo": True}


def test_lists_and_repeatables() -> None:
    args = parse_args(["-t", "read, bash,,", "-e", "a.py", "--extension", "b.py", "--models", "a/*,b:high"])
    assert args.tools == ["read", "bash"]
    assert args.extensions == ["a.py", "b.py"]
    assert args.models == ["a/*", "b:high"]


def test_permission_mode_and_name_errors() -> None:
    assert parse_args(["--permission-mode", "plan"]).permission_mode == "plan"
    assert parse_args(["--permission-mode"]).errors[0].startswith("--permission-mode requires one of: default, plan")
    assert 'got "bogus"' in parse_args(["--permission-mode", "bogus"]).errors[0]
    assert parse_args(["--name", "  "]).errors == ["--name requires a non-empty value"]
    assert parse_args(["-n", " x "]).name == "x"
    assert parse_args(["--session"]).errors == ["--session requires a value"]


def test_list_models_search_and_export_output() -> None:
    args = parse_args(["--list-models", "sonnet"])
    assert args.list_models and args.list_models_search == "sonnet"
    args = parse_args(["--export", "s.jsonl", "out.html"])
    assert (args.export, args.export_output) == ("s.jsonl", "out.html")


@pytest.mark.parametrize(
    ("argv", "stdin_tty", "stdout_tty", "expected"),
    [
        ([], True, True, "interactive"),
        (["-p"], True, True, "text"),
        ([], False, True, "text"),
        ([], True, False, "text"),
        (["--mode", "json"], True, True, "json"),
        (["--mode", "rpc"], False, False, "rpc"),
        (["--mode", "bogus"], True, True, "interactive"),
    ],
)
def test_mode_resolution(argv: list[str], stdin_tty: bool, stdout_tty: bool, expected: str) -> None:
    assert resolve_mode(parse_args(argv), stdin_is_tty=stdin_tty, stdout_is_tty=stdout_tty) == expected


def test_the_cli_thinking_levels_are_the_provider_layers() -> None:
    from apex_ai.thinking import MODEL_THINKING_LEVELS
    from apex_coding_agent.cli.args import THINKING_LEVELS

    assert THINKING_LEVELS == MODEL_THINKING_LEVELS


def _is_builtin(flag: str) -> bool:
    """Whether the parser handles `flag` itself: not a message, not an extension's flag, not an unknown option."""
    args = parse_args([flag])
    unknown = any(message.startswith("Unknown option") for message in args.errors)
    return not unknown and not args.messages and not args.extension_flags


def test_options_is_exactly_what_the_parser_handles_itself() -> None:
    """Checked over every short option of up to three letters and the long ones the `Args` fields suggest."""
    letters = string.ascii_lowercase
    short = {"-" + "".join(chars) for size in (1, 2, 3) for chars in itertools.product(letters, repeat=size)}
    names = [field.name.rstrip("_").replace("_", "-") for field in dataclasses.fields(Args)]
    long = {f"--{prefix}{name}{suffix}" for name in names for prefix in ("", "no-") for suffix in ("", "s")}
    long |= {f"--{name.removesuffix('s')}" for name in names}
    candidates = short | long | OPTIONS
    assert {flag for flag in candidates if _is_builtin(flag)} == OPTIONS


def test_help_lists_every_option_of_the_parser_and_no_other(tmp_path: Path) -> None:
    proc = subprocess.run(
        [*CLI, "--help"], cwd=tmp_path, env=env_for(tmp_path / "agent"), capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    # The usage lines name subcommands with options of their own (`batch ... --out DIR`): only the sections after
    # them describe this parser.
    sections = proc.stdout.split("\nModes:\n", 1)[1]
    listed = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", sections))
    assert listed == OPTIONS, (sorted(OPTIONS - listed), sorted(listed - OPTIONS))
