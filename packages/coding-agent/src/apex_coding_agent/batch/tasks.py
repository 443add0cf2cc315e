"""The task file of `apex-code batch`: one JSON object per line, validated before anything runs.

A line is `{"id", "prompt", "repo", "ref"?, "model"?, "thinking"?, "permissionMode"?, "runBudget"?, "setup"?,
"check"?, "timeLimit"?}`. Flags give the defaults of `model`, `thinking` and `permissionMode`; after them `permissionMode` must
be known, as for `-p`. Every problem of every line is collected and reported as `FILE:LINE: message`, so one
pass over the file shows all of them and nothing runs until the file is right.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from apex_agent.types import RunBudget
from apex_ai._wire import to_camel
from apex_ai.types import ModelThinkingLevel
from apex_coding_agent.core.permissions import PermissionMode

_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")
"""Task ids name their output folder: letters, digits, `.`, `_`, `-`, never a path."""
_URL: Final = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|[^/@:]+@[^/:]+:)", re.IGNORECASE)
"""`scheme://...` or scp-like `user@host:path`: a repository to clone rather than a folder on this machine."""
_BUDGET_KEYS: Final = frozenset(RunBudget.model_fields) | {to_camel(k) for k in RunBudget.model_fields}


class BatchTask(BaseModel):
    """One task after defaults were applied; `repo` is an absolute path or a URL."""

    model_config = ConfigDict(
        alias_generator=to_camel, validate_by_name=True, serialize_by_alias=True, extra="forbid", frozen=True
    )

    id: str
    prompt: str
    repo: str
    ref: str | None = None
    model: str | None = None
    thinking: ModelThinkingLevel | None = None
    permission_mode: PermissionMode | None = None
    run_budget: RunBudget | None = None
    setup: str | None = None
    check: str | None = None
    time_limit: float | None = Field(default=None, gt=0)
    """Seconds for this task (setup, run and check), instead of `--time-limit`."""

    @property
    def repo_is_url(self) -> bool:
        return bool(_URL.match(self.repo))


@dataclass(frozen=True)
class TaskDefaults:
    """Values of the flags that a task line may leave out."""

    model: str | None = None
    thinking: ModelThinkingLevel | None = None
    permission_mode: PermissionMode | None = None


class TaskFileError(Exception):
    """The task file cannot be used; `problems` lists each as `FILE:LINE: message` (or `FILE: message`)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def _describe(error: Mapping[str, Any]) -> str:
    where = ".".join(str(part) for part in error["loc"])
    if error["type"] == "extra_forbidden":
        return f"unknown key {where!r}"
    if error["type"] == "missing":
        return f"{where!r} is required"
    return f"{where}: {error['msg']}"


def _line_problems(data: object, defaults: TaskDefaults, base: Path) -> tuple[BatchTask | None, list[str]]:
    if not isinstance(data, dict):
        return None, [f"a task is a JSON object, got {type(data).__name__}"]
    problems: list[str] = []
    budget = data.get("runBudget")
    if isinstance(budget, dict):
        problems.extend(f"unknown key 'runBudget.{key}'" for key in budget if key not in _BUDGET_KEYS)
    problems.extend(
        f"{key!r} must not be empty"
        for key in ("id", "prompt", "repo")
        if isinstance(data.get(key), str) and not data[key].strip()
    )
    task_id, repo = data.get("id"), data.get("repo")
    if isinstance(task_id, str) and task_id.strip() and not _ID.match(task_id):
        problems.append(
            f"id {task_id!r} must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    folder: Path | None = None
    if isinstance(repo, str) and repo.strip() and not _URL.match(repo):
        folder = (base / Path(repo).expanduser()).resolve()
        if not folder.is_dir():
            problems.append(f"repo {repo!r} is not a folder ({folder})")
    merged = {
        "model": defaults.model,
        "thinking": defaults.thinking,
        "permissionMode": defaults.permission_mode,
        **{k: v for k, v in data.items() if v is not None},
    }
    try:
        task = BatchTask.model_validate(merged)
    except ValidationError as exc:
        return None, problems + [_describe(error) for error in exc.errors()]
    if task.permission_mode is None:
        problems.append("'permissionMode' is required (in the task or with --permission-mode)")
    if problems:
        return None, problems
    return (task.model_copy(update={"repo": str(folder)}) if folder is not None else task), []


def parse_tasks(text: str, defaults: TaskDefaults, base: Path, name: str = "tasks") -> list[BatchTask]:
    """The tasks of a task file's `text`; raises `TaskFileError` with every problem found.

    Relative `repo` paths are resolved against `base` (the task file's folder). Blank lines and lines starting
    with `#` are skipped.
    """
    tasks: list[BatchTask] = []
    problems: list[str] = []
    first_line: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            problems.append(f"{name}:{number}: not JSON ({exc})")
            continue
        task, found = _line_problems(data, defaults, base)
        problems.extend(f"{name}:{number}: {problem}" for problem in found)
        if task is None:
            continue
        if task.id in first_line:
            problems.append(f"{name}:{number}: id {task.id!r} was already used on line {first_line[task.id]}")
            continue
        first_line[task.id] = number
        tasks.append(task)
    if not tasks and not problems:
        problems.append(f"{name}: no tasks")
    if problems:
        raise TaskFileError(problems)
    return tasks


def load_tasks(path: Path, defaults: TaskDefaults) -> list[BatchTask]:
    """`parse_tasks` of the file at `path`; an unreadable file is a `TaskFileError` too."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFileError([f"{path}: cannot read ({exc})"]) from exc
    return parse_tasks(text, defaults, path.resolve().parent, str(path))


__all__ = ["BatchTask", "TaskDefaults", "TaskFileError", "load_tasks", "parse_tasks"]
