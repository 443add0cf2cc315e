"""`apex-code sessions list|search|reindex` and `--session FILE --entry ID`, as a user runs them."""

from __future__ import annotations

import io
import json
import shlex
import shutil
from pathlib import Path

import pytest
from cli_helpers import run_cli, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_ai.types import AssistantMessage, TextContent, ToolResultMessage, Usage, UserMessage
from apex_coding_agent.cli.args import parse_args
from apex_coding_agent.cli.session import SessionArgumentError, choose_session, validate_session_flags
from apex_coding_agent.cli.sessions_command import run
from apex_coding_agent.paths import default_session_dir
from apex_coding_agent.session import SessionManager
from apex_coding_agent.session.index import SessionIndex, index_path
from apex_coding_agent.session.listing import wait_for_index_builds

_REPLY = {"text": "ok", "usage": {"input": 3, "output": 1}}


def user(text: str) -> UserMessage:
    return UserMessage(content=text, timestamp=1)


def assistant(text: str) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=text)],
        api="x",
        provider="p",
        model="m",
        usage=Usage(),
        stop_reason="stop",
        timestamp=2,
    )


def _conversation(cwd: Path, agent: Path, texts: list[str]) -> SessionManager:
    """A session of `cwd` in `agent`'s sessions root holding user/assistant `texts` (made in-process)."""
    sm = SessionManager.create(str(cwd), default_session_dir(str(cwd), {"APEX_CODE_CODING_AGENT_DIR": str(agent)}))
    for n, text in enumerate(texts):
        sm.append_message(user(text) if n % 2 == 0 else assistant(text))
    sm.close()
    return sm


def test_a_process_that_exits_right_after_its_first_listing_leaves_a_whole_index(tmp_path: Path) -> None:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    session = _conversation(work, agent, ["a first question", "an answer"]).session_file
    assert session is not None
    for n in range(300):  # enough files that a build cut off at exit would have committed none of them
        shutil.copyfile(session, session.parent / f"copy-{n:03d}.jsonl")
    location = agent / "session-index.sqlite"
    assert not location.exists()
    listed = run_cli(["sessions", "list", "--json"], work, agent)
    assert listed.returncode == 0 and listed.stderr == ""
    assert len(json.loads(listed.stdout)) == 301
    with SessionIndex.open(location) as index:
        rows = index.execute("SELECT count(*) FROM files WHERE state = 1").fetchone()[0]
        left = index.refresh([session.parent])
    assert rows == 301 and (left.full, left.tail) == (0, 0)


def test_search_finds_an_old_message_and_the_hit_opens_at_that_entry(tmp_path: Path) -> None:
    work, agent = tmp_path / "my work", tmp_path / "agent"
    work.mkdir()
    sm = _conversation(
        work, agent, ["why does test_pool fail", "the flaky test was a race in the pool", "something else", "ok"]
    )
    with ScriptedModelServer([_REPLY]) as server:
        write_models(agent, server)
        found = run_cli(["sessions", "search", "race", "pool", "--json"], work, agent)
        assert found.returncode == 0, found.stderr
        hits = json.loads(found.stdout)
        assert [(h["sessionId"], h["kind"], h["path"]) for h in hits] == [
            (sm.session_id, "assistant", str(sm.session_file))
        ]
        hit = hits[0]
        assert [hit["snippet"][a:b] for a, b in hit["highlights"]] == ["race", "pool"]
        common = ["--mode", "json", "--permission-mode", "plan"]
        resumed = run_cli([*common, "--session", hit["path"], "--entry", hit["entryId"], "-p", "go on"], work, agent)
    assert resumed.returncode == 0, resumed.stderr
    reopened = SessionManager.open(hit["path"])
    branch = [e.id for e in reopened.get_branch()]
    texts = [json.dumps(e.model_dump()) for e in reopened.get_branch()]
    reopened.close()
    # The run continued from the hit (a new branch there), not after the later "something else".
    assert hit["entryId"] in branch and "go on" in texts[-2] + texts[-1]
    assert not any("something else" in t for t in texts)


def test_entry_errors_are_clear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APEX_CODE_CODING_AGENT_DIR", str(tmp_path / "agent"))
    sm = _conversation(tmp_path, tmp_path / "agent", ["q", "a"])
    assert sm.session_file is not None
    with pytest.raises(SessionArgumentError, match="--entry nope: no such entry in "):
        choose_session(parse_args(["--session", str(sm.session_file), "--entry", "nope"]), str(tmp_path), tmp_path)
    assert validate_session_flags(parse_args(["--entry", "abc"])) == (
        "--entry needs --session (the session file or id the entry belongs to)"
    )


