"""Installing, updating and removing packages on disk.

| Source | user scope | project scope | temporary (`-e`) |
|---|---|---|---|
| pypi | `<agentDir>/pypi/<name>/` | `<cwd>/.apex-code/pypi/<name>/` | `<agentDir>/tmp/extensions/pypi/<sha8>/` |
| git | `<agentDir>/git/<host>/<path>/` | `<cwd>/.apex-code/git/<host>/<path>/` | `<agentDir>/tmp/extensions/git/<sha8>/` |
| local | the path itself (never copied) | same | same |

PyPI packages get one `--target` directory each so their files cannot collide; the directory is put on `sys.path`
when loading. A pip install goes to a sibling temporary directory first and replaces the old one only on success.
Git installs clone, then check out the ref; whenever the checkout moves (new ref, update) the work tree is reset and
cleaned, and the package's own `[project].dependencies` are installed with pip into `<clone>/.apex-deps`.

The pip program is the `pipCommand` setting when set; otherwise `default_pip_command()` picks `python -m pip` when
pip is importable in the running interpreter, else `uv pip` aimed at that interpreter (a uv-made venv has no pip).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

from apex_coding_agent.package_manager.sources import (
    GitSource,
    LocalSource,
    ParsedSource,
    PypiSource,
    UnsupportedSource,
)

Scope: TypeAlias = Literal["user", "project", "temporary"]
DEPS_DIR = ".apex-deps"
PROJECT_DIR = ".apex-code"


class InstallError(RuntimeError):
    """An install, update or removal failed; the message is meant for the user."""


@dataclass(frozen=True)
class PipCommand:
    """A pip-compatible program: runs as `[*argv, "install", *install_options, <our arguments>...]`.

    `install_options` exist because `uv pip` takes `--python` only after the `install` subcommand.
    """

    argv: tuple[str, ...]
    install_options: tuple[str, ...] = ()

    def install_argv(self, *args: str) -> list[str]:
        return [*self.argv, "install", *self.install_options, *args]


def select_pip_command(python: str, *, pip_importable: bool, uv: str | None) -> PipCommand:
    """The default pip program given what this machine has (see `default_pip_command`).

    Raises `InstallError` naming both ways out (pip or uv) and the `pipCommand` setting when neither is there.
    """
    if pip_importable:
        return PipCommand((python, "-m", "pip"))
    if uv is not None:
        # `--python` makes uv resolve for the interpreter that will import the packages, not whatever it finds.
        return PipCommand((uv, "pip"), ("--python", python))
    raise InstallError(
        f"Cannot install Python packages: pip is not importable in {python} and uv is not on PATH. "
        f"Install pip into that interpreter ({python} -m ensurepip), install uv, "
        'or set the "pipCommand" setting to a pip-compatible argv (for example ["uv", "pip"]).'
    )


def default_pip_command() -> PipCommand:
    """`python -m pip` when pip is importable here, else `uv pip install --python <this python>`, else an error."""
    pip_importable = importlib.util.find_spec("pip") is not None
    return select_pip_command(sys.executable, pip_importable=pip_importable, uv=shutil.which("uv"))


def pip_command_from(value: object) -> list[str]:
    """The `pipCommand` setting when it is a non-empty list of strings, else `[]` (the `Installer` then picks
    `default_pip_command()` when it first needs pip, so a machine without pip only fails when installing)."""
    if isinstance(value, list) and value and all(isinstance(part, str) for part in value):
        return [str(part) for part in value]
    return []


@dataclass(frozen=True)
class Installer:
    """Where packages of each scope live and how to put them there."""

    agent_dir: Path
    cwd: Path
    pip_command: tuple[str, ...] | PipCommand = ()
    """The `pipCommand` setting as a tuple, or a ready `PipCommand`; empty = `default_pip_command()` when needed."""

    def _pip(self) -> PipCommand:
        if isinstance(self.pip_command, PipCommand):
            return self.pip_command
        return PipCommand(self.pip_command) if self.pip_command else default_pip_command()

    # ------------------------------------------------------------------ locations

    def scope_root(self, scope: Scope) -> Path:
        return self.cwd / PROJECT_DIR if scope == "project" else self.agent_dir

    def install_path(self, source: ParsedSource, scope: Scope) -> Path | None:
        """Where `source` lives for `scope` (None for unsupported sources)."""
        if isinstance(source, LocalSource):
            return source.path
        if isinstance(source, UnsupportedSource):
            return None
        if scope == "temporary":
            digest = hashlib.sha256(source.identity.encode()).hexdigest()[:8]
            prefix = "pypi" if isinstance(source, PypiSource) else "git"
            return self.agent_dir / "tmp" / "extensions" / prefix / digest
        if isinstance(source, PypiSource):
            return self.scope_root(scope) / "pypi" / source.name
        host = source.host.replace(":", "_")
        return self.scope_root(scope) / "git" / host / Path(*source.path.split("/"))

    def is_installed(self, source: ParsedSource, scope: Scope) -> bool:
        path = self.install_path(source, scope)
        if path is None:
            return False
        if isinstance(source, GitSource):
            return (path / ".git").exists()
        return path.exists()

    # ------------------------------------------------------------------ operations

    def install(self, source: ParsedSource, scope: Scope) -> Path:
        """Make `source` present for `scope`; returns its path.

        PyPI: installs the requirement (replacing what was there). Git: clones when missing, then reconciles the
        checkout to the ref. Local: only checks that the path exists.
        """
        path = self.install_path(source, scope)
        if isinstance(source, UnsupportedSource) or path is None:
            raise InstallError(f"Unsupported package source {source.raw}: {getattr(source, 'reason', '')}".rstrip(": "))
        if isinstance(source, LocalSource):
            if not path.exists():
                raise InstallError(f"Path does not exist: {path}")
            return path
        if isinstance(source, PypiSource):
            # Always (re)install: the requirement may name another version than the one on disk.
            self._pip_install_into(path, [source.requirement])
            return path
        self._ensure_git(source, path)
        return path

    def update(self, source: ParsedSource, scope: Scope) -> bool:
        """Bring an unpinned package to its newest version; returns False when there is nothing to update.

        A pinned git source is reconciled to its ref (a changed ref in settings takes effect here too).
        """
        path = self.install_path(source, scope)
        if path is None or isinstance(source, LocalSource | UnsupportedSource):
            return False
        if isinstance(source, PypiSource):
            if source.pinned and path.exists():
                return False
            self._pip_install_into(path, [source.requirement], upgrade=True)
            return True
        if source.pinned or not (path / ".git").exists():
            self._ensure_git(source, path)
            return not source.pinned
        self._git(["fetch", "--quiet", "--tags", "origin"], path)
        target = self._rev_parse(path, "@{upstream}") or self._rev_parse(path, "origin/HEAD")
        if target is None:
            raise InstallError(f"Cannot update {source.raw}: no upstream branch")
        if target != self._rev_parse(path, "HEAD"):
            self._move_checkout(path, target)
            self._install_git_deps(path)
        return True

    def remove(self, source: ParsedSource, scope: Scope) -> None:
        """Delete what `install` created (local paths are never touched)."""
        path = self.install_path(source, scope)
        if path is None or isinstance(source, LocalSource):
            return
        if path.exists():
            shutil.rmtree(path)
        # Drop now-empty `git/<host>/<user>` parents so the tree does not fill with empty dirs.
        stop = self.scope_root(scope) if scope != "temporary" else self.agent_dir
        parent = path.parent
        while parent != stop and stop in parent.parents:
            try:
                parent.rmdir()
            except OSError:
                break
            parent = parent.parent

    # ------------------------------------------------------------------ pip

    def _pip_install_into(self, target: Path, requirements: Sequence[str], *, upgrade: bool = False) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        if staging.exists():
            shutil.rmtree(staging)
        args = ["--target", str(staging)]
        if upgrade:
            args.append("--upgrade")
        try:
            _run(self._pip().install_argv(*args, *requirements), None, "pip install")
        except InstallError:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)

    # ------------------------------------------------------------------ git

    def _git(self, args: list[str], cwd: Path | None) -> str:
        return _run(["git", *args], cwd, f"git {args[0]}")

    def _rev_parse(self, repo: Path, ref: str) -> str | None:
        try:
            return self._git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], repo).strip() or None
        except InstallError:
            return None

    def _resolve_ref(self, repo: Path, ref: str) -> str:
        for candidate in (ref, f"origin/{ref}"):
            commit = self._rev_parse(repo, candidate)
            if commit is not None:
                return commit
        # The ref may be newer than the clone (a new tag or commit): fetch once, then look again.
        self._git(["fetch", "--quiet", "--tags", "origin"], repo)
        for candidate in (ref, f"origin/{ref}"):
            commit = self._rev_parse(repo, candidate)
            if commit is not None:
                return commit
        raise InstallError(f"Unknown git ref {ref!r} in {repo}")

    def _move_checkout(self, repo: Path, commit: str) -> None:
        self._git(["checkout", "--quiet", "--force", "--detach", commit], repo)
        self._git(["reset", "--quiet", "--hard", commit], repo)
        self._git(["clean", "-fdxq"], repo)

    def _ensure_git(self, source: GitSource, path: Path) -> None:
        changed = False
        if not (path / ".git").exists():
            if path.exists():
                shutil.rmtree(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._git(["clone", "--quiet", source.clone_url, str(path)], None)
            except InstallError:
                shutil.rmtree(path, ignore_errors=True)
                raise
            changed = True
        if source.ref is not None:
            target = self._resolve_ref(path, source.ref)
            if target != self._rev_parse(path, "HEAD"):
                self._move_checkout(path, target)
                changed = True
        if changed:
            self._install_git_deps(path)

    def _install_git_deps(self, clone: Path) -> None:
        deps = project_dependencies(clone)
        deps_dir = clone / DEPS_DIR
        if deps_dir.exists():
            shutil.rmtree(deps_dir)
        if deps:
            self._pip_install_into(deps_dir, deps)


def project_dependencies(root: Path) -> list[str]:
    """`[project].dependencies` of `<root>/pyproject.toml` (empty when absent or unreadable)."""
    import tomllib  # only installs read dependencies: a run that resolves no package never loads the parser

    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    project = data.get("project")
    deps = project.get("dependencies") if isinstance(project, dict) else None
    return [dep for dep in deps if isinstance(dep, str)] if isinstance(deps, list) else []


def _run(argv: list[str], cwd: Path | None, what: str) -> str:
    env = dict(os.environ)
    env["GIT_TERMINAL_PROMPT"] = "0"  # a private repo must fail, not hang waiting for a password
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise InstallError(f"{what} failed: cannot run {argv[0]}: {exc.strerror or exc}") from exc
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip()
        raise InstallError(f"{what} failed (exit {done.returncode}){': ' + detail if detail else ''}")
    return done.stdout


__all__ = [
    "DEPS_DIR",
    "InstallError",
    "Installer",
    "PipCommand",
    "Scope",
    "default_pip_command",
    "pip_command_from",
    "select_pip_command",
]
