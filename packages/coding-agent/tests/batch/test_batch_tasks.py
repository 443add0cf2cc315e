"""The task file: what a line may hold, and every problem reported with its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from apex_coding_agent.batch import TaskDefaults, TaskFileError, load_tasks, parse_tasks

PLAN = TaskDefaults(permission_mode="plan")


def _problems(text: str, base: Path, defaults: TaskDefaults = PLAN) -> list[str]:
    with pytest.raises(TaskFileError) as caught:
        parse_tasks(text, defaults, base, "t.jsonl")
    return caught.value.problems


def test_defaults_fill_what_a_line_leaves_out_and_relative_repos_start_at_the_file(tmp_path: Path) -> None:
    (tmp_path / "sub" / "repo").mkdir(parents=True)
    defaults = TaskDefaults(model="local/m", thinking="low", permission_mode="plan")
    text = "\n".join(
        [
            "# a comment, then a blank line",
            "",
            '{"id": "a", "prompt": "p", "repo": "repo"}',
            '{"id": "b", "prompt": "p", "repo": "git@example.org:x/y.git", "model": "other", "permissionMode": "dontAsk"}',
            '{"id": "c", "prompt": "p", "repo": "https://example.org/z.git", "ref": "v1", "timeLimit": 1.5,'
            ' "runBudget": {"maxTurns": 3}, "thinking": null}',
        ]
    )
    (tmp_path / "sub" / "tasks.jsonl").write_text(text)
    a, b, c = load_tasks(tmp_path / "sub" / "tasks.jsonl", defaults)
    assert (a.repo, a.model, a.thinking, a.permission_mode) == (
        str(tmp_path / "sub" / "repo"),
        "local/m",
        "low",
        "plan",
    )
    assert (b.repo, b.repo_is_url, b.model, b.permission_mode) == ("git@example.org:x/y.git", True, "other", "dontAsk")
    assert c.repo_is_url and c.ref == "v1" and c.time_limit == 1.5 and c.thinking == "low"
    assert c.run_budget is not None and c.run_budget.max_turns == 3


def test_every_problem_of_every_line_is_reported(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    lines = [
        "[1, 2]",
        '{"id": "", "prompt": " ", "repo": "repo"}',
        '{"id": "x", "prompt": "p", "repo": "repo", "runBudget": {"maxTurn": 3}, "timeLimit": 0}',
        '{"id": "y", "prompt": 5, "repo": "repo", "thinking": "extreme"}',
        '{"prompt": "p"}',
    ]
    assert _problems("\n".join(lines), tmp_path) == [
        "t.jsonl:1: a task is a JSON object, got list",
        "t.jsonl:2: 'id' must not be empty",
        "t.jsonl:2: 'prompt' must not be empty",
        "t.jsonl:3: unknown key 'runBudget.maxTurn'",
        "t.jsonl:3: timeLimit: Input should be greater than 0",
        "t.jsonl:4: prompt: Input should be a valid string",
        "t.jsonl:4: thinking: Input should be 'off', 'minimal', 'low', 'medium', 'high', 'xhigh' or 'max'",
        "t.jsonl:5: 'id' is required",
        "t.jsonl:5: 'repo' is required",
    ]


def test_an_empty_or_unreadable_file_is_an_error(tmp_path: Path) -> None:
    assert _problems("\n# only a comment\n", tmp_path) == ["t.jsonl: no tasks"]
    with pytest.raises(TaskFileError) as caught:
        load_tasks(tmp_path / "missing.jsonl", PLAN)
    assert caught.value.problems[0].startswith(f"{tmp_path / 'missing.jsonl'}: cannot read")
