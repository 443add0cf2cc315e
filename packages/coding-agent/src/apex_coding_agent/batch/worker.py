"""Running one batch task from start to end, in whichever process an engine gives it.

The steps: a fresh copy of the repository (`workspace`), the `setup` command, a headless session built through
the SDK with the copy as its project root and its session file in the task's output folder, the run (through
print mode's JSON path, so the result envelope is the one `-p --mode json` writes), the `check` command, the
diff, and the task's record. The time limit covers all of it; the shared `Control` is polled for a stop
(Ctrl+C of the batch), told what each reply cost, and asked before each model request (the rate limiter).

A task's output folder (`DIR/tasks/<id>/`) holds `session.jsonl`, `result.json`, `diff.patch`, `setup.log`,
`check.log`, `run.log` (the run's stderr) and `task.json` (its record, also a line of `summary.jsonl`).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from apex_coding_agent.batch.records import SandboxKind, TaskRecord, TaskStatus, write_json_atomic
from apex_coding_agent.batch.sandbox import die_with_parent
from apex_coding_agent.batch.tasks import BatchTask
from apex_coding_agent.batch.workspace import (
    CopyError,
    TaskCopy,
    prepare_copy,
    private_temp_dir,
    remove_copy,
    write_diff,
)

_POLL_SECONDS = 0.1


class Control(Protocol):
    """What a worker needs of the batch's shared `BatchControl` (a proxy of it, in another process)."""

    def stopped(self) -> bool: ...

    def add_cost(self, amount: float) -> None: ...

    def reserve(self, provider: str) -> float: ...

    def throttled(self, provider: str, retry_after: float | None) -> None: ...

    def succeeded(self, provider: str) -> None: ...


@dataclass(frozen=True)
class TaskJob:
    """Everything a worker needs to run one task; plain values, so it pickles into any process."""

    task: BatchTask
    out_dir: str
    """The task's output folder."""
    work_dir: str
    """Where the copy is made."""
    cache_dir: str
    """Where mirrors of repository URLs are kept, shared by the batch's tasks."""
    batch_dir: str
    """The batch's output folder (never copied into a copy)."""
    agent_dir: str
    time_limit: float | None = None
    keep_copy: bool = False
    engine_removes_copy: bool = False
    """The engine deletes the copy once the task's process is gone (off the task's own time); else the task does."""
    sandbox: bool = False
    """Restrict the process's writes to the task's own folders once setup has run (`sandbox.restrict_writes`).
    Irreversible: only for a process that ends with the task."""


class _Stopper:
    """Decides when a task must stop: the batch was stopped, or its time ran out."""

    def __init__(self, control: Control, time_limit: float | None) -> None:
        self.control = control
        self.deadline = time.monotonic() + time_limit if time_limit else None
        self.why: TaskStatus | None = None

    def check(self) -> TaskStatus | None:
        if self.why is None:
            if self.control.stopped():
                self.why = "aborted"
            elif self.deadline is not None and time.monotonic() >= self.deadline:
                self.why = "timeout"
        return self.why

    async def wait(self) -> TaskStatus:
        while self.check() is None:
            await asyncio.sleep(_POLL_SECONDS)
        assert self.why is not None
        return self.why