@pytest.fixture
def populated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("APEX_CODE_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("APEX_CODE_CODING_AGENT_SESSION_DIR", raising=False)
    for cwd, text in ((tmp_path, "alpha question"), (tmp_path / "elsewhere", "beta question")):
        cwd.mkdir(exist_ok=True)
        _conversation(cwd, tmp_path / "agent", [text, "an answer"])
    return tmp_path


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_list_search_and_reindex_in_process(populated: Path) -> None:
    code, out, _ = _run("list")
    assert code == 0 and "alpha question" in out and "beta" not in out
    code, out, _ = _run("list", "--all", "--json")
    assert sorted(s["firstMessage"] for s in json.loads(out)) == ["alpha question", "beta question"]
    code, out, _ = _run("search", "question", "--cwd", str(populated / "elsewhere"), "--json")
    assert [h["firstMessage"] for h in json.loads(out)] == ["beta question"]
    code, out, _ = _run("search", "question", "--limit=1", "--json")
    assert len(json.loads(out)) == 1
    code, out, _ = _run("search", "zzzz")
    assert (code, out) == (0, "No matches.\n")
    code, out, _ = _run("search", "alpha")
    assert out.splitlines()[1] == "    user: alpha question"
    assert shlex.split(out.splitlines()[2])[:2] == ["apex-code", "--session"]
    assert wait_for_index_builds(timeout=60)  # the first listing's build, before the file is spoilt under it
    index_path().write_bytes(b"not a database at all" * 100)
    code, out, err = _run("reindex", "--tool-output")
    assert code == 0 and err == "" and out.startswith("Indexed 2 sessions") and "tool output with" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ((), "Usage:"),
        (("frobnicate",), "unknown sessions command 'frobnicate'"),
        (("list", "--bogus"), "unknown option --bogus for `sessions list`"),
        (("list", "extra"), "unexpected argument 'extra'"),
        (("search",), "needs a query"),
        (("search", "x", "--limit"), "--limit requires a value"),
        (("search", "x", "--limit", "ten"), "--limit must be a whole number"),
        (("search", "x", "--limit", "0"), "--limit must be at least 1"),
        (("search", "()", "--json"), "Nothing to search for"),
        (("search", "x", "--cwd", "/no/such/dir"), "--cwd /no/such/dir: no such directory"),
        (("reindex", "--tool-output", "--no-tool-output"), "contradict"),
        (("list", "--json=yes"), "--json takes no value"),
    ],
)
def test_bad_input_is_one_clear_error(populated: Path, argv: tuple[str, ...], message: str) -> None:
    code, out, err = _run(*argv)
    assert code == 1 and out == "" and message in err


def test_the_session_dir_comes_from_flag_then_environment_then_setting(
    populated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = populated / "agent"
    custom = populated / "custom"
    sm = SessionManager.create(str(populated), custom)
    sm.append_message(user("gamma question"))
    sm.append_message(assistant("an answer"))
    sm.close()
    (agent / "settings.json").write_text(json.dumps({"sessionDir": str(custom)}))
    for argv in (("list", "--json"), ("list", "--all", "--json")):
        assert [s["firstMessage"] for s in json.loads(_run(*argv)[1])] == ["gamma question"]
    assert [h["firstMessage"] for h in json.loads(_run("search", "question", "--json")[1])] == ["gamma question"]
    monkeypatch.setenv("APEX_CODE_CODING_AGENT_SESSION_DIR", str(populated / "none"))  # the environment wins
    assert _run("list", "--all")[1] == "No sessions.\n"
    assert _run("search", "question")[1] == "No matches.\n"
    code, out, _ = _run("list", "--all", "--json", "--session-dir", str(custom))  # and the flag over it
    assert [s["firstMessage"] for s in json.loads(out)] == ["gamma question"]
    monkeypatch.delenv("APEX_CODE_CODING_AGENT_SESSION_DIR")
    code, out, _ = _run("reindex")  # the configured dir is indexed with the sessions root
    assert out.startswith("Indexed 3 sessions")


def test_an_unusable_index_is_a_clear_error_for_search_and_not_for_list(
    populated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APEX_CODE_SESSION_INDEX", "off")
    assert _run("list")[0] == 0
    code, _, err = _run("search", "alpha")
    assert code == 1 and "needs the session index" in err


def test_sessions_commands_take_the_session_dir_and_tool_output_from_the_settings(tmp_path: Path) -> None:
    work, agent, custom = tmp_path / "work", tmp_path / "agent", tmp_path / "kept here"
    work.mkdir()
    agent.mkdir()
    sm = SessionManager.create(str(work), custom)
    sm.append_message(user("where is the needle"))
    sm.append_message(assistant("running grep"))
    sm.append_message(
        ToolResultMessage(
            tool_call_id="c1",
            tool_name="bash",
            content=[TextContent(text="haystack line 7")],
            is_error=False,
            timestamp=3,
        )
    )
    sm.close()
    settings = {"sessionDir": str(custom), "sessionIndex": {"includeToolOutput": True}}
    (agent / "settings.json").write_text(json.dumps(settings))
    listed = run_cli(["sessions", "list", "--json"], work, agent)
    assert listed.returncode == 0, listed.stderr
    assert [s["path"] for s in json.loads(listed.stdout)] == [str(sm.session_file)]
    found = run_cli(["sessions", "search", "haystack", "--json"], work, agent)
    assert found.returncode == 0, found.stderr
    assert [(h["path"], h["kind"]) for h in json.loads(found.stdout)] == [(str(sm.session_file), "output")]
    # The flag wins over the setting.
    elsewhere = run_cli(["sessions", "list", "--session-dir", str(tmp_path / "empty")], work, agent)
    assert (elsewhere.returncode, elsewhere.stdout) == (0, "No sessions in this directory (--all lists every one).\n")
