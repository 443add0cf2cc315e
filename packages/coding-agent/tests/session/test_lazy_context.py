"""The deferred context (`LazyContextMessages`) against `build_session_context`, and the session's gate.

The oracle is `SessionManager.build_session_context()` on a separately opened manager. The lazy projection must give
the same messages at every leaf of a session with branches, both compaction shapes, summaries, custom, system and
unknown messages, whatever order its parts are asked for in; and a session built with `defer_messages` must hand
its agent that complete list before anything reads the agent.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_fast_load import _fixture

from apex_agent.messages import AgentMessage, dump_message
from apex_ai.models import ModelRegistry
from apex_ai.providers.faux import FauxProvider, faux_assistant_message
from apex_ai.types import AssistantMessage, SystemMessage, TextContent, UserMessage
from apex_coding_agent.core.auth_storage import AuthStorage
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.runtime import AgentSession, AgentSessionRuntime, CreateAgentSessionResult, create_agent_session
from apex_coding_agent.session import SessionManager
from apex_coding_agent.session.branch_view import BranchView
from apex_coding_agent.session.context import LazyContextMessages


@pytest.fixture(autouse=True)
def _collect_sessions() -> Iterator[None]:
    """Sessions sit in reference cycles; collecting them closes the descriptors of the files opened here."""
    yield
    gc.collect()


def _dumps(messages: list[AgentMessage]) -> list[object]:
    return [dump_message(m) for m in messages]


def _leaves(path: Path) -> list[str]:
    return [record.id for record in SessionManager.open(path).iter_records()]


def test_full_list_equals_the_context_at_every_leaf(tmp_path: Path) -> None:
    path = _fixture(tmp_path / "fixture.jsonl")
    for leaf in _leaves(path):
        oracle, manager = SessionManager.open(path), SessionManager.open(path)
        oracle.branch(leaf)
        manager.branch(leaf)
        expected = oracle.build_session_context().messages
        lazy = LazyContextMessages(manager.get_branch_records())
        assert lazy.materialize() == expected, leaf
        assert _dumps(lazy.materialize()) == _dumps(expected)
        assert lazy.complete and lazy.remaining_records == 0


def test_tails_steps_and_backward_walks_agree_with_the_context(tmp_path: Path) -> None:
    path = _fixture(tmp_path / "fixture.jsonl")
    for leaf in _leaves(path):
        oracle = SessionManager.open(path)
        oracle.branch(leaf)
        expected = oracle.build_session_context().messages
        for count in range(len(expected) + 2):
            manager = SessionManager.open(path)
            manager.branch(leaf)
            lazy = LazyContextMessages(manager.get_branch_records())
            tail = lazy.tail(count)
            assert tail == (expected[-count:] if count else []), (leaf, count)
            # The tail's objects are the very objects of the full list (each record is projected once).
            full = lazy.materialize()
            assert all(a is b for a, b in zip(tail, full[len(full) - len(tail) :], strict=True))
        manager = SessionManager.open(path)
        manager.branch(leaf)
        lazy = LazyContextMessages(manager.get_branch_records())
        assert list(lazy.newest_first()) == expected[::-1]
        stepped = LazyContextMessages(manager.get_branch_records())
        while not stepped.step(1):
            pass
        assert stepped.materialize() == expected


def test_keep_filters_like_the_agent_build(tmp_path: Path) -> None:
    path = _fixture(tmp_path / "fixture.jsonl")
    found_system = False
    for leaf in _leaves(path):
        oracle, manager = SessionManager.open(path), SessionManager.open(path)
        oracle.branch(leaf)
        manager.branch(leaf)
        context = oracle.build_session_context().messages
        found_system |= any(isinstance(m, SystemMessage) for m in context)
        expected = [m for m in context if not isinstance(m, SystemMessage)]
        lazy = LazyContextMessages(manager.get_branch_records(), keep=lambda m: not isinstance(m, SystemMessage))
        assert lazy.tail(3) == expected[-3:]
        assert lazy.materialize() == expected
    assert found_system  # the fixture reaches a stored system message


def _long_session(directory: Path, exchanges: int) -> Path:
    manager = SessionManager.create(str(directory), directory / "sessions")
    for index in range(exchanges):
        manager.append_message(UserMessage(content=f"question {index}", timestamp=1))
        manager.append_message(
            AssistantMessage(
                content=[TextContent(text=f"answer {index}")],
                api="faux",
                provider="faux",
                model="faux-1",
                stop_reason="stop",
                timestamp=2,
            )
        )
    path = manager.session_file
    assert path is not None
    manager.close()
    return path


def test_the_newest_messages_parse_only_the_newest_records(tmp_path: Path) -> None:
    path = _long_session(tmp_path, 1500)
    manager = SessionManager.open(path)
    records = manager.get_branch_records()
    lazy = LazyContextMessages(records)
    tail = lazy.tail(10)
    assert [m.role for m in tail] == ["user", "assistant"] * 5
    parsed = BranchView(records).parsed_count()
    assert 10 <= parsed <= 100
    assert len(records) - 100 <= lazy.remaining_records <= len(records) - 10
    assert all(record.is_parsed for record in records[-10:])
    assert not lazy.complete


async def _session(root: Path, path: Path, *, defer: bool, faux: FauxProvider) -> AgentSession:
    registry = ModelRegistry(load_catalog=False)
    registry.register_provider("faux", api="faux", base_url="http://localhost:0", models=faux.models)
    cwd = root / "work"
    cwd.mkdir(exist_ok=True)
    result = await create_agent_session(
        cwd=str(cwd),
        agent_dir=str(root / "agent"),
        model=faux.model("faux-1"),
        session_manager=SessionManager.open(path),
        settings_manager=SettingsManager.in_memory({}),
        model_runtime=ModelRuntime(None, AuthStorage.in_memory(), registry=registry),
        permission_gate=PermissionGate(cwd, flag_mode="bypassPermissions"),
        defer_messages=defer,
    )
    return result.session


async def test_a_deferred_session_hands_its_agent_the_whole_list_on_first_use(tmp_path: Path) -> None:
    path = _fixture(tmp_path / "fixture.jsonl")
    faux = FauxProvider(models=[{"id": "faux-1"}])
    eager = await _session(tmp_path, path, defer=False, faux=faux)
    deferred = await _session(tmp_path, path, defer=True, faux=faux)
    pending = deferred.deferred_messages
    assert pending is not None and not pending.complete
    # Model, level and run state come without the messages.
    assert deferred.model is not None and deferred.thinking_level == eager.thinking_level
    assert not deferred.is_streaming
    assert deferred.deferred_messages is pending
    assert deferred.agent.state.messages == eager.agent.state.messages
    assert deferred.deferred_messages is None
    assert deferred.messages == eager.messages
    assert not any(isinstance(m, SystemMessage) for m in deferred.messages)


async def test_slices_complete_the_list_and_a_prompt_runs_on_it(tmp_path: Path) -> None:
    path = _long_session(tmp_path, 300)
    faux = FauxProvider(models=[{"id": "faux-1"}])
    eager = await _session(tmp_path, path, defer=False, faux=faux)
    expected = eager.messages
    eager.session_manager.close()
    session = await _session(tmp_path, path, defer=True, faux=faux)
    steps = 0
    while not session.load_messages_step(100):
        steps += 1
        assert session.deferred_messages is not None
    assert steps >= 5
    assert session.deferred_messages is None
    assert session.messages == expected
    assert session.load_messages_step(100)  # nothing left: at once
    faux.set_responses([faux_assistant_message("fine")])
    await session.prompt("one more")
    roles = [m.role for m in session.messages]
    assert session.messages[: len(expected)] == expected
    assert roles[len(expected) :] == ["user", "assistant"]


async def test_a_prompt_before_any_slice_sees_every_message(tmp_path: Path) -> None:
    path = _long_session(tmp_path, 300)
    faux = FauxProvider(models=[{"id": "faux-1"}])
    session = await _session(tmp_path, path, defer=True, faux=faux)
    pending = session.deferred_messages
    assert pending is not None
    assert pending.tail(2)[0].role == "user"  # a host showed the newest messages
    faux.set_responses([faux_assistant_message("fine")])
    await session.prompt("one more")
    assert len(session.messages) == 602
    assert [m.role for m in session.messages[-3:]] == ["assistant", "user", "assistant"]
    assert session.messages[0] == UserMessage(content="question 0", timestamp=1)


async def test_replacing_a_deferred_session_does_not_finish_its_messages(tmp_path: Path) -> None:
    path = _long_session(tmp_path, 300)
    faux = FauxProvider(models=[{"id": "faux-1"}])
    session = await _session(tmp_path, path, defer=True, faux=faux)
    pending = session.deferred_messages
    assert pending is not None
    runtime = AgentSessionRuntime(
        CreateAgentSessionResult(session=session, defer_messages=True)  # as the app's startup builds it
    )
    await runtime.new_session()
    assert runtime.session is not session
    assert not pending.complete  # the old session's tools were read without projecting its messages
    assert runtime.session.deferred_messages is not None  # the replacement is deferred like the first
    assert runtime.session.messages == []
    await runtime.dispose()