async def _shell(command: str, cwd: Path, log: Path, stopper: _Stopper, task_id: str) -> int | None:
    """Run `command` with bash in `cwd`, output to `log`; its exit code, or None when the task had to stop
    first. Whatever it started and left running (`server &`) is killed when it ends, as the bash tool does; the
    shell itself is killed if the task's process dies first."""
    env = {**os.environ, "APEX_CODE_BATCH_TASK_ID": task_id}
    with log.open("wb") as out:
        process = await asyncio.create_subprocess_exec(
            "bash", "-c", command, cwd=cwd, stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out,
            env=env, start_new_session=True, preexec_fn=die_with_parent,
        )  # fmt: skip
        waiting = asyncio.ensure_future(process.wait())
        stopping = asyncio.ensure_future(stopper.wait())
        await asyncio.wait({waiting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopped = not waiting.done()
        stopping.cancel()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        code = await waiting
        return None if stopped else code


class _LastLine(io.StringIO):
    """A stream that keeps only the last line written: print mode's JSON output minus the events (the session
    file has those), leaving the result envelope."""

    def __init__(self) -> None:
        super().__init__()
        self.last = ""

    def write(self, text: str) -> int:
        if text.strip():
            self.last = text.strip().splitlines()[-1]
        return len(text)


def _retry_after(headers: dict[str, str]) -> float | None:
    for name, value in headers.items():
        if name.lower() == "retry-after":
            try:
                return float(value)
            except ValueError:
                return None
    return None


def _rate_limit_extension(control: Control, provider: Callable[[], str | None]) -> Callable[[Any], None]:
    """An inline extension: ask the shared limiter before each model request, report each answer to it."""

    def factory(api: Any) -> None:  # Any: the ExtensionAPI handed to factories
        async def before(event: Any, ctx: Any) -> None:  # Any: extension event and context
            name = provider()
            if name is None:
                return
            while (wait := control.reserve(name)) > 0:
                await asyncio.sleep(min(wait, 1.0))

        def after(event: Any, ctx: Any) -> None:  # Any: extension event and context
            name = provider()
            if name is None:
                return
            if event.status == 429:
                control.throttled(name, _retry_after(event.headers))
            elif 200 <= event.status < 300:
                control.succeeded(name)

        api.on("before_provider_request", before)
        api.on("after_provider_response", after)

    return factory


def _failure_reason(session: Any, last_end: Any) -> str | None:  # Any: AgentSession, agent_end event
    from apex_ai.types import AssistantMessage

    budget = getattr(last_end, "budget", None)
    if budget is not None:
        return f"run budget exhausted: {budget.limit}"
    for message in reversed(session.messages):
        if isinstance(message, AssistantMessage):
            return message.error_message if message.stop_reason in ("error", "aborted") else None
    return None


async def _load_extensions(
    job: TaskJob, cwd: str, settings: Any, inline: Any, warn: Callable[[str], None]
) -> tuple[Any, bool, Any]:  # Any: SettingsManager, InlineExtension; the StartupExtensions and the resource loader
    """The extensions and resources of the task's session, by the rules of `-p`: the agent folder's extensions and
    packages always, the project's (the copy's) only when the project is trusted (never by a saved answer: the
    copy's path is new; by `defaultProjectTrust`, a `project_trust` handler, or having nothing that needs
    trust). Returns (startup, trusted, resource loader); a load error is raised as `RuntimeError`."""
    from apex_coding_agent.resources import ResourceFlags, ResourceLoader
    from apex_coding_agent.runtime.extension_startup import (
        decide_project_trust,
        discover_startup_resources,
        load_project_extensions,
        load_startup_extensions,
    )

    startup = await load_startup_extensions(
        cwd=cwd, agent_dir=job.agent_dir, settings=settings, inline=[inline], mode="print"
    )
    for warning in startup.warnings:
        warn(f"Warning: {warning}")
    decision = await decide_project_trust(
        startup.runner, cwd, job.agent_dir, approve=None, default_trust=settings.get("defaultProjectTrust"), warn=warn
    )
    settings.set_project_trusted(decision.trusted)
    packages = await load_project_extensions(
        startup, cwd=cwd, agent_dir=job.agent_dir, settings=settings, project_trusted=decision.trusted
    )
    for warning in packages.warnings:
        if warning not in startup.warnings:
            warn(f"Warning: {warning}")
    for diagnostic in startup.diagnostics:
        warn(f"Warning: {diagnostic.message} ({diagnostic.path})")
    if startup.errors:
        raise RuntimeError("; ".join(error.message() for error in startup.errors))
    discovered = await discover_startup_resources(startup.runner, cwd)
    loader = ResourceLoader(
        cwd,
        job.agent_dir,
        settings,
        project_trusted=decision.trusted,
        flags=ResourceFlags(),
        package_skills=[*packages.loader_resources("skills"), *discovered.skills],
        package_prompts=[*packages.loader_resources("prompts"), *discovered.prompts],
    )
    return startup, decision.trusted, loader


async def _run_session(job: TaskJob, copy: TaskCopy, out: Path, stopper: _Stopper, record: TaskRecord) -> None:
    """Build the task's session through the SDK and run its prompt; fills `record`."""
    from apex_agent.types import RunBudget
    from apex_coding_agent.cli.models import ModelArgumentError, resolve_model
    from apex_coding_agent.core.model_runtime import ModelRuntime
    from apex_coding_agent.core.permissions import PermissionGate, PermissionRule
    from apex_coding_agent.core.settings import SettingsManager
    from apex_coding_agent.extensions.loader import InlineExtension
    from apex_coding_agent.modes.print_mode import run_print_mode
    from apex_coding_agent.runtime import AgentSessionRuntime, create_agent_session
    from apex_coding_agent.session.session_manager import SessionManager

    task = job.task
    cwd = str(copy.path)
    settings = SettingsManager.create(cwd, job.agent_dir, project_trusted=False)
    # The copy goes with the task and `diff.patch` records what it changed; file checkpoints would only spend time
    # on every command and write a store in the agent folder, which a sandboxed task may not write.
    settings.apply_overrides({"checkpoints": {"enabled": False}})
    models = ModelRuntime.create(job.agent_dir)
    holder: list[Any] = []  # Any: the AgentSession, once built

    def provider() -> str | None:
        model = holder[0].model if holder else None
        return model.provider if model is not None else None

    limiter = InlineExtension(_rate_limit_extension(stopper.control, provider), name="batch-rate-limit")
    with (out / "run.log").open("a", encoding="utf-8") as log:
        try:
            startup, trusted, loader = await _load_extensions(
                job, cwd, settings, limiter, lambda line: print(line, file=log)
            )
        except RuntimeError as exc:
            record.status, record.reason = "error", f"extensions failed to load: {exc}"
            return
    startup.runner.flush_providers(models)  # a task's model may come from an extension's provider
    try:
        choice = resolve_model(models, None, task.model) if task.model else None
    except ModelArgumentError as exc:
        record.status, record.reason = "error", str(exc)
        return
    gate = PermissionGate.load(cwd, job.agent_dir, flag_mode=task.permission_mode, project_trusted=trusted)
    # The copy is the project root and nothing may be written outside it, whatever the mode: policy rules win
    # over every other source, `bypassPermissions` included. A path outside the project is judged by its
    # absolute spelling, which `/**` matches (links are followed to where they really lead).
    for tool in ("write", "edit"):
        gate.add_rule(PermissionRule(tool, "deny", "/**"), "policy")
    session_manager = SessionManager.open(out / "session.jsonl", cwd_override=cwd)
    result = await create_agent_session(
        cwd=cwd,
        agent_dir=job.agent_dir,
        model=choice.model if choice is not None else None,
        thinking_level=task.thinking or (choice.thinking if choice is not None else None),
        session_manager=session_manager,
        settings_manager=settings,
        model_runtime=models,
        permission_gate=gate,
        run_budget=RunBudget.model_validate(task.run_budget.to_wire()) if task.run_budget is not None else None,
        project_trusted=trusted,
        resource_loader=loader,
        extension_runner=startup.runner,
    )
    runtime = AgentSessionRuntime(result)
    session = runtime.session
    holder.append(session)
    model = session.model
    record.model = f"{model.provider}/{model.id}" if model is not None else None
    last_end: list[Any] = []  # Any: the last agent_end event that is not followed by a retry

    def on_event(event: Any) -> None:  # Any: any session event
        if event.type == "message_end" and getattr(event.message, "role", None) == "assistant":
            stopper.control.add_cost(event.message.usage.cost.total)
        elif event.type == "agent_end" and not getattr(event, "will_retry", False):
            last_end[:] = [event]

    unsubscribe = session.subscribe(on_event)
    envelope = _LastLine()
    try:
        if model is None:
            record.status, record.reason = "error", "no model available (give `model`, or configure one)"
            return
        with (out / "run.log").open("a", encoding="utf-8") as err:
            running = asyncio.ensure_future(run_print_mode(runtime, "json", task.prompt, stdout=envelope, stderr=err))
            stopping = asyncio.ensure_future(stopper.wait())
            await asyncio.wait({running, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if not running.done():
                await session.abort()
            await running
            stopping.cancel()
        result_line: dict[str, Any] = json.loads(envelope.last) if envelope.last else {}
        write_json_atomic(out / "result.json", result_line)
        status = result_line.get("status", "error")
        record.status = stopper.why or status
        if record.status != "completed" and stopper.why is None:
            record.reason = _failure_reason(session, last_end[0] if last_end else None)
        stats = session.get_session_stats()
        record.usage = stats.tokens
        record.cost = stats.cost
        record.turns = stats.assistant_messages
    finally:
        unsubscribe()
        await runtime.dispose()


def _enter_sandbox(copy: TaskCopy, out: Path) -> SandboxKind:
    """Restrict this process's writes to the copy, its baseline, the output folder and a private temporary folder
    (`TMPDIR` from now on); "none" where the kernel cannot."""
    from apex_coding_agent.batch.sandbox import SANDBOX_VARIABLE, restrict_writes

    if os.environ.get(SANDBOX_VARIABLE) == "off":
        return "none"
    temp = private_temp_dir(copy.path)
    temp.mkdir(exist_ok=True)
    os.environ["TMPDIR"] = str(temp)
    tempfile.tempdir = str(temp)  # `gettempdir` may already have been asked (the fork server's warm-up did)
    writable = [copy.path, out, temp, *([copy.git_dir] if copy.git_dir is not None else [])]
    return "landlock" if restrict_writes(str(path) for path in writable) else "none"


async def _run_task(job: TaskJob, control: Control) -> TaskRecord:
    task = job.task
    out = Path(job.out_dir)
    started = time.monotonic()
    record = TaskRecord(id=task.id, status="error", output_dir=str(out))
    stopper = _Stopper(control, job.time_limit)
    if out.exists():
        shutil.rmtree(out)  # an earlier attempt that did not finish: start again from nothing
    out.mkdir(parents=True)
    dest = Path(job.work_dir)
    copy: TaskCopy | None = None
    try:
        copy = await asyncio.to_thread(prepare_copy, task, dest, Path(job.cache_dir), Path(job.batch_dir))
        setup_ok = True
        if task.setup:
            code = await _shell(task.setup, copy.path, out / "setup.log", stopper, task.id)
            if code != 0:
                setup_ok = False
                record.status = stopper.why or "error"
                record.reason = (
                    f"setup exited {code}" if code is not None else f"stopped during setup ({record.status})"
                )
        if job.sandbox:
            record.sandbox = _enter_sandbox(copy, out)
        if setup_ok and stopper.check() is None:
            await _run_session(job, copy, out, stopper, record)
        elif setup_ok:
            record.status = stopper.why or "aborted"
        if task.check and setup_ok and record.status not in ("aborted", "timeout"):
            record.check_exit_code = await _shell(task.check, copy.path, out / "check.log", stopper, task.id)
            if record.check_exit_code is None:
                record.status = stopper.why or "aborted"
        record.files_changed = await asyncio.to_thread(write_diff, copy, out / "diff.patch")
    except CopyError as exc:
        record.status, record.reason = "error", str(exc)
    except Exception as exc:  # the task failed, not the batch: its record says why
        record.status, record.reason = "error", f"{type(exc).__name__}: {exc}"
    finally:
        if copy is not None and not job.keep_copy and not job.engine_removes_copy:
            await asyncio.to_thread(remove_copy, dest)
    if record.status == "timeout" and record.reason is None:
        record.reason = f"time limit of {job.time_limit:g}s reached"
    elif record.status == "aborted" and record.reason is None:
        record.reason = "the batch was stopped"
    record.duration_ms = int((time.monotonic() - started) * 1000)
    write_json_atomic(out / "task.json", record.to_wire())
    return record


def run_task(job: TaskJob, control: Control) -> TaskRecord:
    """Run one task to its end in this process (its own event loop) and return its record; never raises for a
    failure of the task itself."""
    return asyncio.run(_run_task(job, control))


__all__ = ["Control", "TaskJob", "run_task"]
