"""modes.md §1-2: flag parsing and mode resolution (checks 3-5)."""

import pytest

from apex_coding_agent.cli.args import parse_args, resolve_mode


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
